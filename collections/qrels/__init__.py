"""Relevance judgments: TREC qrels and BEIR TSV, and who judged them (provenance sidecars,
answers, UMBRELA's outputs)."""
