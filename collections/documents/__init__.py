"""Document files: TREC SGML (with TrecDocs' markup rules), JSONL/BEIR, LongEval's URL tables."""
