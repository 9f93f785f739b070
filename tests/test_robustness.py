"""Nothing one file contains stops a run: the nesting limit of every reader, the per-file exception barrier of
every multi-file path (a fault injected into the analysis of one file among several), OSErrors of the CLI as one
line or a JSON error, and a symlinked ``.memzoi`` reported as ``canonical_path``."""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import sys
from pathlib import Path

import pytest

from memzoi.base.nesting import NESTING_LIMIT, json_too_deep
from memzoi.base.parallel import can_fork
from memzoi.cli.main import main
from memzoi.judge import analysis as analysis_mod
from memzoi.judge.analysis import analyze_text
from memzoi.judge.config import parse_config
from memzoi.ledger import Refusal
from memzoi.lifecycle.materialize import load_artifact
from memzoi.read.yaml12 import load
from memzoi.read.yaml_fast import fast_load
from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths
from memzoi.stores.index import Index

from .test_check_parallel import _record

SECRET = "sk-live-" + "Q7h2Kx9Lm4Pz8Rv1Tn6Wb3Yc5Ud0Fe"  # planted in the faulty file: must never be printed


def _frontmatter(fm: str) -> str:
    return f"---\n{fm}\n---\n\n# T\n\nBody.\n"


def _codes(text: str) -> list[str]:
    return [f.code for f in analyze_text(text, ".memzoi/records/x.md").findings]


def _block_nest(depth: int) -> str:
    return "\n".join(" " * i + f"k{i}:" for i in range(depth)) + " v"


# -- the nesting limit -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fm",
    [
        "x: " + "[" * 500 + "]" * 500,
        "x: " + "{a: " * 500 + "}" * 500,
        _block_nest(400),
        "- " * 2000 + "x",
        "x: " + "[" * 100_000,
    ],
)
def test_deep_nesting_is_a_finding_at_the_default_recursion_limit(fm):
    assert sys.getrecursionlimit() <= 1000
    codes = _codes(_frontmatter(fm))
    assert {"yaml_nesting_limit", "yaml_syntax"} & set(codes), codes


@pytest.mark.parametrize("fm", ["x: " + "[" * 2000 + "]" * 2000, "x: " + "{a: " * 2000 + "}" * 2000])
def test_flow_nesting_past_libyamls_own_limit_is_the_nesting_finding(fm):
    # libyaml's scanner reads ahead through `[[[[…` and stops at its own depth (1,000) before we see the events:
    # that is the nesting limit too, not a syntax error that tells the user to quote characters
    codes = _codes(_frontmatter(fm))
    assert "yaml_nesting_limit" in codes and "yaml_syntax" not in codes, codes


@pytest.mark.parametrize("value", ["9" * 5000, "-" + "9" * 340_000, "0x" + "f" * 5000, "[" + "9" * 5000 + "]"])
def test_an_integer_longer_than_python_converts_is_read(value):
    # int() refuses more than 4,300 digits (found by tests/benchmarks/fuzz_pipeline.py): the value is a float.
    codes = _codes(_frontmatter(f"confidence: {value}\nnote: {value}"))
    assert "internal_error" not in codes and "invalid_value" in codes


def test_nesting_limit_position_and_boundary():
    text = _frontmatter("x: " + "[" * (NESTING_LIMIT + 5) + "]" * (NESTING_LIMIT + 5))
    found = [f for f in analyze_text(text, ".memzoi/records/x.md").findings if f.code == "yaml_nesting_limit"]
    assert len(found) == 1 and found[0].start == text.index("[") + NESTING_LIMIT - 1  # the 65th level opens here
    assert str(NESTING_LIMIT) in found[0].message
    assert "yaml_nesting_limit" not in _codes(_frontmatter(_block_nest(NESTING_LIMIT)))
    assert "yaml_nesting_limit" in _codes(_frontmatter(_block_nest(NESTING_LIMIT + 1)))


@pytest.mark.parametrize("depth", [NESTING_LIMIT - 2, NESTING_LIMIT - 1, NESTING_LIMIT, NESTING_LIMIT + 1])
def test_fast_path_and_full_parser_agree_at_the_limit(depth):
    src = _block_nest(depth)
    full = load(src, 0, len(src), lambda i: (0, len(src)))
    fast = fast_load(src, 0, len(src))
    assert fast is None or (full.root is not None and not full.findings)
    assert (full.root is None) == (depth > NESTING_LIMIT)


def test_json_readers_refuse_deep_nesting(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    assert json_too_deep(deep) == NESTING_LIMIT and json_too_deep('["[[[[", 1]') is None
    artifact = tmp_path / "x.json"
    artifact.write_text('{"a": ' + deep + "}", encoding="utf-8")
    with pytest.raises(Refusal, match="nested more than"):
        load_artifact(artifact)
    with pytest.raises(Refusal, match="no such file; write it first"):  # trial 2: it said "not a regular file"
        load_artifact(tmp_path / "missing.json")
    with pytest.raises(Refusal, match="not a regular file"):
        load_artifact(tmp_path)
    assert parse_config("a = " + "[" * 5000 + "]" * 5000).errors  # tomllib recursion: an error line, no crash
    header = base64.urlsafe_b64encode(('{"alg": ' + deep + "}").encode()).decode().rstrip("=")
    token = f"{header}.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
    analyze_text(_frontmatter(f"title: T\nnote: {token}"), ".memzoi/records/x.md")  # no RecursionError


# -- the exception barrier -----------------------------------------------------------------------------------------


def _workspace(tmp_path: Path, flawed: bool = False) -> Path:
    """Records ``a``, ``boom`` and ``c`` (valid); ``flawed`` gives ``a`` and ``c`` an unknown key, a finding the
    check reports for them."""
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    flaw = "colour: blue\n" if flawed else ""
    (records / "a.md").write_text(_record("a", "Alpha body.", extra=flaw), encoding="utf-8")
    (records / "boom.md").write_text(_record("boom", f"token {SECRET}"), encoding="utf-8")
    (records / "c.md").write_text(_record("c", "Gamma body.", extra=flaw), encoding="utf-8")
    return tmp_path


def inject_fault(monkeypatch, marker_dir: Path | None = None) -> None:
    """Make the analysis of files named ``boom*.md`` raise, with the file's text (a secret) in the message."""
    real = analysis_mod.analyze_text

    def faulty(text, path=None, **kw):
        if path is not None and Path(path).name.startswith("boom"):
            if marker_dir is not None:
                (marker_dir / f"pid-{os.getpid()}").touch()
            raise KeyError(text)  # an exception quoting the file's contents
        return real(text, path, **kw)

    monkeypatch.setattr(analysis_mod, "analyze_text", faulty)


def _by_file(report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for l in report.findings:
        out.setdefault(Path(l.path).name, set()).add(l.finding.code)
    return out


def test_check_in_process_reports_internal_error_and_goes_on(tmp_path, monkeypatch, caplog):
    ws = _workspace(tmp_path)
    clean = _by_file(check_paths([str(ws / ".memzoi")], workers=1))
    inject_fault(monkeypatch)
    caplog.set_level(logging.DEBUG, logger="memzoi.internal")
    # No file changed, so a run with the store would replay the clean report: the fault is in this process only.
    report = check_paths([str(ws / ".memzoi")], workers=1, cache=False)
    found = _by_file(report)
    assert report.files_checked == 3 and report.has_errors
    assert "internal_error" in found["boom.md"]
    assert found.get("a.md") == clean.get("a.md") and found.get("c.md") == clean.get("c.md")
    [f] = [l.finding for l in report.findings if l.finding.code == "internal_error"]
    assert f.severity == 1 and "report" in f.message and "KeyError" in f.message
    assert "Traceback" in caplog.text and "KeyError" in caplog.text
    assert SECRET not in caplog.text and SECRET not in f.message


@pytest.mark.skipif(not can_fork(), reason="worker processes need fork in a single-threaded process")
def test_check_workers_report_internal_error_and_go_on(tmp_path, monkeypatch):
    ws = _workspace(tmp_path)
    for i in range(6):
        (ws / ".memzoi" / "records" / f"x{i}.md").write_text(_record(f"x{i}", f"Body {i}."), encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    inject_fault(monkeypatch, markers)
    monkeypatch.setattr(check_mod, "PARALLEL_THRESHOLD", 2)
    monkeypatch.setattr(check_mod, "CHUNK", 2)
    report = check_paths([str(ws / ".memzoi")], workers=2)
    assert [p.name for p in markers.iterdir()] != [f"pid-{os.getpid()}"]  # the fault ran in a worker process
    assert report.files_checked == 9
    assert "internal_error" in _by_file(report)["boom.md"]
    assert not any(l.finding.code == "internal_error" for l in report.findings if Path(l.path).name != "boom.md")


def test_cli_check_prints_no_traceback(tmp_path, monkeypatch, capsys):
    ws = _workspace(tmp_path, flawed=True)  # the other files' findings are printed beside the internal error
    inject_fault(monkeypatch)
    assert main(["check", str(ws / ".memzoi")]) == 1
    out, err = capsys.readouterr()
    assert "boom.md:1:1: internal_error" in out and "a.md:" in out and "c.md:" in out
    assert "Traceback" not in out + err and SECRET not in out + err


def test_rebuild_search_and_doctor_go_on(tmp_path, monkeypatch, capsys):
    ws = _workspace(tmp_path)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(ws)
    inject_fault(monkeypatch)
    assert main(["rebuild", "--json"]) == 0
    capsys.readouterr()
    with Index(ws) as index:
        rows = {r["path"]: json.loads(r["findings"]) for r in index.db.execute("SELECT path, findings FROM files")}
        assert {Path(p).name for p in rows} == {"a.md", "boom.md", "c.md"}
        assert [f["code"] for f in rows[".memzoi/records/boom.md"]] == ["internal_error"]
        assert index.search("Gamma") and not index.search("token")
    # search refreshes changed files first: the fault meets a changed file again, and the others are found
    (ws / ".memzoi" / "records" / "boom.md").write_text(_record("boom", f"changed {SECRET}"), encoding="utf-8")
    assert main(["search", "Alpha", "--json"]) == 0
    assert "a.md" in capsys.readouterr().out
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [check] = [c for c in report["checks"] if c["name"] == "analysis"]
    assert check["status"] == "warning" and "boom.md" in check["message"]
    out, err = capsys.readouterr()
    assert SECRET not in out + err


# -- CLI: OSErrors are one line, or a JSON error ----------------------------------------------------------------

LONG = "p" * 300


@pytest.mark.parametrize(
    "argv",
    [
        ["proposals", "apply", LONG],
        ["proposals", "reject", LONG, "--reason", "r"],
        ["proposals", "route-local", LONG],
        ["proposals", "show", LONG],
        ["tombstone", LONG, "--reason", "r"],
        ["supersede", LONG, "--title", "T", "--body", "B", "--reason", "r"],
        ["reattest", LONG],
        ["history", LONG],
    ],
)
def test_a_300_character_name_is_an_error_not_a_traceback(tmp_path, monkeypatch, capsys, argv):
    ws = _workspace(tmp_path)
    (ws / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    code = main([*argv, "--root", str(ws), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    error = json.loads(out)["error"]
    assert set(error) == {"code", "message"} and error["code"] == "name_too_long", error
    assert re.search(r"…p+(\.md)? \(3\d\d characters\)", error["message"]), error  # the name, shortened
    code = main([*argv, "--root", str(ws)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("memzoi: ")


@pytest.mark.parametrize("errno_name", ["EACCES", "EROFS", "ENOSPC", "EIO", "ELOOP", "ENAMETOOLONG"])
@pytest.mark.parametrize("as_json", [True, False])
def test_every_os_error_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys, errno_name, as_json):
    import errno

    from memzoi.cli import history

    (tmp_path / ".memzoi").mkdir()
    monkeypatch.chdir(tmp_path)  # a project: outside one the dispatcher stops before the command

    number = getattr(errno, errno_name)

    def fail(_args):
        raise OSError(number, os.strerror(number), "/x/.memzoi/records/a.md")

    monkeypatch.setattr(history, "run", fail)  # dispatch is the only place that may turn it into a message
    code = main(["history", "a", *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    if as_json:
        error = json.loads(out)["error"]
        assert error["code"] != "os_error" and error["message"].startswith("/x/.memzoi/records/a.md: ")
    else:
        assert out == "" and err.count("\n") == 1 and err.startswith("memzoi: ")
        assert err.split(": ", 2)[2].startswith("/x/.memzoi/records/a.md: ")  # memzoi: CODE: FILE: …


def test_an_unexpected_exception_is_an_internal_error_line(tmp_path, monkeypatch, capsys):
    from memzoi.cli import history

    (tmp_path / ".memzoi").mkdir()
    monkeypatch.chdir(tmp_path)

    def fail(_args):
        raise KeyError(SECRET)

    monkeypatch.setattr(history, "run", fail)
    assert main(["history", "a", "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["code"] == "internal_error" and SECRET not in out + err


# -- symlinked .memzoi ------------------------------------------------------------------------------------------


def test_symlinked_memzoi_and_managed_folders_are_canonical_path(tmp_path, monkeypatch, capsys):
    real = _workspace(tmp_path / "elsewhere") / ".memzoi"
    project = tmp_path / "project"
    project.mkdir()
    (project / ".memzoi").symlink_to(real, target_is_directory=True)
    for arg in (project, project / ".memzoi", project / ".memzoi" / "records"):
        report = check_paths([str(arg)])
        assert report.files_checked == 0, arg
        # ours, and Memzoi's code for a path through a symlink beside it
        assert [l.finding.code for l in report.findings] == ["canonical_path", "unsafe_output_path"], arg
    monkeypatch.chdir(project)
    assert main(["check"]) == 1
    assert "canonical_path" in capsys.readouterr().out
    # a symlinked records folder inside a real .memzoi
    other = tmp_path / "other"
    (other / ".memzoi").mkdir(parents=True)
    (other / ".memzoi" / "records").symlink_to(real / "records", target_is_directory=True)
    for arg in (other, other / ".memzoi", other / ".memzoi" / "records"):
        report = check_paths([str(arg)])
        assert report.files_checked == 0 and {l.finding.code for l in report.findings} == {
            "canonical_path",
            "unsafe_output_path",
        }, arg


@pytest.mark.parametrize("linked", [".memzoi", "records", "proposals"])
def test_nothing_reads_through_a_symlinked_git_plane_folder(tmp_path, monkeypatch, capsys, linked):
    """rebuild, search, doctor and proposals refuse as check reports (canonical_path); the index, the server's
    scan and its watcher never take a file below the link."""
    from memzoi.judge.workspace import through_linked_plane
    from memzoi.project.projectfiles import ProjectFiles
    from memzoi.stores.planelisting import walk

    real = _workspace(tmp_path / "elsewhere") / ".memzoi"
    (real / "proposals" / "pending").mkdir(parents=True)
    (real / "proposals" / "pending" / "p.md").write_text("---\nid: p\n---\n", encoding="utf-8")
    project = tmp_path / "project"
    memzoi_dir = project / ".memzoi"
    if linked == ".memzoi":
        project.mkdir()
        memzoi_dir.symlink_to(real, target_is_directory=True)
    else:
        memzoi_dir.mkdir(parents=True)
        (memzoi_dir / linked).symlink_to(real / linked, target_is_directory=True)
    link = memzoi_dir if linked == ".memzoi" else memzoi_dir / linked
    below = (
        link / ("a.md" if linked == "records" else "pending/p.md")
        if linked != ".memzoi"
        else memzoi_dir / "records" / "a.md"
    )
    assert below.is_file()
    for argv in (["rebuild"], ["search", "alpha"], ["proposals", "list"], ["proposals", "show", "p"]):
        capsys.readouterr()
        assert main([*argv, "--root", str(project), "--json"]) == 1, argv
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "canonical_path" and str(link) in error["message"], (argv, error)
        assert main([*argv, "--root", str(project)]) == 1
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and "symlink" in err, (argv, err)
    main(["doctor", "--root", str(project), "--json"])
    report = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["canonical_path"]["status"] == "warning" and str(link) in checks["canonical_path"]["message"]
    assert report["drift"] is None and "memzoi rebuild" not in report["next_steps"]
    # The index and the language server's scan and watcher list nothing below the link.
    assert str(below) not in walk(project).paths()
    with Index(project) as index:
        assert index.rebuild().files == len(walk(project).stamps)
        assert index.search("alpha") == []
    # The server's scan lists what the project's ProjectFiles lists; its watcher events go through apply_events.
    tracked = ProjectFiles(memzoi_dir)
    assert str(below) not in tracked.listing() and str(below.resolve()) not in tracked.listing()
    assert not tracked.apply_events([below])
    assert through_linked_plane(memzoi_dir, below)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_folder_depth_never_drives_recursion(tmp_path):
    """A folder tree deeper than the stack allows is walked: the walks keep their folders on an explicit stack.
    (Measured with a lowered recursion limit, so the tree stays small enough for any clean-up to remove.)"""
    from memzoi.judge.workspace import walk

    records = tmp_path / ".memzoi" / "records"
    deep = records.joinpath(*["d"] * 150)
    deep.mkdir(parents=True)
    (deep / "x.md").write_text(_record("x", "Deep."), encoding="utf-8")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 120)  # far less than the tree's depth plus what a check needs
    try:
        report = check_paths([str(tmp_path / ".memzoi")], workers=1)
        files = walk(records).files
    finally:
        sys.setrecursionlimit(limit)
    assert report.files_checked == 1 and report.findings  # found, read and placed (its id is not its path)
    assert [f.name for f in files] == ["x.md"]
