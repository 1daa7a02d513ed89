"""Is a collection reusable? The TREC-8 re-judging comparison, fed from the database.

Rank every run by its mean score under qrels A (the original judgments) and under qrels B (e.g.
the expanded set after a new pool), compare the rankings (τ, τ-b, τ_AP, per-topic τ), and count
per run how many of its top-K documents A never judged and B found relevant. The figures come
from `tcdb.analysis.reusability`; this module only loads what it needs with Core SQL:

* per-topic scores stored by `tcdb.evaluation` (missing ones are computed first);
* the top-K entries of every run in one query, in trec_eval's order (the stored `eval_rank`:
  an index range scan per run and topic);
* both qrels sets' judgments.

Means follow `trec_eval -c` over the topics judged in both A and B (optionally restricted to a
topic set): a topic a run did not answer counts 0. A run without stored scores for a measure
under A or B (an imported run lacking it) is left out of that measure and named in `skipped`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from tcdb.db import is_postgres, session_scope
from tcdb.errors import InputError
from tcdb.schema import Run

if TYPE_CHECKING:
    import pandas as pd

LARGEST_CHANGES = 5


def load_top_k(conn: Connection, snapshot_id: int, run_ids: Sequence[int], depth: int
               ) -> pd.DataFrame:
    """Top-`depth` entries of the runs as integer ids: `[run, topic, doc]`, one SQL query.

    In trec_eval's order (the stored `eval_rank`), so the top K is the one evaluation sees;
    entries for documents the snapshot lacks keep their ranks but cannot be counted.
    """
    import numpy as np
    import pandas as pd

    columns = ["run", "topic", "doc"]
    if not run_ids or depth < 1:
        return pd.DataFrame({c: np.empty(0, dtype=np.int64) for c in columns})
    ids = ",".join(str(int(r)) for r in run_ids)
    if is_postgres(conn):
        # One index range scan of (run_id, topic_id, eval_rank) per run and topic: reads only
        # the top-K rows instead of scanning every entry.
        sql = (
            "SELECT e.run_id, e.topic_id, e.document_id"
            f" FROM unnest(ARRAY[{ids}]::bigint[]) AS r(id)"
            " CROSS JOIN (SELECT topic_id FROM snapshot_topic"
            f"  WHERE snapshot_id = {int(snapshot_id)}) st"
            " CROSS JOIN LATERAL (SELECT run_id, topic_id, document_id FROM run_entry"
            "  WHERE run_id = r.id AND topic_id = st.topic_id"
            f"  AND eval_rank <= {int(depth)}) e"
        )
    else:
        sql = (
            "SELECT e.run_id, e.topic_id, e.document_id FROM run_entry e"
            f" WHERE e.run_id IN ({ids}) AND e.eval_rank <= {int(depth)}"
        )
    data = int_rows(conn, sql, 3)
    return pd.DataFrame({c: data[:, i] for i, c in enumerate(columns)})


def int_rows(conn: Connection, sql: str, n_columns: int, dtype: str = "int64") -> Any:
    """An (n × n_columns) array of a query's rows, without a Python object per row on PostgreSQL.

    PostgreSQL: each column comes back as one `bytea` of big-endian 8-byte values
    (`string_agg(int8send(…))`), read by `numpy.frombuffer` — all aggregates of one query see
    the rows in the same order. SQLite: the driver's tuples, flattened into numpy. Why: hundreds
    of thousands of rows through SQLAlchemy `Row`s cost seconds. Same transaction as the caller.
    """
    from itertools import chain

    import numpy as np

    raw = conn.connection.driver_connection
    assert raw is not None
    if is_postgres(conn):
        send = "float8send({}::float8)" if dtype == "float64" else "int8send({}::bigint)"
        parts = ", ".join(f"string_agg({send.format(f'c{i}')}, ''::bytea)"
                          for i in range(n_columns))
        names = ", ".join(f"c{i}" for i in range(n_columns))
        with raw.cursor(binary=True) as cursor:
            blobs = cursor.execute(f"SELECT {parts} FROM ({sql}) AS q({names})").fetchone()
        big = ">f8" if dtype == "float64" else ">i8"
        if blobs is None or blobs[0] is None:
            return np.empty((0, n_columns), dtype=dtype)
        return np.column_stack([np.frombuffer(b, dtype=big).astype(dtype) for b in blobs])
    cursor = raw.cursor()
    rows = cursor.execute(sql).fetchall()
    cursor.close()
    flat = np.fromiter(chain.from_iterable(rows), dtype=dtype, count=len(rows) * n_columns)
    return flat.reshape(-1, n_columns)


def load_judgments(conn: Connection, qrels_set_id: int) -> pd.DataFrame:
    """A qrels set as integer ids: `[topic, doc, grade]`."""
    import pandas as pd

    data = int_rows(conn, "SELECT topic_id, document_id, grade FROM judgment "
                    f"WHERE qrels_set_id = {int(qrels_set_id)}", 3)
    return pd.DataFrame({"topic": data[:, 0], "doc": data[:, 1], "grade": data[:, 2]})


def per_topic_frame(
    stored: dict[tuple[int, int], dict[int, float]], run_ids: Sequence[int], tags: dict[int, str],
    measure_id: int, topics: dict[int, str],
) -> pd.DataFrame:
    """Long `[run, topic, value]` over every run × topic, 0 where nothing is stored (trec_eval -c).

    Why the full grid: the analysis averages over the columns it sees; a run that answered no
    topic must still appear, with zeros.
    """
    import pandas as pd

    rows = []
    for run_id in run_ids:
        got = stored.get((run_id, measure_id), {})
        tag = tags[run_id]
        for topic_id, name in topics.items():
            rows.append((tag, name, got.get(topic_id, 0.0)))
    return pd.DataFrame(rows, columns=["run", "topic", "value"])


def stored_scores(conn: Connection, qrels_set_id: int, run_ids: Sequence[int],
                  measure_ids: Sequence[int]) -> dict[tuple[int, int], dict[int, float]]:
    """(run id, measure id) → {topic id: value} of stored scores."""
    out: dict[tuple[int, int], dict[int, float]] = {}
    if not run_ids or not measure_ids:
        return out
    runs = ",".join(str(int(r)) for r in run_ids)
    mids = ",".join(str(int(m)) for m in measure_ids)
    data = int_rows(conn, "SELECT run_id, measure_id, topic_id, value FROM score "
                    f"WHERE qrels_set_id = {int(qrels_set_id)} AND run_id IN ({runs}) "
                    f"AND measure_id IN ({mids})", 4, dtype="float64")
    keys = data[:, :3].astype("int64").tolist()
    for (run_id, mid, topic_id), value in zip(keys, data[:, 3].tolist(), strict=True):
        out.setdefault((run_id, mid), {})[topic_id] = value
    return out


def select_topics(session: Any, collection: str, snapshot_id: int, judged: Sequence[int],
                  topic_set: str | None) -> dict[int, str]:
    """topic id → external id of the topics a report averages over: `judged`, ∩ the topic set."""
    from tcdb.queries import snapshot_topics

    names = snapshot_topics(session.connection(), snapshot_id)
    wanted = set(judged)
    if topic_set is not None:
        from tcdb.topic_sets import topic_set_topic_ids

        wanted &= topic_set_topic_ids(session, collection, topic_set)
    if not wanted:
        where = f" in topic set {topic_set!r}" if topic_set else ""
        raise InputError("--topics" if topic_set else None, None,
                         f"no judged topics{where} to report on")
    return {t: names[t][0] for t in sorted(wanted, key=lambda t: names[t][0])}


def reusability_report(
    collection: str,
    snapshot: str,
    qrels_a: str,
    qrels_b: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    depth: int = 100,
    topics: str | None = None,
    threshold: float = 0.9,
    bootstrap: int = 0,
    seed: int = 0,
    *,
    compute: bool = True,
) -> dict[str, Any]:
    """Compare the run rankings under qrels A and B, per measure (see the module docstring).

    Returns `{collection, snapshot, qrels_a, qrels_b, depth, topic_set, n_topics, threshold,
    measures: {name: {kendall_tau, tau_b, tau_ap, n_runs, n_topics, per_topic_tau{min, median,
    below_threshold}, runs[{tag, score_a, rank_a, score_b, rank_b, rank_change, n_retrieved,
    unjudged_top_k, new_relevant_top_k}], largest_rank_changes[], skipped[], bootstrap?}},
    seconds}`.
    """
    from tcdb.analysis.reusability import reusability_report as analyse
    from tcdb.analysis.reusability import unjudged_and_new_relevant
    from tcdb.catalog import get_snapshot
    from tcdb.evaluation import evaluate, parse_measures
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids
    from tcdb.runs import get_runs

    started = time.perf_counter()
    if depth < 1:
        raise InputError("--depth", None, f"depth must be at least 1, got {depth}")
    if not 0 <= bootstrap <= 1_000_000:
        raise InputError("--bootstrap", None, f"bootstrap samples must be 0…1,000,000, got "
                         f"{bootstrap}")
    if qrels_a == qrels_b:
        raise InputError("--vs", None, f"compare two different qrels sets, not {qrels_a!r} "
                         "with itself")
    names = parse_measures(measures)
    if compute:
        evaluate(collection, snapshot, qrels_a, names, runs)
        evaluate(collection, snapshot, qrels_b, names, runs)
    with session_scope() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        set_a = get_qrels_set(session, snap, qrels_a)
        set_b = get_qrels_set(session, snap, qrels_b)
        run_list: list[Run] = get_runs(session, snap, runs)
        if not run_list:
            raise InputError(None, None, f"snapshot {snapshot!r} has no runs to compare")
        run_ids = [r.id or 0 for r in run_list]
        tags = {r.id or 0: r.tag for r in run_list}
        ids = measure_ids(conn, names)
        done_a = evaluations(conn, set_a.id or 0, run_ids, list(ids.values()))
        done_b = evaluations(conn, set_b.id or 0, run_ids, list(ids.values()))
        scores_a = stored_scores(conn, set_a.id or 0, run_ids, list(ids.values()))
        scores_b = stored_scores(conn, set_b.id or 0, run_ids, list(ids.values()))
        with_entries = [r.id or 0 for r in run_list if r.n_entries > 0]
        top = load_top_k(conn, snap.id or 0, with_entries, depth)
        judgments_a = load_judgments(conn, set_a.id or 0)
        judgments_b = load_judgments(conn, set_b.id or 0)
        judged = set(judgments_a["topic"].unique().tolist()) & set(
            judgments_b["topic"].unique().tolist())
        topic_names = select_topics(session, collection, snap.id or 0, sorted(judged), topics)
    loaded = time.perf_counter()

    wanted = list(topic_names)
    top = top[top["topic"].isin(wanted)]
    judgments_a = judgments_a[judgments_a["topic"].isin(wanted)]
    judgments_b = judgments_b[judgments_b["topic"].isin(wanted)]
    counts = unjudged_and_new_relevant(top, judgments_a, judgments_b)
    by_run = {tags[int(row.run)]: (int(row.n_retrieved), int(row.unjudged_a),
                                   int(row.new_relevant_b))
              for row in counts.itertuples(index=False)}
    has_entries = {tags[r] for r in with_entries}

    result: dict[str, Any] = {
        "collection": collection, "snapshot": snapshot, "qrels_a": qrels_a, "qrels_b": qrels_b,
        "depth": depth, "order": "trec_eval",
        "topic_set": topics, "n_topics": len(topic_names), "threshold": threshold,
        "measures": {},
    }
    for name in names:
        mid = ids.get(name)
        usable = [r for r in run_ids
                  if mid is not None and (r, mid) in done_a and (r, mid) in done_b]
        skipped = [tags[r] for r in run_ids if r not in set(usable)]
        if len(usable) < 2:
            result["measures"][name] = {"n_runs": len(usable), "skipped": skipped,
                                        "error": "fewer than two runs have scores under both "
                                        "qrels sets"}
            continue
        per_a = per_topic_frame(scores_a, usable, tags, mid or 0, topic_names)
        per_b = per_topic_frame(scores_b, usable, tags, mid or 0, topic_names)
        figures = analyse(per_a, per_b, topics=list(topic_names.values()), threshold=threshold)
        for entry in figures["runs"]:
            tag = entry["tag"]
            n, unjudged, new = by_run.get(tag, (0, 0, 0))
            present = tag in has_entries
            entry["n_retrieved"] = n if present else None
            entry["unjudged_top_k"] = unjudged if present else None
            entry["new_relevant_top_k"] = new if present else None
        figures["largest_rank_changes"] = [
            {"tag": e["tag"], "rank_a": e["rank_a"], "rank_b": e["rank_b"],
             "rank_change": e["rank_change"], "new_relevant_top_k": e["new_relevant_top_k"]}
            for e in figures["runs"][:LARGEST_CHANGES] if e["rank_change"] != 0
        ]
        figures["skipped"] = skipped
        if bootstrap:
            from tcdb.analysis.bootstrap import tau_ci

            figures["bootstrap"] = {
                method_key: tau_ci(per_a, per_b, topics=list(topic_names.values()),
                                   method=method, n_samples=bootstrap, seed=seed)
                for method_key, method in (("kendall_tau", "omit_ties"), ("tau_b", "b"))
            }
        result["measures"][name] = figures
    result["seconds"] = {"load": loaded - started, "total": time.perf_counter() - started}
    return result
