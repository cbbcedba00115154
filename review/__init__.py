"""Post-match review of a finished `referee run` (docs/review.md)."""
