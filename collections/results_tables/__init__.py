"""Results published as tables: organisers' results tables and figures from the literature."""
