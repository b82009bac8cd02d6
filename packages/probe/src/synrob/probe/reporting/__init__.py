"""Results folders as tables, and their comparison across models, seeds and runs (table, figures, report.html)."""
