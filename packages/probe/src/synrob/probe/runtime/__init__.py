"""The conditions a computation runs in: progress, clocks, torch threads, numeric precision, provenance, carrier files."""
