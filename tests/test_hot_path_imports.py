"""The per-file work of a cold check runs no import statement of the core's own modules.

The analysis stack is imported lazily (a check served from the store loads none of it), but a lazy ``from ..x import
y`` inside a function costs 1.5–3 µs at every call even when the module is loaded (relative resolution, the spec's
``parent`` in Python), and a cold check made ten of them per file (about 4.5 % of a worker's instructions at 10k).
The functions a worker runs per file keep what they import (``functools.cache`` loaders). This test fails when an
import statement of the core runs again once every module is loaded.
"""

from __future__ import annotations

import builtins
import os
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from memzoi.judge import pathsafety
from memzoi.runs.checkfiles import check_chunk
from tests.benchmarks.generate import generate


def _jobs(root: str) -> list[tuple[str, str]]:
    found = []
    for folder, _, names in os.walk(os.path.join(root, ".memzoi")):
        found += [(os.path.join(folder, n), os.path.relpath(os.path.join(folder, n), root)) for n in names]
    return sorted(found)


def test_a_cold_checks_per_file_work_imports_nothing_of_the_core_once_loaded(tmp_path, monkeypatch):
    ws = generate(tmp_path / "ws", 40, seed=5, git=False)  # records, packets, planted secrets, legacy files
    jobs = _jobs(str(ws.root))
    now = datetime(2026, 12, 5, tzinfo=UTC)
    first = check_chunk(now, jobs)  # loads every module the analysis needs
    pathsafety._secret_hits.cache_clear()  # so the second run scans every path again
    seen: Counter[tuple[str, str, int]] = Counter()
    real = builtins.__import__

    def counting(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        caller = (globals or {}).get("__name__", "")
        if level > 0 or name.startswith("memzoi"):
            seen[(caller, name, level)] += 1
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", counting)
    again = check_chunk(now, jobs)
    monkeypatch.setattr(builtins, "__import__", real)
    assert len(jobs) >= 40 and {c.stage.facts.kind for c in again} >= {"record", "proposal"}
    assert [(c.display, c.stage.first) for c in again] == [(c.display, c.stage.first) for c in first]
    assert not seen, f"import statements run per file: {dict(seen)}"
