"""Topic sets: creation from a file or as core topics, idempotence, errors that write nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot

C = "ts"
DOCS = {f"d{i}": f"text {i}" for i in range(5)}


def two_snapshots(tmp_path: Path) -> None:
    """s1 has topics 1–4, s2 has 2, 3, 5 (by query id): the core of both is {2, 3}."""
    build_snapshot(tmp_path, C, "s1", DOCS, {"1": "a", "2": "b", "3": "c", "4": "d"},
                   [("1", "d1", 1)])
    build_snapshot(tmp_path, C, "s2", DOCS, {"2": "b", "3": "c", "5": "e"}, [("2", "d1", 1)])


def external(topic_ids: set[int], label: str) -> set[str]:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import snapshot_topics

    with Database().session() as session:
        names = snapshot_topics(session.connection(), get_snapshot(session, C, label).id or 0)
    return {names[t][0] for t in topic_ids}


def members(name: str) -> set[int]:
    from tcdb.queries import topic_set_topic_ids

    with Database().session() as session:
        return topic_set_topic_ids(session, C, name)


def count_sets() -> int:
    from tcdb import api

    return len(api.topic_sets().topic_sets)


def test_core_topic_ids(db: str, tmp_path: Path) -> None:
    from tcdb.queries import core_topic_ids

    two_snapshots(tmp_path)
    with Database().session() as session:
        core = core_topic_ids(session, C, ["s1", "s2"])
        assert external(core, "s1") == {"2", "3"}
        assert external(core_topic_ids(session, C, ["s1"]), "s1") == {"1", "2", "3", "4"}


def test_create_from_file_and_core_and_list(db: str, tmp_path: Path) -> None:
    from tcdb import api

    two_snapshots(tmp_path)
    listed = tmp_path / "topics.txt"
    listed.write_text("# curated\n1\n\n4  # free of contamination\n")
    result = api.topic_set_create(collection=C, name="clean", snapshot="s1", from_file=listed)
    assert result.status == "created" and result.n_topics == 2
    assert external(members("clean"), "s1") == {"1", "4"}
    assert api.topic_set_create(collection=C, name="clean", snapshot="s1",
                                from_file=listed).status == "unchanged"
    assert api.topic_set_create(collection=C, name="core", snapshot="s1",
                                core=["s2"]).n_topics == 2
    assert external(members("core"), "s2") == {"2", "3"}
    rows = {r.name: r for r in api.topic_sets(C).topic_sets}
    assert rows["clean"].n_topics == 2 and rows["core"].n_topics == 2
    assert api.topic_set_create(collection=C, name="clean", snapshot="s1", topic_ids=["2"],
                                replace=True).status == "replaced"
    assert external(members("clean"), "s1") == {"2"}


@pytest.mark.parametrize("content, line, reason", [
    ("1\n9\n", 2, "topic '9' is not in snapshot 's1'"),
    ("1\n2\n1\n", 3, "topic '1' listed twice"),
    ("# nothing\n\n", None, "no topic ids"),
])
def test_bad_topic_file_names_line_and_writes_nothing(
    db: str, tmp_path: Path, content: str, line: int | None, reason: str
) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    two_snapshots(tmp_path)
    listed = tmp_path / "topics.txt"
    listed.write_text(content)
    with pytest.raises(InputError, match=reason) as info:
        api.topic_set_create(collection=C, name="bad", snapshot="s1", from_file=listed)
    assert info.value.file == str(listed) and info.value.line == line
    assert count_sets() == 0


def test_other_errors(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import ConflictError, InputError, NotFoundError

    two_snapshots(tmp_path)
    with pytest.raises(NotFoundError, match="topic list not found"):
        api.topic_set_create(collection=C, name="x", snapshot="s1",
                             from_file=tmp_path / "missing.txt")
    with pytest.raises(NotFoundError, match="no complete snapshot 's9'"):
        api.topic_set_create(collection=C, name="x", snapshot="s1", core=["s9"])
    with pytest.raises(InputError, match="exactly one"):
        api.topic_set_create(collection=C, name="x", snapshot="s1")
    with pytest.raises(InputError, match="exactly one"):
        api.topic_set_create(collection=C, name="x", snapshot="s1", topic_ids=["1"], core=["s2"])
    with pytest.raises(NotFoundError, match="no collection 'nope'"):
        api.topic_set_create(collection="nope", name="x", snapshot="s1", topic_ids=["1"])
    assert count_sets() == 0
    api.topic_set_create(collection=C, name="x", snapshot="s1", topic_ids=["1", "2"])
    with pytest.raises(ConflictError, match="--replace"):
        api.topic_set_create(collection=C, name="x", snapshot="s1", topic_ids=["3"])
    assert external(members("x"), "s1") == {"1", "2"}
    with pytest.raises(NotFoundError, match=r"no topic set 'y' in 'ts' \(known: x\)"):
        members("y")


def test_no_shared_topics(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    build_snapshot(tmp_path, C, "s1", DOCS, {"1": "a"}, [("1", "d1", 1)])
    build_snapshot(tmp_path, C, "s2", DOCS, {"2": "b"}, [("2", "d1", 1)])
    with pytest.raises(InputError, match="share no topic"):
        api.topic_set_create(collection=C, name="core", snapshot="s1", core=["s2"])
    assert count_sets() == 0


def test_cli(db: str, tmp_path: Path, cli: Any) -> None:
    two_snapshots(tmp_path)
    code, out, err = cli("topics", "set", "create", "core", C, "s1", "--core", "s2")
    assert code == 0, err
    assert "core: created · 2 topics" in out
    listed = tmp_path / "t.txt"
    listed.write_text("1\n2\n")
    code, out, err = cli("topics", "set", "create", "two", C, "s1", "--from-file", listed,
                         "--json")
    assert code == 0, err
    assert json.loads(out)["n_topics"] == 2
    code, out, err = cli("topics", "set", "list", "--json")
    assert code == 0, err
    assert {r["name"] for r in json.loads(out)["topic_sets"]} == {"core", "two"}
    code, out, err = cli("topics", "set", "list")
    assert code == 0 and "core" in out and "two" in out
    listed.write_text("1\n7\n")
    code, out, err = cli("topics", "set", "create", "bad", C, "s1", "--from-file", listed)
    assert code == 1 and f"{listed}:2: topic '7' is not in snapshot 's1'" in err
    code, _, err = cli("topics", "set", "create", "bad", C, "s1", "stray")
    assert code == 1 and "unexpected argument" in err
