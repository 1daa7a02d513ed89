"""Topic identity by text under a collection's match rule (issue 33, item 6), on both databases:
exact text or normalised text, and an ambiguous text reported by the ingest itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcdb.errors import ConflictError
from tcdb.operations import Database
from tests.builders import write_documents, write_topics

C = "web"
DOCS = {"d1": "wind power", "d2": "solar power"}


def _ingest(cli, tmp_path: Path, label: str, topics: dict[str, str]) -> tuple[int, str, str]:
    folder = tmp_path / label
    return cli("snapshot", "ingest", C, label,
               "--docs", write_documents(folder / "docs.trec", DOCS),
               "--topics", write_topics(folder / "topics.tsv", topics))


def _core(label_a: str, label_b: str) -> set[str]:
    from tcdb.queries.topics import core_topic_ids
    from tcdb.schema import Topic

    with Database().session() as session:
        ids = core_topic_ids(session, C, [label_a, label_b])
        return {session.get(Topic, i).key for i in ids}  # type: ignore[union-attr]


def test_exact_matching_keeps_energy_and_energy_apart(db: str, tmp_path: Path, cli) -> None:
    code, out, err = cli("collection", "add", C, "--topic-identity", "text",
                         "--topic-match", "exact", "--json")
    assert code == 0, err
    assert json.loads(out)["collection"]["topic_match"] == "exact"
    code, out, err = _ingest(cli, tmp_path, "s1", {"1": "Energy", "2": "energy"})
    assert code == 0, err
    assert "warning" not in out
    assert _ingest(cli, tmp_path, "s2", {"10": "energy", "11": "Energy", "12": "Energy?"})[0] == 0
    assert _core("s1", "s2") == {"Energy", "energy"}


def test_normalised_matching_reports_the_ambiguous_ids_at_ingest(db: str, tmp_path: Path,
                                                                 cli) -> None:
    from tcdb import api

    api.collection_add(C, topic_identity="text")  # normalised: today's rule, the default
    code, out, err = _ingest(cli, tmp_path, "s1", {"1": "Energy", "2": "energy", "3": "Solar"})
    assert code == 0, err
    warnings = [line.strip() for line in out.splitlines() if "warning" in line]
    assert warnings == ["warning: ambiguous query text 'energy' under normalised matching: "
                        "topics 1, 2 of s1 keep identities of their own (left out of the core)"]
    folder = tmp_path / "s2"
    report = api.snapshot_ingest(C, "s2", docs=write_documents(folder / "d.trec", DOCS),
                                 topics_file=write_topics(folder / "t.tsv",
                                                          {"7": "ENERGY", "8": "solar!"}))
    assert report.n_ambiguous_topics == 0 and report.warnings == []
    assert _core("s1", "s2") == {"solar"}  # 'energy' is ambiguous in s1: in no core
    with pytest.raises(ConflictError, match="topic_match"):
        api.collection_add(C, topic_identity="text", topic_match="exact")


def test_snapshot_list_and_collection_list_show_the_rule(db: str, cli) -> None:
    assert cli("collection", "add", C, "--topic-identity", "text")[0] == 0
    code, out, err = cli("collection", "list", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["topic_match"] == "normalised"


def test_a_collection_spec_declares_the_rule(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    spec = tmp_path / "web.yaml"
    spec.write_text(f"name: {C}\ntopic_identity: text\ntopic_match: exact\nsnapshots: []\n")
    api.collection_sync(spec)
    assert api.collections().collections[0].topic_match == "exact"
    spec.write_text(f"name: {C}\ntopic_identity: text\ntopic_match: loose\n")
    with pytest.raises(InputError) as caught:
        api.collection_sync(spec)
    assert caught.value.line == 3 and "topic_match" in caught.value.reason
