"""Timing scripts run by `make bench`: each `bench_*.py` module prints `name: value unit (target ...)` lines."""
