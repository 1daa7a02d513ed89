"""What assessors receive (blind pools) and what they send back (judgments)."""
