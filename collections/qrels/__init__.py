"""Relevance judgments: TREC qrels and BEIR TSV."""
