"""Reports over stored per-topic scores: temporal persistence (ARP, RΔ, ER, ΔRI, p-values
against a pivot system) and pairwise significance with the one-relevant-per-topic outcome
breakdown.

Each report reads the database with Core SQL, hands plain DataFrames to the pure functions of
`tcdb.analysis` (never re-implementing them) and returns JSON-able dicts the CLI prints.
pandas, scipy and ir_measures are imported inside the functions, so importing this package is
cheap.
"""

from __future__ import annotations

__all__ = ["compare", "persistence"]
