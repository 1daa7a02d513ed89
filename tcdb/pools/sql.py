"""The SQL that computes a depth-k pool inside the database (see `tcdb.pools`).

Builders of query text only: the build and the per-run counts of `show` run them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from tcdb.storage.db import is_postgres

BOUNDS = "tcdb_pool_bounds"


ENTRY_COLUMNS = ["pool_id", "topic_id", "document_id", "best_rank", "n_runs"]


def runs_list(run_ids: Sequence[int]) -> str:
    """Run ids as an SQL list literal (integers only), so the planner sees the exact runs."""
    return ", ".join(str(int(r)) for r in run_ids) or "NULL"


def bounds_sql(snapshot_id: int, run_ids: Sequence[int], depth: int,
               with_unresolved: bool) -> str:
    """Per (chosen run, snapshot topic): how many entries have a file rank ≤ k (file-rank order).

    When a topic has ≥ k entries of rank ≤ k, its k-th smallest rank is ≤ k, so only those
    entries can reach the top k: about k per topic reach the window's sort instead of the whole
    run, and the result is exact whatever the rank column says (`n < k`: the whole topic goes).
    """
    runs = runs_list(run_ids)
    k = int(depth)
    union = (f" UNION ALL SELECT run_id, topic_id FROM run_entry_unresolved "
             f"WHERE run_id IN ({runs}) AND rank <= {k}") if with_unresolved else ""
    return (
        "SELECT r.id AS run_id, st.topic_id, COALESCE(x.n, 0) AS n "
        "FROM run r CROSS JOIN snapshot_topic st LEFT JOIN ("
        "SELECT run_id, topic_id, COUNT(*) AS n FROM ("
        f"SELECT run_id, topic_id FROM run_entry WHERE run_id IN ({runs}) "
        f"AND rank <= {k}{union}) y GROUP BY run_id, topic_id"
        ") x ON x.run_id = r.id AND x.topic_id = st.topic_id "
        f"WHERE r.id IN ({runs}) AND st.snapshot_id = {int(snapshot_id)}"
    )


def bounds_with(snapshot_id: int, run_ids: Sequence[int], depth: int,
                with_unresolved: bool) -> str:
    """`WITH tcdb_pool_bounds AS (…) `: the bounds as a common table expression, for reading
    in a read-only transaction (`show`), where no temporary table can be created."""
    return f"WITH {BOUNDS} AS ({bounds_sql(snapshot_id, run_ids, depth, with_unresolved)}) "


def create_bounds(conn: Connection, snapshot_id: int, run_ids: Sequence[int], depth: int,
                  with_unresolved: bool) -> None:
    """The bounds (`bounds_sql`) as a temporary table (per connection, dropped after use), so
    that the planner knows its size when the build inserts the pool."""
    postgres = is_postgres(conn)
    query = bounds_sql(snapshot_id, run_ids, depth, with_unresolved)
    conn.execute(text(f"DROP TABLE IF EXISTS {BOUNDS}"))
    on_commit = " ON COMMIT DROP" if postgres else ""
    conn.execute(text(f"CREATE TEMPORARY TABLE {BOUNDS}{on_commit} AS {query}"))
    conn.execute(text(f"ANALYZE {BOUNDS}"))


def drop_bounds(conn: Connection) -> None:
    conn.execute(text(f"DROP TABLE IF EXISTS {BOUNDS}"))


def _top_sql(table: str, columns: str, condition: str, postgres: bool, runs: str) -> str:
    """The chosen runs' entries in `table` that meet `condition` (on `e.eval_rank`), read per
    (run, snapshot topic) as a range of the primary key (run_id, topic_id, eval_rank) rather
    than by scanning every entry of each run."""
    if postgres:
        return (f"SELECT x.* FROM run r CROSS JOIN snapshot_topic st CROSS JOIN LATERAL "
                f"(SELECT {columns} FROM {table} e WHERE e.run_id = r.id "
                f"AND e.topic_id = st.topic_id AND {condition} OFFSET 0) x "
                f"WHERE r.id IN ({runs}) AND st.snapshot_id = :snapshot_id")
    # SQLite joins in the order written (CROSS JOIN), using the key for run and topic.
    return (f"SELECT {columns} FROM run r CROSS JOIN snapshot_topic st CROSS JOIN {table} e "
            f"WHERE r.id IN ({runs}) AND st.snapshot_id = :snapshot_id AND e.run_id = r.id "
            f"AND e.topic_id = st.topic_id AND {condition}")


def _docid_asc_sql(postgres: bool, with_unresolved: bool, with_ext: bool, runs: str) -> str:
    """Positions under `docid-asc` from the stored trec_eval order, without sorting strings.

    Both orders sort by score descending and differ only within a group of equal scores, which
    trec_eval ranks by document id descending and trectools ascending: a group spanning eval
    ranks [a, b] is reversed, its entry at eval rank e going to a + b - e. So the top k under
    docid-asc are the top k by eval rank, plus the rest of the tie group where the k-th and the
    (k+1)-th entries tie ("straddle"); entries the snapshot lacks take their places as
    everywhere. Every step reads per (run, topic) ranges of the key, so the plan does not hinge
    on statistics of a table that was bulk-loaded a moment ago.
    """
    tables = [("run_entry", "e.document_id", "CAST(NULL AS TEXT)")]
    if with_unresolved:
        tables.append(("run_entry_unresolved", "CAST(NULL AS INTEGER)", "e.external_doc_id"))

    def columns(document: str, ext: str) -> str:
        return (f"e.run_id, e.topic_id, {document} AS document_id, {ext} AS ext, "
                "e.eval_rank, e.score")

    def rest_of_tie(table: str, document: str, ext: str) -> str:
        condition = ("e.run_id = s.run_id AND e.topic_id = s.topic_id AND e.eval_rank > :depth "
                     "AND e.score = s.score")
        if postgres:
            return (f"SELECT x.* FROM straddle s CROSS JOIN LATERAL (SELECT "
                    f"{columns(document, ext)} FROM {table} e WHERE {condition} OFFSET 0) x")
        return (f"SELECT {columns(document, ext)} FROM straddle s CROSS JOIN {table} e "
                f"WHERE {condition}")

    top = " UNION ALL ".join(_top_sql(table, columns(document, ext), "e.eval_rank <= :depth",
                                      postgres, runs) for table, document, ext in tables)
    boundary = " UNION ALL ".join(_top_sql(table, "e.run_id, e.topic_id, e.score",
                                           "e.eval_rank IN (:depth, :depth + 1)", postgres, runs)
                                  for table, _, _ in tables)
    rest = " UNION ALL ".join(rest_of_tie(*table) for table in tables)
    return (
        "WITH straddle AS (SELECT run_id, topic_id, MIN(score) AS score "
        f"FROM ({boundary}) b GROUP BY run_id, topic_id "
        "HAVING COUNT(*) = 2 AND MIN(score) = MAX(score)), "
        f"candidates AS ({top} UNION ALL {rest}), "
        "ranked AS (SELECT c.run_id, c.topic_id, c.document_id, c.ext, "
        "MIN(c.eval_rank) OVER w + MAX(c.eval_rank) OVER w - c.eval_rank AS rn "
        "FROM candidates c WINDOW w AS (PARTITION BY c.run_id, c.topic_id, c.score)) "
        + _with_external_ids("ranked", with_ext)
    )


def _with_external_ids(source: str, with_ext: bool) -> str:
    """SELECT run_id, topic_id, document_id, ext, rn FROM `source`, where `ext` is the
    external id of every entry if `with_ext`, else only of the entries the snapshot lacks."""
    if not with_ext:
        return f"SELECT run_id, topic_id, document_id, ext, rn FROM {source} r"
    return ("SELECT r.run_id, r.topic_id, r.document_id, COALESCE(sd.external_id, r.ext) AS ext, "
            f"r.rn FROM {source} r LEFT JOIN snapshot_document sd "
            "ON sd.snapshot_id = :snapshot_id AND sd.document_id = r.document_id")


def ranked_sql(tie_order: str, postgres: bool, with_unresolved: bool, runs: str,
               with_ext: bool = False) -> str:
    """The candidate entries of the chosen runs with their position under the tie order (`rn`)
    and `ext`, their external id (`with_ext`; else only for entries the snapshot lacks).

    trec_eval's order is stored (`run_entry.eval_rank`): its top k is a range of the primary
    key, and entries the snapshot lacks already hold their places. `docid-asc` follows from it
    (`_docid_asc_sql`). The file-rank order needs the bounds table (`create_bounds`), whose
    rows are exactly the chosen runs' topics; positions ≤ k are exact, entries below the bound
    never get one (a read-only reader puts `bounds_with` in front of its query instead). The
    candidates are materialised first so the join for external ids sees ~k rows per topic,
    not every entry.
    """
    if tie_order == "trec_eval":
        top = _top_sql("run_entry", "e.run_id, e.topic_id, e.document_id, "
                       "CAST(NULL AS TEXT) AS ext, e.eval_rank AS rn",
                       "e.eval_rank <= :depth", postgres, runs)
        return _with_external_ids(f"({top})", with_ext)
    if tie_order == "docid-asc":
        return _docid_asc_sql(postgres, with_unresolved, with_ext, runs)
    bound = (f"JOIN {BOUNDS} b ON b.run_id = e.run_id AND b.topic_id = e.topic_id "
             "WHERE (b.n < :depth OR e.rank <= :depth)")
    candidates = (f"SELECT e.run_id, e.topic_id, e.document_id, e.rank, e.score "
                  f"FROM run_entry e {bound}")
    materialized = "MATERIALIZED " if postgres else ""
    ext = 'ext COLLATE "C"' if postgres else "ext COLLATE BINARY"  # byte order, as strcmp
    entries = (
        "SELECT c.run_id, c.topic_id, c.document_id, c.rank, c.score, sd.external_id AS ext "
        "FROM candidates c JOIN snapshot_document sd ON sd.snapshot_id = :snapshot_id "
        "AND sd.document_id = c.document_id"
    )
    if with_unresolved:
        entries += (
            " UNION ALL SELECT e.run_id, e.topic_id, NULL, e.rank, e.score, e.external_doc_id "
            f"FROM run_entry_unresolved e {bound}"
        )
    return (
        f"WITH candidates AS {materialized}({candidates}) "
        "SELECT run_id, topic_id, document_id, ext, ROW_NUMBER() OVER (PARTITION BY run_id, "
        f"topic_id ORDER BY rank ASC, score DESC, {ext} DESC) AS rn "
        f"FROM ({entries}) u"
    )


def pool_sql(tie_order: str, postgres: bool, with_unresolved: bool, exclude: bool,
             max_per_topic: int | None, runs: str) -> str:
    """`INSERT INTO pool_entry … SELECT`: the union of the chosen runs' top-k per topic."""
    ranked = ranked_sql(tie_order, postgres, with_unresolved, runs,
                        with_ext=max_per_topic is not None)
    where = "r.rn <= :depth AND r.document_id IS NOT NULL"
    if exclude:
        where += (" AND NOT EXISTS (SELECT 1 FROM judgment j WHERE j.qrels_set_id = :base_id "
                  "AND j.topic_id = r.topic_id AND j.document_id = r.document_id)")
    grouped = (
        "SELECT r.topic_id, r.document_id, MIN(r.rn) AS best_rank, COUNT(*) AS n_runs"
        f"{', MIN(r.ext) AS ext' if max_per_topic is not None else ''} "
        f"FROM ({ranked}) r WHERE {where} GROUP BY r.topic_id, r.document_id"
    )
    # Rows go in primary-key order: the B-tree then grows at its right edge.
    if max_per_topic is None:
        select_sql = ("SELECT :pool_id, topic_id, document_id, best_rank, n_runs "
                      f"FROM ({grouped}) g ORDER BY topic_id, document_id")
    else:
        ext = 'ext COLLATE "C"' if postgres else "ext"
        select_sql = (
            "SELECT :pool_id, topic_id, document_id, best_rank, n_runs FROM ("
            "SELECT g.*, ROW_NUMBER() OVER (PARTITION BY topic_id ORDER BY best_rank ASC, "
            f"n_runs DESC, {ext} ASC) AS k FROM ({grouped}) g) c WHERE c.k <= :max_per_topic "
            "ORDER BY topic_id, document_id"
        )
    return f"INSERT INTO pool_entry ({', '.join(ENTRY_COLUMNS)}) {select_sql}"
