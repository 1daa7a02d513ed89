"""Assessment pools: build a depth-k pool over chosen runs, export it blind, import judgments.

A pool is computed inside the database: one `INSERT INTO pool_entry … SELECT` takes each chosen
run's top `depth` per topic — a range of `run_entry`'s key, which holds trec_eval's order as
`eval_rank` — and groups them per (topic, document) with the best rank and the number of runs
that retrieved the document in their top `depth`. Runs are never loaded into Python.

Tie orders (how equal scores are broken when ranking a run):

* `trec_eval` — score descending, then external document id descending (byte order), as
  trec_eval and ir_measures sort a run; the default, so a pool matches what evaluation sees.
* `docid-asc` — score descending, then document id ascending: trectools' `TrecRun` order, so
  pools equal `TrecPoolMaker().make_pool(..., strategy="topX")`.
* `file-rank` — the rank column of the run file (then the trec_eval order for equal ranks).

Entries the snapshot does not have (`run_entry_unresolved`) keep their place in the ranking —
a run's top k is what it submitted — but cannot be judged, so they are left out of the pool and
counted in the report. `max_per_topic` caps each topic at N documents, keeping those with the
best rank first, then those more runs retrieved, then by document id.

Budgeted pools (`--strategy NAME --budget N`) take the first N documents of a pooling
strategy's judging order instead (`tcdb.pools.strategies`: depth, rrf, rbp, mtf, maxmean;
`budgeted`, `rankings`), keep that order, and grow in rounds (`rounds`); `simulation` and
`simulate` try strategies on a complete qrels set before anyone judges.

Judgments on a pool are imported by `tcdb.judging.pooled`.

Each step is an operation (`tcdb.operations`): `pool_build`, `pools`, `pool_show`,
`pool_export`, `pool_next_round` here, `pool_import_judgments` and `pool_expand` in
`tcdb.judging.pooled`; call them as `tcdb.api.pool_build(…)`.
"""

from tcdb.pools.build import pool_build
from tcdb.pools.export import pool_export
from tcdb.pools.inspect import count_judged, get_pool, pool_documents, pool_show, pools
from tcdb.pools.rounds import pool_next_round

__all__ = ["count_judged", "get_pool", "pool_build", "pool_documents", "pool_export",
           "pool_next_round", "pool_show", "pools"]
