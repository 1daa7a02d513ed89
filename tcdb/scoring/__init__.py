"""tcdb.scoring — per-topic scores: evaluate.py (runs scored with ir_measures and stored),
scores.py (score tables with trec_eval semantics; importing published scores), measures.py
(measures by their ir_measures names), cross_snapshot.py (an old run on a newer snapshot's qrels).
"""
