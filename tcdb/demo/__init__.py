"""tcdb.demo — `tcdb demo`, the whole mission end to end on data whose right answers are known.

`run.py` runs the LongEval-shaped longitudinal part, `bias.py` the Cocktail-shaped source-bias
part; the rest generates their data (`generate.generate_demo`). This package imports nothing:
the demo sets `IR_DATASETS_HOME` before anything imports ir_datasets (`longeval_files` does).

Why: `tcdb demo` must teach what tcdb does on data where the truth is known, and the tests need
the same data small. `generate_demo` builds, from one seed (a numpy Generator, so the same seed
writes the same bytes):

* three monthly ``longeval-web`` snapshots (2022-06, 2022-07, 2022-09) with churn between
  consecutive ones — documents removed, added and rewritten (rewritten ones get a new numeric id,
  a few unchanged ones are re-numbered, URLs always stay: the collection's doc identity is
  ``url``) — written in the on-disk layout ir-datasets-longeval reads (`write_longeval_web`)
  under ``out_dir/ir_datasets``, so they are ingested through ``--irds longeval-web/<label>``;
* topics that drift: kept ones re-numbered with the same text (topic identity ``text``), a few
  dropped, a few new;
* a hidden relevance truth per (topic, document version), and "original" graded qrels built as a
  campaign would: a depth-`pool_depth` pool over the *contributing* runs, judged by a simulated
  assessor (the truth with a little seeded disagreement). Relevant documents that only
  non-contributing runs rank high stay unjudged;
* ten systems with planted behaviour (`SYSTEMS`): a BM25-like pivot, one whose advantage over it
  persists (ER ≈ 1), one that decays (ER < 0.8), one that improves (ER > 1.2), noisy ones, and a
  "magical" non-contributing manual run that finds relevant documents sharing no words with the
  query (vocabulary mismatch), which the lexical runs never rank high, so the pools never saw
  them. Depth-`depth` TREC runs go to ``out_dir/runs/<label>/<tag>.run``; tags are stable across
  snapshots (system = tag).

How a run is made: per topic, each system scores a fixed candidate set (the topic's relevant
documents plus lexical look-alikes) as ``strength × grade + shared noise + own noise`` and keeps
the top `depth` documents present in the snapshot. The noise of a (system, topic, document) is
drawn once and reused in every snapshot, so per-topic differences between systems persist unless
the planted strength changes — which is what makes the planted effect ratios come out clean.

Everything is vectorised; the default size (20,000 documents, 100 topics, 10 runs of depth 1,000
in three snapshots) takes a few seconds, most of it writing three million run lines.
"""
