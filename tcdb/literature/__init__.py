"""tcdb.literature — results reported in the literature: reported.py (import, list and report
on them). Reading literature files is `tcdb.collections.literature`; the pure comparison is
`tcdb.analysis.literature`.
"""
