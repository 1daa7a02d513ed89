"""tcdb.literature — results reported in the literature: reported.py (import, list and report
on them). Reading literature files is `tcdb.collections.results_tables.literature`; the pure
comparison is
`tcdb.analysis.literature`.
"""
