"""Benchmarks behind ``tacocat-arena bench``: each prints figures, none asserts a time."""
