"""Records that come from ir_datasets (not from a file tcdb reads) are held to the same limits
as every file reader's (`tcdb.limits`): ids one word within their column, no control
characters in ids, NUL dropped from text, grades within SMALLINT — one line naming the dataset
and the record, nothing written, the same on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from tcdb.operations import Database
from tests.reliability.rows import database_state


class Doc(NamedTuple):
    doc_id: str
    text: str

    def default_text(self) -> str:
        return self.text


GOOD_DOCS = [Doc("d1", "cats purr"), Doc("d2", "dogs bark")]


def _register(name: str, docs: list[Doc], queries: list[tuple[str, str]],
              qrels: list[tuple[str, str, int]]) -> str:
    import ir_datasets
    from ir_datasets.formats import (
        BaseDocs,
        BaseQrels,
        BaseQueries,
        GenericQuery,
        TrecQrel,
    )

    class Docs(BaseDocs):  # type: ignore[misc]
        def docs_iter(self) -> Iterator[Doc]:
            return iter(docs)

        def docs_cls(self) -> type:
            return Doc

        def docs_count(self) -> int:
            return len(docs)

        def docs_namespace(self) -> str:
            return name

        def docs_lang(self) -> str:
            return "en"

    class Queries(BaseQueries):  # type: ignore[misc]
        def queries_iter(self) -> Iterator[GenericQuery]:
            return iter([GenericQuery(q, t) for q, t in queries])

        def queries_cls(self) -> type:
            return GenericQuery

    class Qrels(BaseQrels):  # type: ignore[misc]
        def qrels_iter(self) -> Iterator[TrecQrel]:
            return iter([TrecQrel(q, d, g, "0") for q, d, g in qrels])

        def qrels_cls(self) -> type:
            return TrecQrel

        def qrels_defs(self) -> dict[int, str]:
            return {}

    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, ir_datasets.Dataset(Docs(), Queries(), Qrels()))
    return name


CASES: dict[str, dict[str, Any]] = {
    "doc id with a space": {"docs": [Doc("d 1", "x"), *GOOD_DOCS], "reason": "document 1"},
    "doc id with NUL": {"docs": [*GOOD_DOCS, Doc("d\x003", "x")], "reason": "document 3"},
    "doc id too long": {"docs": [Doc("d" * 501, "x"), *GOOD_DOCS], "reason": "longer than 500"},
    "topic id with a tab": {"queries": [("q\t1", "cats")], "reason": "query 1"},
    "topic id too long": {"queries": [("q" * 201, "cats")], "reason": "longer than 200"},
    "grade beyond SMALLINT": {"qrels": [("q1", "d1", 40000)], "reason": "out of range"},
    "judged doc id with a space": {"qrels": [("q1", "d 2", 1)], "reason": "judgment 1"},
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_record_is_one_line_and_writes_nothing(db: str, cli, case: str) -> None:
    spec = CASES[case]
    name = _register(f"tcdb-test-limits/{abs(hash((db, case)))}", spec.get("docs", GOOD_DOCS),
                     spec.get("queries", [("q1", "cats")]),
                     spec.get("qrels", [("q1", "d1", 1)]))
    assert cli("collection", "add", "c")[0] == 0
    before = database_state(db)
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--irds", name)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"error: {name}: ") and spec["reason"] in lines[0], lines[0]
    assert database_state(db) == before


def test_nul_in_text_is_dropped_alike_on_both_databases(db: str, cli) -> None:
    from sqlalchemy import select

    from tcdb.schema import Content, SnapshotTopic

    name = _register(f"tcdb-test-limits/text-{abs(hash(db))}",
                     [Doc("d1", "cats\x00 purr"), Doc("d2", "dogs bark")],
                     [("q1", "ca\x00ts")], [("q1", "d1", 1)])
    assert cli("collection", "add", "c")[0] == 0
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--irds", name)
    assert code == 0, err
    with Database().session() as session:
        texts = set(session.execute(select(Content.text)).scalars())
        queries = set(session.execute(select(SnapshotTopic.query)).scalars())
    assert texts == {"cats purr", "dogs bark"} and queries == {"cats"}
