"""ir_metadata (PRIMAD YAML) with a run: read from the run file's header or a side file, checked
(bad YAML is one FILE:LINE error and nothing is imported), kept with the run (queryable:
description, category, platform, group), listed, and written back by `run export` byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import build_snapshot, write_run_file

C, S = "irm", "s1"
DOCS = {f"d{i}": f"document {i} text" for i in range(1, 7)}
TOPICS = {"q1": "first query", "q2": "second query"}
QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d3", 2)]
ROWS = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d3", 1.5), ("q2", "d4", 1.0)]

# repro_eval's header: `# ` before each YAML line and one trailing space it leaves on each
# (kept: the text must come back byte for byte), and a blank line.
_YAML = """\
schema-version: 0.1
tag: bm25-anserini
actor:
  team: ir-lab
  role: experimenter
research goal:
  description: BM25 (k1 0.9, b 0.4) over a Porter-stemmed Lucene index
  venue:
    name: CLEF
    year: 2024
platform:
  hardware:
    cpu:
      number of cores: 16
  software:
    retrieval toolkit:
    - anserini==0.3.0
    - pyserini==0.22.1
implementation:
  source:
    repository: https://github.com/castorini/anserini
    commit: 9548cd6
method:
  automatic: true
  retrieval:
  - name: bm25
    k1: 0.9
    b: 0.4

data:
  test collection:
    name: LongEval
"""
PRIMAD = "".join(f"{line} \n" if line else "\n" for line in _YAML.splitlines())


def _header(yaml_text: str) -> str:
    lines = yaml_text.removesuffix("\n").split("\n")
    return ("# ir_metadata.start\n" + "".join(f"# {line}\n" if line else "#\n"
                                              for line in lines) + "# ir_metadata.end\n")


def _annotated(folder: Path, tag: str, yaml_text: str) -> Path:
    plain = write_run_file(folder / "plain", tag, ROWS)
    path = folder / f"{tag}.run"
    path.write_text(_header(yaml_text) + plain.read_text(encoding="utf-8"), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- reading, no database


def test_header_read_and_written_back_byte_for_byte(tmp_path: Path) -> None:
    from tcdb.collections.ir_metadata.description import header_block, read_header

    path = _annotated(tmp_path, "bm25-anserini", PRIMAD)
    meta = read_header(path)
    assert meta is not None and meta.source == "header"
    assert meta.text == PRIMAD  # the YAML as given, trailing spaces and blank line included
    assert header_block(meta.text) == _header(PRIMAD)
    assert meta.tag == "bm25-anserini"
    assert meta.description == "BM25 (k1 0.9, b 0.4) over a Porter-stemmed Lucene index"
    assert meta.category == "lexical" and meta.team == "ir-lab" and meta.automatic is True
    assert meta.platform == "anserini==0.3.0, pyserini==0.22.1"
    assert meta.data["platform"]["hardware"]["cpu"]["number of cores"] == 16
    json.dumps(meta.to_data())  # what the metadata column keeps is JSON


def test_a_run_without_a_header_has_none(tmp_path: Path) -> None:
    from tcdb.collections.ir_metadata.description import read_header

    assert read_header(write_run_file(tmp_path, "r", ROWS)) is None


@pytest.mark.parametrize(("body", "line", "reason"), [
    ("tag: x\nmethod:\n  automatic: sometimes\n", 4, "method → automatic must be true or false"),
    ("tag: x\nflavour: vanilla\n", 3, "'flavour' is not an ir_metadata section"),
    ("platform:\n  hardware:\n    cpu:\n      number of cores: many\n", 5,
     "number of cores must be an integer"),
    ("method:\n  retrieval: bm25\n", 3, "method → retrieval must be a list of mappings"),
    ("actor:\n  team: a\n  team: b\n", 4, "actor: the key 'team' is given twice (first on line 3)"),
    ("method: [unclosed\n", 3, "not valid YAML"),
    ("method:\n  category: quantum\n", 3, "method → category must be one of lexical"),
])
def test_bad_metadata_is_one_line_naming_file_and_line(tmp_path: Path, body: str, line: int,
                                                        reason: str) -> None:
    from tcdb.collections.ir_metadata.description import read_header
    from tcdb.errors import InputError

    path = _annotated(tmp_path, "x", body)
    with pytest.raises(InputError) as caught:
        read_header(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ") and reason in message
    assert "\n" not in message


def test_a_block_without_its_end_is_refused(tmp_path: Path) -> None:
    from tcdb.collections.ir_metadata.description import read_header
    from tcdb.errors import InputError

    path = tmp_path / "r.run"
    path.write_text("# ir_metadata.start\n# tag: r\nq1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.run:1: ir_metadata\.start without"):
        read_header(path)


def test_side_file_with_or_without_markers(tmp_path: Path) -> None:
    from tcdb.collections.ir_metadata.description import read_side_file, side_files

    run = write_run_file(tmp_path, "r", ROWS)
    side = tmp_path / "r.yaml"
    side.write_text("tag: r\nmethod:\n  category: Neural\n", encoding="utf-8")
    assert side_files(run) == [side]
    meta = read_side_file(side)
    assert meta.category == "neural" and meta.text == side.read_text(encoding="utf-8")
    marked = tmp_path / "m.ir_metadata"
    marked.write_text(_header("tag: r\nactor:\n  team: t\n"), encoding="utf-8")
    assert read_side_file(marked).text == "tag: r\nactor:\n  team: t\n"


def test_category_from_the_ranking_stages(tmp_path: Path) -> None:
    from tcdb.collections.ir_metadata.description import read_side_file

    def category(stages: str) -> str | None:
        path = tmp_path / "s.yaml"
        path.write_text(f"method:\n  retrieval:\n{stages}", encoding="utf-8")
        return read_side_file(path).category

    assert category("  - name: bm25\n  - name: rm3\n    reranks: bm25\n") == "lexical"
    assert category("  - name: bm25\n  - name: monoT5\n    reranks: bm25\n") == "neural"
    assert category("  - name: bm25\n  - name: RankGPT\n") == "llm"
    assert category("  - name: bm25\n  - name: my-own-trick\n") is None


# --------------------------------------------------------------------------- with a run, both DBs


def _snapshot(tmp_path: Path) -> None:
    build_snapshot(tmp_path, C, S, DOCS, TOPICS, QRELS)


def test_round_trip_import_list_export(db: str, tmp_path: Path, cli) -> None:
    """A run file carrying a PRIMAD header: imported, its fields queryable in `run list` and the
    API's frame, exported with the same header (the YAML byte for byte)."""
    from tcdb import api
    from tcdb.collections.ir_metadata.description import read_header

    _snapshot(tmp_path)
    run = _annotated(tmp_path / "runs", "bm25-anserini", PRIMAD)
    code, out, err = cli("run", "import", C, S, run)
    assert code == 0, err

    code, out, err = cli("run", "list", C, S, "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["run"] == "bm25-anserini" and row["group"] == "ir-lab"
    assert row["category"] == "lexical" and row["run_type"] == "automatic"
    assert row["description"] == "BM25 (k1 0.9, b 0.4) over a Porter-stemmed Lucene index"
    assert row["platform"] == "anserini==0.3.0, pyserini==0.22.1"
    assert row["ir_metadata"] == PRIMAD
    frame = api.runs(C, S).to_frame()
    assert frame.loc[0, "platform"] == "anserini==0.3.0, pyserini==0.22.1"
    assert frame.loc[0, "category"] == "lexical"

    out_path = tmp_path / "out" / "bm25-anserini.run"
    out_path.parent.mkdir()
    code, out, err = cli("run", "export", C, S, "bm25-anserini", "--out", out_path)
    assert code == 0, err
    written = out_path.read_text(encoding="utf-8")
    assert written.startswith(_header(PRIMAD))
    exported = read_header(out_path)
    assert exported is not None and exported.text.encode() == PRIMAD.encode()
    # The exported file imports as the same run again (entries and metadata unchanged).
    body = [line.split() for line in written.splitlines() if not line.startswith("#")]
    assert [(t, d, float(s)) for t, _, d, _, s, _ in body] == ROWS


def test_options_win_over_the_metadata_and_a_side_file_is_read(db: str, tmp_path: Path,
                                                               cli) -> None:
    from tcdb import api

    _snapshot(tmp_path)
    run = write_run_file(tmp_path / "runs", "mono", ROWS)
    (tmp_path / "runs" / "mono.yml").write_text(
        "tag: mono\nactor:\n  team: neural-lab\nmethod:\n  automatic: false\n  retrieval:\n"
        "  - name: bm25\n  - name: monobert\n    reranks: bm25\n", encoding="utf-8")
    code, _, err = cli("run", "import", C, S, run, "--group", "given-group")
    assert code == 0, err
    (row,) = api.runs(C, S).runs
    assert (row.group, row.category, row.run_type) == ("given-group", "neural", "manual")
    assert row.platform is None and row.ir_metadata is not None


@pytest.mark.parametrize(("yaml_text", "line", "reason"), [
    ("tag: not-this-run\n", 1, "ir_metadata tag 'not-this-run' is not the run's tag 'r'"),
    ("method:\n  automatic: 7\n", 2, "method → automatic must be true or false"),
])
def test_bad_metadata_imports_nothing(db: str, tmp_path: Path, cli, yaml_text: str, line: int,
                                      reason: str) -> None:
    from tcdb import api

    _snapshot(tmp_path)
    run = write_run_file(tmp_path / "runs", "r", ROWS)
    side = tmp_path / "runs" / "r.yaml"
    side.write_text(yaml_text, encoding="utf-8")
    code, out, err = cli("run", "import", C, S, run)
    assert code != 0
    assert f"{side}:{line}: {reason}" in err and "Traceback" not in err
    assert api.runs(C, S).runs == []


def test_explicit_file_is_for_one_run(db: str, tmp_path: Path, cli) -> None:
    from tcdb import api

    _snapshot(tmp_path)
    first = write_run_file(tmp_path / "runs", "r1", ROWS)
    second = write_run_file(tmp_path / "runs", "r2", ROWS)
    meta = tmp_path / "meta.yaml"
    meta.write_text("tag: r1\nresearch goal:\n  description: given apart\n", encoding="utf-8")
    code, _, err = cli("run", "import", C, S, first, second, "--ir-metadata", meta)
    assert code != 0 and "ir_metadata" in err
    code, _, err = cli("run", "import", C, S, first, "--ir-metadata", meta)
    assert code == 0, err
    (row,) = api.runs(C, S).runs
    assert row.description == "given apart"
