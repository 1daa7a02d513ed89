"""Per-topic scores computed elsewhere: trec_eval -q / ir_measures output and tidy tables."""
