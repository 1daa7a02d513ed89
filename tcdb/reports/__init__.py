"""Reports: what the CLI's `tcdb report …`, the Python API and the dashboard show.

One module per report — `reusability` (τ between rankings under two qrels sets, new relevant
per run), `leave_out` (Zobel's uniques test), `persistence` (ARP, RΔ, ER, ΔRI and p-values
against a pivot across snapshots), `compare` (pairwise significance, outcome breakdown),
`drift` (what changed between two snapshots), `snapshot_stats` (sizes, token lengths, churn by
length, judgments by grade), `topic_deltas` and `agreement` (one system's per-topic change and
ranking agreement between two snapshots), `cross_persistence` (the first snapshot's runs on
every snapshot's qrels), `source_bias` (human-written against LLM-generated documents,
Cocktail's Relative Δ), `subset` (a run's mean over a topic subset against the bootstrap
interval of its full mean) — and `common`, what several assemble alike.

Each report reads through `tcdb.queries`, hands plain DataFrames to the pure functions of
`tcdb.analysis` (never re-implementing them) and returns JSON-able dicts. A report reads: it
stores qrels sets only when asked (`save`). pandas, scipy and ir_measures are imported inside
the functions, so importing this package is cheap.
"""

from __future__ import annotations

__all__ = ["agreement", "common", "compare", "cross_persistence", "drift", "leave_out",
           "persistence", "reusability", "snapshot_stats", "source_bias", "subset",
           "topic_deltas"]
