"""The per-file barrier of the cross-file step (issue 30): when one file's cross-file facts or its evaluation
raise, that file gets an ``internal_error`` and every other file's findings are still reported, cold and from the
verdict cache (a file whose facts failed is never cached as clean)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from unittest import mock

import pytest

from memzoi.project import crossfile, filefacts
from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths

from . import builders


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "p"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    builders.write(root, builders.record_path("boom"), builders.record("boom"))
    builders.write(root, builders.record_path("other"), builders.record("other", lane=None))
    builders.write(root, builders.record_path("refers"), builders.record("refers", supersedes="gone"))
    return root


def _codes(root: Path, **kw) -> dict[str, set[str]]:
    with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):
        report = check_paths([str(root / ".memzoi")], workers=1, **kw)
    out: dict[str, set[str]] = {}
    for l in report.findings:
        out.setdefault(Path(l.path).stem, set()).add(l.finding.code)
    return out


def _boom_facts(real):
    def facts(analysis):
        if analysis.document.data and analysis.document.data.get("id") == "boom":
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return real(analysis)

    return facts


def test_failing_facts_are_an_internal_error_on_that_file_only(project, monkeypatch):
    monkeypatch.setattr(filefacts, "_facts", _boom_facts(filefacts._facts))
    for run in ({"cache": True}, {"cache": True}, {"cache": False}):  # cold, warm, without the cache
        codes = _codes(project, **run)
        assert codes["boom"] == {"internal_error"}
        assert codes["other"] == {"missing_key"} and codes["refers"] == {"dangling_reference"}


def test_a_failing_evaluation_is_an_internal_error_on_that_file_only(project, monkeypatch):
    real = crossfile.Workspace._evaluate

    def evaluate(self, path, f):
        if f.ident == "boom":
            raise KeyError(path)
        return real(self, path, f)

    monkeypatch.setattr(crossfile.Workspace, "_evaluate", evaluate)
    codes = _codes(project, cache=False)
    assert codes["boom"] == {"internal_error"}
    assert codes["other"] == {"missing_key"} and codes["refers"] == {"dangling_reference"}


def test_failed_facts_survive_the_index_and_stay_out_of_the_graph():
    facts = filefacts.FileFacts(kind="record", role="record", failed=True)
    assert filefacts.FileFacts.from_json(facts.to_json()) == facts
    assert "failed" not in filefacts.FileFacts(kind="record", role="record").to_json()
    ws = crossfile.Workspace.of({"/p/.memzoi/records/a.md": facts})
    (found,) = ws.evaluate(["/p/.memzoi/records/a.md"])["/p/.memzoi/records/a.md"]
    assert found.code == "internal_error"
