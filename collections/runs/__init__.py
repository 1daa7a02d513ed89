"""TREC run files: the general reader and writer, and the fast path for well-formed runs."""
