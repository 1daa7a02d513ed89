"""Who wrote each document, declared where a snapshot is declared: a collection spec's
`source_labels` side file and `cocktail` folder, and an ir_datasets dataset whose documents
carry `source` and `twin_of` fields — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from sqlalchemy import select

from tcdb.errors import InputError
from tcdb.operations import Database
from tcdb.schema import Snapshot, SnapshotDocument


def _labels() -> dict[str, tuple[str | None, str | None]]:
    with Database().engine().connect() as conn:
        return {e: (s, t) for e, s, t in conn.execute(select(
            SnapshotDocument.external_id, SnapshotDocument.source_label,
            SnapshotDocument.twin_of))}


def _spec(folder: Path, snapshots: str) -> Path:
    spec = folder / "mixed.yaml"
    spec.write_text(f"name: mixed\nsnapshots:\n{snapshots}", encoding="utf-8")
    return spec


def test_a_spec_declares_source_labels_and_sync_ingests_them(db: str, tmp_path: Path,
                                                             cli) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in
                [("h1", "cats purr"), ("l1", "cats purr"), ("h2", "dogs bark")]),
        encoding="utf-8")
    (data / "topics.tsv").write_text("q1\tcats\n", encoding="utf-8")
    (data / "who.tsv").write_text("h1\thuman\nl1\tllm\th1\r\nh2\thuman\n", encoding="utf-8")
    spec = _spec(tmp_path, "  - {label: s1, docs: data/corpus.jsonl, topics: data/topics.tsv,"
                           " source_labels: data/who.tsv}\n")
    code, out, err = cli("collection", "sync", spec, "--ingest", "--json")
    assert code == 0, err
    assert json.loads(out)["ingested"][0]["n_by_source"] == {"human": 2, "llm": 1}
    assert _labels() == {"h1": ("human", None), "l1": ("llm", "h1"), "h2": ("human", None)}


def test_a_spec_declares_a_cocktail_folder(db: str, tmp_path: Path, cli) -> None:
    folder = tmp_path / "nq"
    (folder / "corpus").mkdir(parents=True)
    (folder / "qrels").mkdir()
    (folder / "corpus" / "human.jsonl").write_text('{"_id": "0", "text": "cats purr"}\n')
    (folder / "corpus" / "gpt.jsonl").write_text('{"_id": "0", "text": "felines purr"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "cats"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t0\t1\n")
    spec = _spec(tmp_path, "  - {label: nq, cocktail: nq}\n")
    code, out, err = cli("collection", "sync", spec, "--ingest", "--json")
    assert code == 0, err
    assert json.loads(out)["ingested"][0]["n_judgments"] == 1
    assert _labels() == {"0-human": ("human", None), "0-gpt": ("llm", "0-human")}


@pytest.mark.parametrize(("snapshot", "reason"), [
    ("{label: s, docs: d.jsonl, cocktail: nq}", "exactly one of `irds`, `docs` or `cocktail`"),
    ("{label: s, cocktail: nq, topics: t.tsv}", "give `cocktail` alone"),
    ("{label: s, docs: d.jsonl, source_labels: [a, b]}",
     r"snapshots \[1\] → source_labels: must be a path \(text\), not \['a', 'b'\]"),
])
def test_bad_declarations_name_the_line(tmp_path: Path, snapshot: str, reason: str) -> None:
    from tcdb.collections.specs.spec import load_spec

    spec = _spec(tmp_path, f"  - {snapshot}\n")
    with pytest.raises(InputError, match=reason) as info:
        load_spec(spec)
    assert str(info.value).startswith(f"{spec}:3: ")


def test_a_missing_side_file_keeps_the_snapshot_pending(tmp_path: Path) -> None:
    from tcdb.collections.specs.spec import load_spec

    (tmp_path / "d.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    spec = load_spec(_spec(tmp_path, "  - {label: s, docs: d.jsonl, source_labels: who.tsv}\n"))
    assert spec.snapshots[0].availability() == f"source labels not found: {tmp_path / 'who.tsv'}"


class MixedDoc(NamedTuple):
    doc_id: str
    text: str
    source: str
    twin_of: str | None


class _Docs:
    """An ir_datasets docs handler whose documents say who wrote them."""

    DOCS = [MixedDoc("h1", "cats purr", "human", None), MixedDoc("l1", "felines purr", "llm",
                                                                  "h1"),
            MixedDoc("l2", "dogs bark", "llm", "")]

    def docs_iter(self) -> Iterator[MixedDoc]:
        return iter(self.DOCS)

    def docs_cls(self) -> type:
        return MixedDoc

    def docs_count(self) -> int:
        return len(self.DOCS)

    def docs_handler(self) -> Any:
        return self

    def docs_lang(self) -> str:
        return "en"

    def docs_namespace(self) -> str:
        return "tcdb-test-mixed"


def test_an_ir_datasets_dataset_with_source_fields(db: str, cli) -> None:
    import ir_datasets
    from ir_datasets.formats import BaseQrels, BaseQueries, GenericQuery, TrecQrel

    class Queries(BaseQueries):  # type: ignore[misc]
        def queries_iter(self) -> Iterator[GenericQuery]:
            return iter([GenericQuery("q1", "cats")])

        def queries_cls(self) -> type:
            return GenericQuery

    class Qrels(BaseQrels):  # type: ignore[misc]
        def qrels_iter(self) -> Iterator[TrecQrel]:
            return iter([TrecQrel("q1", "h1", 1, "0")])

        def qrels_cls(self) -> type:
            return TrecQrel

        def qrels_defs(self) -> dict[int, str]:
            return {0: "not relevant", 1: "relevant"}

    name = "tcdb-test/mixed"
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, ir_datasets.Dataset(_Docs(), Queries(), Qrels()))
    assert cli("collection", "add", "mixed")[0] == 0
    code, out, err = cli("snapshot", "ingest", "mixed", "s1", "--irds", name, "--json")
    assert code == 0, err
    assert json.loads(out)["n_by_source"] == {"human": 1, "llm": 2}
    assert _labels() == {"h1": ("human", None), "l1": ("llm", "h1"), "l2": ("llm", None)}
    with Database().engine().connect() as conn:
        assert conn.execute(select(Snapshot.n_judgments)).scalar_one() == 1
