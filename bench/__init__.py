"""Benchmarks for remora: run ``python -m bench --help``."""
