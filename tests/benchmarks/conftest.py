"""The benchmarks are run by hand (``python -m tests.benchmarks.run``), never collected as tests; the cheap smoke
test that keeps them working is ``tests/test_bench_smoke.py``."""

collect_ignore_glob = ["*.py"]
