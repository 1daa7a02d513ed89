"""Is the database consistent? Checks of what no constraint enforces, for `tcdb db check`.

Why: the big tables (`run_entry`, `score`, `pool_entry`, `snapshot_document`, `document`)
carry no FOREIGN KEY constraints (bulk-write speed, see schema/runs.py), and several counts
are stored beside the rows they count. Both hold only because every writer writes whole
transactions; after a crash, a manual edit, or a bug, this finds what does not hold.

Visibility: `tcdb snapshot list`, `tcdb info`, the collection listing and the dashboard's
overview show snapshots of every status, while reports ask for `complete` ones only
(`tcdb.catalog.collections.get_snapshot`). An ingest writes its snapshot row and marks it `complete`
in one transaction, and bad input leaves no row, so a committed row of any other status
(`ingesting`, `failed`) is a left-over users can see: every one is a finding.

Scores of a run on another snapshot's qrels are legitimate when tcdb put them there
(`evaluate --run-from`, `report persistence --cross-snapshot`: marked `MAPPED_SCORES_SOURCE`), as
are residual scores (`evaluate --residual-of`, a qrels set of any snapshot of the collection).

Each check is one SQL query (NOT EXISTS / LEFT JOIN … IS NULL, GROUP BY for counts) that the
database answers with anti-joins over primary-key indexes or hashes; no row comes to Python
except one example per failed check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Connection, text

from tcdb.storage.db import configured_url, get_engine
from tcdb.vocabulary import MAPPED_SCORES_SOURCE


@dataclass(frozen=True)
class Finding:
    """One kind of inconsistency: where, what, how many rows, and one of them as an example."""

    table: str
    problem: str
    count: int
    example: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# The references that no FOREIGN KEY constraint states: table → (column, referred table).
# A `residual_of_id` of 0 means "none" (the run as submitted).
IMPLIED_REFERENCES: dict[str, list[tuple[str, str]]] = {
    "document": [("collection_id", "collection")],
    "snapshot_document": [("snapshot_id", "snapshot"), ("document_id", "document"),
                          ("content_id", "content")],
    "run_entry": [("run_id", "run"), ("topic_id", "topic"), ("document_id", "document")],
    "run_version_entry": [("version_id", "run_version"), ("topic_id", "topic"),
                          ("document_id", "document")],
    "score": [("run_id", "run"), ("qrels_set_id", "qrels_set"), ("measure_id", "measure"),
              ("topic_id", "topic"), ("residual_of_id", "qrels_set")],
    "evaluation": [("residual_of_id", "qrels_set")],
    "pool_entry": [("pool_id", "pool"), ("topic_id", "topic"), ("document_id", "document")],
}
OPTIONAL_REFERENCES = {"residual_of_id"}  # 0 refers to nothing


@dataclass(frozen=True)
class Check:
    """`count_sql` counts the offending rows; `example_sql` shows one of them."""

    table: str
    problem: str
    count_sql: str
    example_sql: str


def _orphans() -> Iterator[Check]:
    for table, references in IMPLIED_REFERENCES.items():
        for column, target in references:
            zero = f"t.{column} <> 0 AND " if column in OPTIONAL_REFERENCES else ""
            where = (f"{zero}NOT EXISTS (SELECT 1 FROM {target} x WHERE x.id = t.{column})")
            yield Check(table, f"{column} refers to no {target} row",
                        f"SELECT COUNT(*) FROM {table} t WHERE {where}",
                        f"SELECT t.* FROM {table} t WHERE {where}")


# Rows that must belong to the snapshot of the row they hang on: (table, problem, FROM … WHERE).
_MEMBERSHIP = [
    ("run_entry", "document is not in the run's snapshot",
     "run_entry t JOIN run r ON r.id = t.run_id WHERE NOT EXISTS (SELECT 1 FROM "
     "snapshot_document sd WHERE sd.snapshot_id = r.snapshot_id AND sd.document_id = "
     "t.document_id)"),
    ("run_entry", "topic is not in the run's snapshot",
     "run_entry t JOIN run r ON r.id = t.run_id WHERE NOT EXISTS (SELECT 1 FROM snapshot_topic "
     "st WHERE st.snapshot_id = r.snapshot_id AND st.topic_id = t.topic_id)"),
    ("pool_entry", "document is not in the pool's snapshot",
     "pool_entry t JOIN pool p ON p.id = t.pool_id WHERE NOT EXISTS (SELECT 1 FROM "
     "snapshot_document sd WHERE sd.snapshot_id = p.snapshot_id AND sd.document_id = "
     "t.document_id)"),
    ("pool_entry", "topic is not in the pool's snapshot",
     "pool_entry t JOIN pool p ON p.id = t.pool_id WHERE NOT EXISTS (SELECT 1 FROM "
     "snapshot_topic st WHERE st.snapshot_id = p.snapshot_id AND st.topic_id = t.topic_id)"),
    ("snapshot_document", "document belongs to another collection than the snapshot",
     "snapshot_document t JOIN snapshot s ON s.id = t.snapshot_id JOIN document d ON d.id = "
     "t.document_id WHERE d.collection_id <> s.collection_id"),
    ("judgment", "document belongs to another collection than the qrels set's snapshot",
     "judgment t JOIN qrels_set q ON q.id = t.qrels_set_id JOIN snapshot s ON s.id = "
     "q.snapshot_id JOIN document d ON d.id = t.document_id WHERE d.collection_id <> "
     "s.collection_id"),
    ("evaluation", "qrels set is of another snapshot than the run, and the scores are not "
     "marked as its run mapped there (evaluate --run-from)",
     "evaluation t JOIN run r ON r.id = t.run_id JOIN qrels_set q ON q.id = t.qrels_set_id "
     f"WHERE q.snapshot_id <> r.snapshot_id AND t.source <> '{MAPPED_SCORES_SOURCE}'"),
    ("evaluation", "scores marked as a run mapped to another snapshot (evaluate --run-from) "
     "are on its own snapshot's qrels, or another collection's",
     "evaluation t JOIN run r ON r.id = t.run_id JOIN qrels_set q ON q.id = t.qrels_set_id "
     "JOIN snapshot sr ON sr.id = r.snapshot_id JOIN snapshot sq ON sq.id = q.snapshot_id "
     f"WHERE t.source = '{MAPPED_SCORES_SOURCE}' AND (sq.id = sr.id OR sq.collection_id <> "
     "sr.collection_id OR t.residual_of_id <> 0)"),
    ("evaluation", "residual_of is a qrels set of another collection than the run "
     "(evaluate --residual-of takes one of the run's collection)",
     "evaluation t JOIN run r ON r.id = t.run_id JOIN qrels_set q ON q.id = t.residual_of_id "
     "JOIN snapshot sr ON sr.id = r.snapshot_id JOIN snapshot sq ON sq.id = q.snapshot_id "
     "WHERE t.residual_of_id <> 0 AND sq.collection_id <> sr.collection_id"),
]


def _grouped(table: str, key: str, alias: str = "c") -> str:
    return (f"LEFT JOIN (SELECT {key}, COUNT(*) AS n FROM {table} GROUP BY {key}) {alias} "
            f"ON {alias}.{key} = t.id")


# Stored counts against the rows they count: (table, stored column, what it counts, the
# counting expression, FROM and JOINs that give it, `t` being the table).
_COUNTS = [
    ("run", "n_entries", "run_entry", "COALESCE(c.n, 0)",
     f"run t {_grouped('run_entry', 'run_id')}"),
    ("run", "n_unresolved", "run_entry_unresolved", "COALESCE(c.n, 0)",
     f"run t {_grouped('run_entry_unresolved', 'run_id')}"),
    ("snapshot", "n_documents", "snapshot_document", "COALESCE(c.n, 0)",
     f"snapshot t {_grouped('snapshot_document', 'snapshot_id')}"),
    ("snapshot", "n_topics", "snapshot_topic", "COALESCE(c.n, 0)",
     f"snapshot t {_grouped('snapshot_topic', 'snapshot_id')}"),
    ("snapshot", "n_judgments", "its original qrels set's judgments",
     "COALESCE(q.n_judgments, 0)",
     "snapshot t LEFT JOIN qrels_set q ON q.snapshot_id = t.id AND q.name = t.original_qrels"),
    ("pool", "n_documents", "pool_entry", "COALESCE(c.n, 0)",
     f"pool t {_grouped('pool_entry', 'pool_id')}"),
    ("qrels_set", "n_judgments", "judgment + judgment_unresolved",
     "COALESCE(c.n, 0) + COALESCE(u.n, 0)",
     f"qrels_set t {_grouped('judgment', 'qrels_set_id')} "
     f"{_grouped('judgment_unresolved', 'qrels_set_id', 'u')}"),
]
_EVALUATED = ["run_id", "qrels_set_id", "residual_of_id", "measure_id"]  # evaluation's key


def _checks() -> Iterator[Check]:
    not_complete = "t.status <> 'complete'"
    yield Check("snapshot", "snapshot is not complete, yet listed by `snapshot list` and `info`",
                f"SELECT COUNT(*) FROM snapshot t WHERE {not_complete}",
                "SELECT t.id, t.collection_id, t.label, t.status FROM snapshot t "
                f"WHERE {not_complete}")
    yield from _orphans()
    for table, problem, rest in _MEMBERSHIP:
        yield Check(table, problem, f"SELECT COUNT(*) FROM {rest}", f"SELECT t.* FROM {rest}")
    for table, stored, counted, expression, rest in _COUNTS:
        where = f"WHERE t.{stored} <> {expression}"
        yield Check(table, f"{stored} differs from the count of {counted}",
                    f"SELECT COUNT(*) FROM {rest} {where}",
                    f"SELECT t.id, t.{stored} AS stored, {expression} AS counted FROM {rest} "
                    f"{where}")
    dangling = ("t.original_qrels IS NOT NULL AND NOT EXISTS (SELECT 1 FROM qrels_set q WHERE "
                "q.snapshot_id = t.id AND q.name = t.original_qrels AND q.kind = 'original')")
    yield Check("snapshot", "original_qrels names no qrels set of kind original of the snapshot",
                f"SELECT COUNT(*) FROM snapshot t WHERE {dangling}",
                f"SELECT t.id, t.label, t.original_qrels FROM snapshot t WHERE {dangling}")
    key = ", ".join(_EVALUATED)
    scores = (f"LEFT JOIN (SELECT {key}, COUNT(*) AS n FROM score GROUP BY {key}) c ON "
              + " AND ".join(f"c.{k} = t.{k}" for k in _EVALUATED))
    uncounted = "WHERE t.n_topics <> COALESCE(c.n, 0)"
    yield Check("evaluation", "n_topics differs from the count of its score rows",
                f"SELECT COUNT(*) FROM evaluation t {scores} {uncounted}",
                f"SELECT {', '.join(f't.{k}' for k in _EVALUATED)}, t.n_topics AS stored, "
                f"COALESCE(c.n, 0) AS counted FROM evaluation t {scores} {uncounted}")
    unmarked = ("NOT EXISTS (SELECT 1 FROM evaluation e WHERE "
                + " AND ".join(f"e.{k} = t.{k}" for k in _EVALUATED) + ")")
    yield Check("score", "score has no evaluation row (it would be computed again)",
                f"SELECT COUNT(*) FROM score t WHERE {unmarked}",
                f"SELECT t.* FROM score t WHERE {unmarked}")


def check_database(url: str | None = None) -> list[Finding]:
    """Every inconsistency found, one `Finding` per check that failed; [] when consistent.

    Read-only, in one transaction, so that every check sees the same state.
    """
    engine = get_engine(url or configured_url())
    findings: list[Finding] = []
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"))
        else:  # the driver would run each SELECT in a transaction of its own
            conn.exec_driver_sql("BEGIN")
        for check in _checks():
            count = int(conn.execute(text(check.count_sql)).scalar_one())
            if count:
                findings.append(Finding(check.table, check.problem, count,
                                        _example(conn, check.example_sql)))
        if conn.dialect.name == "sqlite":
            findings.extend(_sqlite_foreign_keys(conn))
        findings.extend(_names_against_the_rule(conn))
        conn.rollback()
    return findings


# Columns holding names a user gave (`tcdb.names`): small tables, read whole.
NAME_COLUMNS: list[tuple[str, str]] = [
    ("collection", "name"), ("snapshot", "label"), ("qrels_set", "name"), ("pool", "name"),
    ("topic_set", "name"), ("run", "tag"), ("run", "group_name"), ("system", "name"),
    ("system", "group_name"),
]


def _names_against_the_rule(conn: Connection) -> list[Finding]:
    """Names stored before the naming rule (`tcdb.names`) that break it: every command looks
    names up by the rule, so such a row cannot be reached (rename or re-create it)."""
    from tcdb.names import BadName, check_name

    findings = []
    for table, column in NAME_COLUMNS:
        bad = []
        for (value,) in conn.execute(text(f"SELECT {column} FROM {table} "
                                          f"WHERE {column} IS NOT NULL AND {column} <> ''")):
            try:
                if check_name(value) != value:
                    bad.append(f"{value!r}: not in Unicode normal form C")
            except BadName as exc:
                bad.append(f"{value!r}: {exc}")
        if bad:
            findings.append(Finding(table, f"{column} breaks the naming rule (tcdb.names): "
                                    "no command can look it up", len(bad), bad[0]))
    return findings


def _example(conn: Connection, sql: str) -> str:
    result = conn.execute(text(f"{sql} LIMIT 1"))
    row = result.first()
    if row is None:  # pragma: no cover - the count said there was one
        return ""
    return ", ".join(f"{key}={value!r}" for key, value in zip(result.keys(), row, strict=True))


def _sqlite_foreign_keys(conn: Connection) -> list[Finding]:
    """Declared FOREIGN KEYs hold on PostgreSQL by construction; SQLite enforces them only on
    connections that asked (`PRAGMA foreign_keys`), so a writer that did not may break them."""
    by_table: dict[tuple[str, str], list[Any]] = {}
    for table, rowid, parent, _ in conn.exec_driver_sql("PRAGMA foreign_key_check").all():
        by_table.setdefault((table, parent), []).append(rowid)
    return [Finding(table, f"FOREIGN KEY refers to no {parent} row", len(rowids),
                    _example(conn, f'SELECT * FROM "{table}" WHERE rowid = {int(rowids[0])}'))
            for (table, parent), rowids in sorted(by_table.items())]
