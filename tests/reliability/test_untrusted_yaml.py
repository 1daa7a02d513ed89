"""Issue 41, class 1: YAML from a file is data (`tcdb.collections.files.yaml_input`).

Every YAML file tcdb reads — a collection spec, a run's ir_metadata header or side file, a
literature file — goes through one loader: bounded (bytes, depth, aliases and what they
expand to), plain (no `!!python/…` or other tags), strict (no key twice, no control
characters), typed against the caller's model (the text "false" is not a boolean; unknown keys
refused with the known ones listed). Each family of hostile YAML is tried on each surface,
through the real CLI on both databases: exit 1, one line `error: FILE:LINE: reason`, no
traceback, every table as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.refusals import (
    READERS,
    World,
    assert_accepted,
    assert_refused,
    write,
)

# A "billion laughs": nine lists of nine aliases, seven deep (4.8 million values, 300 bytes).
BOMB = "".join(
    [f"l0: &l0 [{', '.join(['lol'] * 9)}]\n"]
    + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 8)])
DEEP = "[" * 5000 + "]" * 5000

# Hostile YAML families: (id, a mapping's YAML given one valid key's text, the line the error
# names counted from the document's first line, pieces of the reason).
Family = tuple[str, Callable[[str], str], int, tuple[str, ...]]
FAMILIES: list[Family] = [
    ("alias-bomb", lambda ok: ok + BOMB.replace("l", "x"), 3, ("aliases expand to",
                                                                  "alias bomb")),
    ("alias-loop", lambda ok: ok + "loop: &a [*a]\n", 2, ("alias inside the value it names",)),
    ("python-tag", lambda ok: ok + "x: !!python/object/apply:os.system [\"echo hi\"]\n", 2,
     ("the tag !!python/object/apply:os.system is refused",)),
    ("binary-tag", lambda ok: ok + "x: !!binary aGk=\n", 2, ("the tag !!binary is refused",)),
    ("deep-nesting", lambda ok: ok + f"x: {DEEP}\n", 2, ("nested more than 32 levels",)),
    ("duplicate-key", lambda ok: ok + ok, 2, ("is given twice (first on line",)),
    ("nul-escape", lambda ok: ok + 'x: "a\\0b"\n', 2,
     ("x: a value holds a control character (U+0000)",)),
    ("escape-escape", lambda ok: ok + 'x: "\\e[31mred"\n', 2, ("control character (U+001B)",)),
    ("raw-control", lambda ok: ok + "x: a\x07b\n", 2, ("a control character (U+0007) is not "
                                                       "allowed in YAML",)),
    ("many-aliases", lambda ok: ok + "a: &a x\nb: [" + "*a, " * 101 + "]\n", 3,
     ("more than 100 aliases (*name): refused",)),
]


def _spec(world: World, folder: Path, body: str) -> tuple[list[str], Path, int]:
    return ["collection", "sync", str(write(folder, "spec.yaml", body))], \
        folder / "spec.yaml", 0


def _header(world: World, folder: Path, body: str) -> tuple[list[str], Path, int]:
    """A run file whose ir_metadata header (line 2 on) holds `body`."""
    lines = "".join(f"# {line}\n" for line in body.splitlines())
    run = write(folder, "r9.run", f"# ir_metadata.start\n{lines}# ir_metadata.end\n"
                "q1 Q0 d1 1 1.0 r9\n")
    return READERS["run"](world, run), run, 1


def _side(world: World, folder: Path, body: str) -> tuple[list[str], Path, int]:
    run = write(folder, "r9.run", "q1 Q0 d1 1 1.0 r9\n")
    side = write(folder, "r9.yaml", body)
    return READERS["run"](world, run), side, 0


def _literature(world: World, folder: Path, body: str) -> tuple[list[str], Path, int]:
    path = write(folder, "reported.yaml", body)
    return READERS["literature"](world, path), path, 0


# Each surface: how its file is read, and one valid key of its top level.
SURFACES: dict[str, tuple[Callable[[World, Path, str], tuple[list[str], Path, int]], str]] = {
    "spec": (_spec, "name: hostile\n"),
    "ir_metadata-header": (_header, "tag: r9\n"),
    "ir_metadata-side-file": (_side, "tag: r9\n"),
    "literature": (_literature, "results: []\n"),
}


@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.parametrize("family", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_hostile_yaml_is_refused_in_one_line_on_every_surface(
        surface: str, family: Family, world: World, database_url: str, use_db: str, cli,
        tmp_path: Path) -> None:
    read, ok = SURFACES[surface]
    _id, make, line, reason = family
    argv, path, offset = read(world, tmp_path, make(ok))
    assert_refused(cli, database_url, argv, path, line + offset, *reason)


def test_a_large_yaml_file_is_refused_by_its_size(world: World, database_url: str,
                                                  use_db: str, cli, tmp_path: Path) -> None:
    body = "name: big\ndescription: |\n" + "  x\n" * (1 << 20) + "\n"  # 4 MiB and more
    argv, path, _ = _spec(world, tmp_path, body)
    assert_refused(cli, database_url, argv, path, None,
                   "YAML of 4,194,330 bytes: more than 4,194,304 bytes is refused")


# --- typed values and known keys, per surface's schema ------------------------------------------

SPEC_KEYS = ("name, doc_identity, topic_identity, topic_match, id_fallback, grades, "
             "description, snapshots")
SPEC_CASES = [
    ("misspelt-key", "name: c2\nsnapshot:\n  - {label: a, irds: vaswani}\n", 2,
     f"unknown key 'snapshot' (did you mean 'snapshots'?): the keys here are {SPEC_KEYS}"),
    ("unknown-snapshot-key", "name: c2\nsnapshots:\n  - label: a\n    irds: vaswani\n"
     "    dcos: x\n", 5, "unknown key 'dcos' in snapshots [1] (did you mean 'docs'?): the keys "
     "here are label, date, irds, docs, topics, qrels, source_labels, cocktail"),
    ("quoted-false", 'name: c2\nid_fallback: "false"\n', 2,
     "id_fallback: must be true or false, not the text 'false'"),
    ("number-for-boolean", "name: c2\nid_fallback: 0\n", 2,
     "id_fallback: must be true or false, not the number 0"),
    ("reversed-grades", "name: c2\ngrades: [2, 0]\n", 2,
     "grades: must be [lowest, highest], not [2, 0]"),
    ("grades-past-smallint", "name: c2\ngrades: [0, 40000]\n", 2,
     "grades: must be within [-32768, 32767], not [0, 40000]"),
    ("three-grades", "name: c2\ngrades: [0, 1, 2]\n", 2,
     "grades: must have at most 2 items, not 3"),
    ("list-for-text", "name: c2\ndescription: [1, 2]\n", 2,
     "description: must be text, not a list"),
    ("mapping-for-list", "name: c2\nsnapshots: {label: a}\n", 2,
     "snapshots: must be a list, not a mapping"),
    ("number-for-path", "name: c2\nsnapshots:\n  - {label: a, docs: 5}\n", 3,
     "snapshots [1] → docs: must be a path (text), not 5"),
    ("not-a-mapping", "- name: c2\n", 1, "a collection spec is a mapping"),
]


@pytest.mark.parametrize(("body", "line", "reason"), [c[1:] for c in SPEC_CASES],
                         ids=[c[0] for c in SPEC_CASES])
def test_a_spec_is_typed_and_its_keys_are_known(body: str, line: int, reason: str,
                                                world: World, database_url: str, use_db: str,
                                                cli, tmp_path: Path) -> None:
    argv, path, _ = _spec(world, tmp_path, body)
    assert_refused(cli, database_url, argv, path, line, reason)


LITERATURE_ITEM = ("- publication: A\n  year: 2019\n  model: M\n  category: neural\n"
                   "  role: best\n  metric: AP\n  value: 0.3\n")
LITERATURE_CASES = [
    ("quoted-false", LITERATURE_ITEM + '  cross_validated: "false"\n', 8,
     "item 1 → cross_validated: must be true or false, not the text 'false'"),
    ("quoted-year", LITERATURE_ITEM.replace("2019", '"2019"'), 2,
     "item 1 → year: must be a whole number, not the text '2019'"),
    ("unknown-field", LITERATURE_ITEM + "  venu: SIGIR\n", 8,
     "unknown key 'venu' in item 1 (did you mean 'venue'?): the keys here are publication, "
     "year, venue, model, category, role, metric, value, cross_validated, notes"),
    ("same-field-twice-spelt-apart", LITERATURE_ITEM + "  Value: 0.4\n", 8,
     "item 1: 'Value' is 'value' again"),
]


@pytest.mark.parametrize(("body", "line", "reason"), [c[1:] for c in LITERATURE_CASES],
                         ids=[c[0] for c in LITERATURE_CASES])
def test_a_literature_file_is_typed_and_its_keys_are_known(
        body: str, line: int, reason: str, world: World, database_url: str, use_db: str, cli,
        tmp_path: Path) -> None:
    argv, path, _ = _literature(world, tmp_path, body)
    assert_refused(cli, database_url, argv, path, line, reason)


IR_METADATA_CASES = [
    ("quoted-false", 'tag: r9\nmethod:\n  automatic: "false"\n', 3,
     "method → automatic must be true or false, not 'false'"),
    ("misspelt-field", "tag: r9\nmethod:\n  automatc: true\n", 3,
     "method → automatc: not an ir_metadata field (did you mean 'automatic'?"),
    ("unknown-section", "tag: r9\nplatfrom: {}\n", 2,
     "'platfrom' is not an ir_metadata section"),
]


@pytest.mark.parametrize(("body", "line", "reason"), [c[1:] for c in IR_METADATA_CASES],
                         ids=[c[0] for c in IR_METADATA_CASES])
def test_ir_metadata_is_typed_and_a_misspelt_field_is_named(
        body: str, line: int, reason: str, world: World, database_url: str, use_db: str, cli,
        tmp_path: Path) -> None:
    argv, path, offset = _header(world, tmp_path, body)
    assert_refused(cli, database_url, argv, path, line + offset, reason)


def test_plain_yaml_still_reads(world: World, database_url: str, use_db: str, cli,
                                tmp_path: Path) -> None:
    """The bounds refuse bombs, not YAML people write: numbers and dates as labels (kept as
    written), a quoted date, an anchor used twice and an extension key in ir_metadata."""
    from tcdb.collections.specs.spec import load_spec

    (tmp_path / "d").mkdir()
    spec = write(tmp_path, "spec.yaml", "name: plain\ngrades: [0, 3]\nid_fallback: false\n"
                 "snapshots:\n  - {label: 2022, docs: d}\n"
                 "  - {label: 010, docs: d, date: 2022-06-01}\n"
                 "  - {label: 2023-01-05, docs: d, date: '2023-01-05'}\n")
    loaded = load_spec(spec)
    assert [s.label for s in loaded.snapshots] == ["2022", "010", "2023-01-05"]
    assert str(loaded.snapshots[2].date) == "2023-01-05" and loaded.grade_max == 3
    assert loaded.snapshots[1].docs == tmp_path / "d"
    assert_accepted(cli, ["collection", "sync", str(spec)])
    header = ("tag: r8\nmethod:\n  automatic: true\n  retrieval:\n"
              "  - {name: bm25, params: &s {k1: 0.9, b: 0.4}}\n  - {name: rm3, params: *s}\n")
    lines = "".join(f"# {line}\n" for line in header.splitlines())
    run = write(tmp_path, "r8.run", f"# ir_metadata.start\n{lines}# ir_metadata.end\n"
                "q1 Q0 d1 1 1.0 r8\n")
    assert_accepted(cli, READERS["run"](world, run))


def test_the_loader_refuses_a_bomb_before_building_it(tmp_path: Path) -> None:
    """A bomb is refused from the composed tree (its expanded size counted on shared nodes,
    not built): 8 keys, l0 of 9 texts, each next list 9 aliases of the one before."""
    from tcdb.collections.files.yaml_input import load_yaml
    from tcdb.errors import InputError

    with pytest.raises(InputError) as caught:
        load_yaml(tmp_path / "b.yaml", BOMB)
    assert caught.value.line == 2  # the first alias
    # values: 1 + 8 keys + (10 + 91 + 820 + 7,381 + 66,430 + 597,871 + 5,380,840 + 48,427,561);
    # written: the mapping, 8 keys, 8 lists and 9 texts = 26
    assert caught.value.reason.startswith("aliases expand to 54,481,013 values, 54,480,987 "
                                          "more than written")
