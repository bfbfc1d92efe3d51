"""Benchmarks: figures and ratios, printed and recorded in results.json (never asserted in tests)."""
