"""The per-file work of a cold check's workers: no import statement of the core's own modules runs per file, and
what a worker sends back crosses the pipe unchanged.

The analysis stack is imported lazily (a check served from the store loads none of it), but a lazy ``from ..x import
y`` inside a function costs 1.5–3 µs at every call even when the module is loaded (relative resolution, the spec's
``parent`` in Python), and a cold check made ten of them per file (about 4.5 % of a worker's instructions at 10k).
The functions a worker runs per file keep what they import (``functools.cache`` loaders). This test fails when an
import statement of the core runs again once every module is loaded.
"""

from __future__ import annotations

import builtins
import os
import pickle
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


def test_what_a_worker_sends_back_unpickles_equal_field_for_field(tmp_path):
    # FirstStage and FileFacts pickle as their fields in declaration order (read by one attrgetter each)
    ws = generate(tmp_path / "ws", 30, seed=9, git=False)
    sent = check_chunk(datetime(2026, 12, 5, tzinfo=UTC), _jobs(str(ws.root)))
    back = pickle.loads(pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == sent
    for theirs, ours in zip(back, sent, strict=True):
        for name in ours.stage.__dataclass_fields__:
            assert getattr(theirs.stage, name) == getattr(ours.stage, name), name
        for name in ours.stage.facts.__dataclass_fields__:
            assert getattr(theirs.stage.facts, name) == getattr(ours.stage.facts, name), name
    assert any(c.stage.boundary is not None for c in sent) or any(c.stage.facts.refs for c in sent)
