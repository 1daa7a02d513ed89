"""tcdb.published — results tables an organiser publishes (LongEval: one row per team × run ×
snapshot, one column per ir_measures aggregate): importing.py (`tcdb results import`),
listing.py (`tcdb results list`, and the means the reports read), over_time.py (`tcdb results
over-time`: ARP, RΔ and the relative change across snapshots). Reading the file is
`tcdb.collections.results_tables.organisers`; the rankings across snapshots report reads these
means too
(`tcdb report rankings --from results`).
"""
