"""The read side shared by reports, the Python API, flows and the dashboard: Core SQL → rows,
arrays and DataFrames.

Functions here take a Connection (or a Session, whose transaction they then share), never
open transactions of their own and never write, so the dashboard can use them on a read-only
engine. By what they read: `lookups` (external ids → integer keys), `runs` (run metadata,
rankings, top k), `scores` (evaluations and per-topic scores), `qrels` (judgments), `topics`
(topics across snapshots, core topics, topic sets), `snapshots` (what changed between two);
imported by module: `churn` (how one snapshot's documents became another's), `rankings`
(one system's runs across snapshots, rankings by document identity) and `snapshot_stats`
(token lengths, documents in all, judgments by grade).
pandas is imported inside the functions that return DataFrames.
"""

from tcdb.queries.lookups import (
    array_literal,
    document_ids,
    document_ids_in_collection,
    document_ids_of,
    document_names,
    pairs_in,
    rows_in,
    topic_ids,
)
from tcdb.queries.qrels import (
    judgment_counts,
    load_judgments,
    qrels_dict,
    qrels_frame,
    qrels_of,
    qrels_records,
    qrels_topics,
    relevant_documents,
    unresolved_judgments,
)
from tcdb.queries.runs import (
    RUN_COLUMNS,
    RunDict,
    load_top_k,
    read_runs,
    relevant_ranks,
    run_rows,
    runs_frame,
)
from tcdb.queries.scores import (
    ScoreMap,
    evaluations,
    measure_ids,
    measure_names,
    score_rows,
    stored_scores,
)
from tcdb.queries.snapshots import (
    UNLABELLED,
    document_drift,
    document_sources,
    documents_per_source,
    qrels_summary,
    topic_drift,
)
from tcdb.queries.topics import (
    core_topic_ids,
    get_topic_set,
    snapshot_topics,
    topic_set_topic_ids,
)

__all__ = [
    "RUN_COLUMNS", "UNLABELLED", "RunDict", "ScoreMap", "array_literal", "core_topic_ids",
    "document_drift", "document_sources", "documents_per_source",
    "document_ids", "document_ids_in_collection", "document_ids_of", "document_names",
    "evaluations", "get_topic_set", "judgment_counts", "load_judgments", "load_top_k",
    "measure_ids", "measure_names", "pairs_in", "qrels_dict", "qrels_frame", "qrels_of",
    "qrels_records", "qrels_summary",
    "qrels_topics", "read_runs", "relevant_documents", "relevant_ranks", "rows_in", "run_rows",
    "runs_frame", "score_rows", "snapshot_topics", "stored_scores", "topic_drift", "topic_ids",
    "topic_set_topic_ids", "unresolved_judgments",
]
