"""tcdb.judging — qrels sets and judgments: qrels.py (qrels sets, and `store_qrels`, the one
writer every path uses), pooled.py (assessors' judgments on a pool into a `pooled` qrels set,
and the `expanded` set), by_source.py (a snapshot's qrels per document source).
"""
