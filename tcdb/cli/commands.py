"""The commands of `tcdb`, for the root help and for each group's own help: one summary each,
said once. Kept apart from `tcdb.cli.app` so a group module can take its summary from here
without importing the root (which loads the groups)."""

from __future__ import annotations

# Every command, in the order and the panels of `tcdb --help`: (module under tcdb.cli,
# attribute, name, panel, summary). An attribute named `app` is a Typer group, anything else
# a command; the summary is what `tcdb --help` says of it without importing the module.
COMMANDS: list[tuple[str, str, str, str, str]] = [
    ("demo", "demo", "demo", "Start here", "Build a demo database: a generated LongEval-shaped "
     "collection through ingest, runs, evaluation, pooling, judging and the reusability and "
     "persistence reports."),
    ("dashboard", "dashboard", "dashboard", "Start here",
     "Browse snapshot drift, persistence, reusability, pools and run comparisons."),
    ("info", "info", "info", "Start here",
     "Show the database URL (password masked), schema revision and row counts per table."),
    ("collection", "app", "collection", "Collections and snapshots", "Declare test "
     "collections and how documents and topics keep their identity across snapshots."),
    ("snapshot", "app", "snapshot", "Collections and snapshots",
     "Ingest snapshots of a collection and compare them."),
    ("topics", "app", "topics", "Collections and snapshots",
     "Topics of a collection: named topic sets for restricting reports."),
    ("run", "app", "run", "Runs, qrels and scores",
     "Import, fix, delete and list runs (TREC run files) of a snapshot."),
    ("qrels", "app", "qrels", "Runs, qrels and scores",
     "Import, export and list qrels sets (immutable once imported)."),
    ("evaluate", "evaluate", "evaluate", "Runs, qrels and scores",
     "Evaluate runs of a snapshot against a qrels set and print the means (trec_eval -c)."),
    ("scores", "app", "scores", "Runs, qrels and scores",
     "Score tables, and importing published per-topic scores (trec_eval -q output)."),
    ("results", "app", "results", "Runs, qrels and scores", "Results tables published by "
     "organisers (team × run × snapshot aggregates): import, list, follow over snapshots."),
    ("pool", "app", "pool", "Assessment",
     "Build pools, export them blind for assessors, import judgments, simulate strategies."),
    ("report", "app", "report", "Reports", "Reports: reusability (τ, new relevant, leave-out), "
     "persistence (ARP, RΔ, ER, ΔRI), rankings across snapshots, run comparisons, and one "
     "system between two snapshots (topic deltas, ranking agreement)."),
    ("literature", "app", "literature", "Reports", "Results reported in the literature: best "
     "and baseline figures per publication, trends per model category, gains over a "
     "reference."),
    ("flows", "app", "flows", "Operations",
     "Prefect flows: the deployments, their status, run one now."),
    ("serve", "serve", "serve", "Operations",
     "Serve the scheduled flows: ingestion of the specs you name, hourly run imports and "
     "evaluation."),
    ("db", "app", "db", "Operations", "Create and migrate the database schema (Alembic)."),
]


def summary(name: str) -> str:
    """What `tcdb --help` says of the command or group `name`: a group's own help says the
    same (`typer.Typer(help=summary("qrels"))`), so the two cannot drift apart."""
    return next(entry[4] for entry in COMMANDS if entry[2] == name)
