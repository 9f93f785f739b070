"""Every escape YAML allows, in every field of records and packets: no exception anywhere in the pipeline.

A record or packet gets one double-quoted value built of YAML escapes (:mod:`tests.escapes`: lone surrogates,
``\\x``, ``\\u``, ``\\U`` past U+10FFFF, ``\\0 \\e \\N \\_ \\L \\P`` ...) in one field or as a key, beside a
clean record whose ``missing_key`` must be reported. The whole-project check (cold, then from the verdict cache),
a check of the file alone, every output format, the index (rebuild and search) and the hashes all run without an
exception or an ``internal_error``; a value that decodes to a lone surrogate is reported as ``invalid_encoding``
on that value. ``tests/benchmarks/fuzz_escapes.py`` runs the same over 200,000 inputs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths

from . import escapes

pieces = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 200)), min_size=1, max_size=6)
field = st.sampled_from(escapes.KINDS).flatmap(
    lambda kind: st.tuples(st.just(kind), st.sampled_from(escapes.fields_of(kind)))
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("escapes")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    escapes.workspace(root)
    return root


def _problems(root: Path, rel: str, pieces_: list[tuple[int, int]]) -> list[str]:
    md = root / ".memzoi"
    target = root / rel
    problems: list[str] = []
    with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):  # git is not the subject
        for label, args, kw in (
            ("cold", [str(md)], {"cache": True}),
            ("warm", [str(md)], {"cache": True}),
            ("alone", [str(target)], {"cache": False}),
        ):
            report = check_paths(args, workers=1, **kw)
            codes = {(Path(l.path).name, l.finding.code) for l in report.findings}
            if any(code == "internal_error" for _, code in codes):
                problems.append(f"{label}: internal_error")
            if label != "alone" and (f"{escapes.SENTINEL[0]}.md", escapes.SENTINEL[1]) not in codes:
                problems.append(f"{label}: the other file's finding is missing")
            if escapes.decoded_surrogate(pieces_) and (target.name, "invalid_encoding") not in codes:
                problems.append(f"{label}: no invalid_encoding")
            problems += [f"{label}: {p}" for p in escapes.check_outputs(report)]
    return problems


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(field, pieces)
def test_escaped_values_never_break_a_check(project, where, pieces_):
    kind, path = where
    rel, text = escapes.escaped_file(kind, path, pieces_)
    target = project / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8"))
    try:
        assert _problems(project, rel, pieces_) == []
    finally:
        target.unlink()


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(field, pieces)
def test_escaped_values_are_indexed_and_searched(tmp_path_factory, where, pieces_):
    from memzoi.stores.index import Index

    root = tmp_path_factory.mktemp("indexed")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    escapes.workspace(root)
    kind, path = where
    rel, text = escapes.escaped_file(kind, path, pieces_)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(text.encode("utf-8"))
    try:
        with Index(root) as ix:
            result = ix.rebuild()
            assert result.files == 3
            ix.search("Body")
            rows = ix.db.execute("SELECT path, findings FROM files").fetchall()
        assert not any('"internal_error"' in findings for _, findings in rows)
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize(
    "kind,path",
    [
        ("record", ("supersedes",)),
        ("record", ("proposal_id",)),
        ("record", ("lineage", "predecessor_id")),
        ("record", ("id",)),
        ("record", ("tags", 0)),
        ("supersede", ("proposal", "target")),
        ("create", ("id",)),
        ("applied", ("id",)),
        ("rejected", ("id",)),
        ("tombstone", ("supersedes", 0)),
    ],
)
def test_a_lone_surrogate_in_a_reference_is_an_invalid_encoding_on_its_value(project, kind, path):
    """The reproduction of issue 30: a reference holding `\\uD800` silenced every check; now the file gets
    `invalid_encoding` spanned on that value, and the other files' findings are printed."""
    from memzoi.judge.analysis import analyze_path

    rel, text = escapes.escaped_file(kind, path, [(3, 0), (0, 1)])
    target = project / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8"))
    try:
        found = [f for f in analyze_path(target).findings if f.code == "invalid_encoding"]
        assert [text[f.start : f.end] for f in found] == ['"\\uD800use-pnpm"']
        assert _problems(project, rel, [(3, 0)]) == []
    finally:
        target.unlink()
