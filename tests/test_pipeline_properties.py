"""Whole-pipeline property tests at the default recursion limit: a mutated real file (deep and wide nesting,
huge lines, every mutation kind of :mod:`tests.mutations`) placed in a workspace beside clean files is analysed,
checked (admission, cross-file, located findings) and turned into its index row without an exception, without an
``internal_error`` (which would mean the barrier caught one), and with every finding inside the text.

``tests/benchmarks/fuzz_pipeline.py`` runs the same pipeline over 200,000 and more inputs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths
from memzoi.stores.fileentry import entry_chunk, indexed

from .mutations import MUTATIONS, PLACES, mutate, seeds
from .test_properties import _check_spans

SEEDS = seeds()

steps = st.lists(
    st.tuples(st.sampled_from(sorted(MUTATIONS)), st.floats(0, 1), st.integers(0, 3000), st.binary(max_size=12)),
    min_size=1,
    max_size=3,
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A record and a pending packet of the example workspace (with its settings) for the mutated file to join."""
    root = tmp_path_factory.mktemp("pipeline")
    examples = Path(__file__).resolve().parents[1] / "examples" / ".memzoi"
    for rel in ("config.toml", "records/use-pnpm-for-installs.md", "proposals/pending/prefer-small-pull-requests.md"):
        (root / ".memzoi" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(examples / rel, root / ".memzoi" / rel)
    return root


DEFAULT_RECURSION_LIMIT = 1000  # CPython's; hypothesis raises the limit while it runs a test


def run_pipeline(root: Path, place: str, data: bytes) -> list[str]:
    """Write ``data`` at ``.memzoi/<place>`` beside the example workspace, check the whole workspace and index the
    file at the default recursion limit; return the problems found (an empty list when the pipeline held)."""
    md = root / ".memzoi"
    target = md / place
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    problems: list[str] = []
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:
        with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):  # git is not the subject
            report = check_paths([str(md)], workers=1)
        for located in report.findings:
            if located.finding.code == "internal_error":
                problems.append(f"internal_error on {located.path}")
            if located.start > located.end:
                problems.append(f"inverted range {located.finding.code}")
        made = entry_chunk([(str(target), "unknown")], now=None, root=str(md.parent))[0]
        row = made.row if made is not None and made.row is not None else None
        if indexed(target) == (row is None) or row is not None and '"internal_error"' in row["file"]["findings"]:
            problems.append("index row failed")
    except Exception as err:  # noqa: BLE001 - counted, never raised: this is what is measured
        problems.append(f"{type(err).__name__} escaped")
    finally:
        sys.setrecursionlimit(limit)
        target.unlink()
    return problems


@settings(
    max_examples=1000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(st.sampled_from(range(len(SEEDS))), steps, st.sampled_from(PLACES))
def test_mutated_files_never_break_the_pipeline(workspace, seed, mutation_steps, place):
    data = mutate(SEEDS[seed], mutation_steps)
    assert run_pipeline(workspace, place, data) == []


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SEEDS))), steps, st.sampled_from(["records/m.md", "proposals/pending/m.md", None]))
def test_mutated_files_analyse_with_valid_spans(seed, mutation_steps, path):
    from memzoi.judge.analysis import analyze_bytes

    data = mutate(SEEDS[seed], mutation_steps)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:
        analysis = analyze_bytes(data, path and f".memzoi/{path}")
    finally:
        sys.setrecursionlimit(limit)
    _check_spans(analysis)
