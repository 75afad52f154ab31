"""Benchmarks for carrytool: synthetic upstreams, three runners on the same inputs, ratios side by side.

Run with `make bench` (or `python -m bench --help`). Not timed tests: speed goals live here as ratios.
"""
