"""Figures and self-contained HTML pages drawn from rows, leaving matplotlib's global state alone."""
