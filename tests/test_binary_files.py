"""A file below ``.memzoi`` that is not text (an image, an archive, random bytes): Memzoi's ``invalid_encoding``
stays, and every other code gives one finding with a count instead of one per byte (memzoi.judge.binary)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base.findings import Finding
from memzoi.cli.main import main
from memzoi.judge import analysis as analysis_module
from memzoi.judge.analysis import analyze_bytes, analyze_text
from memzoi.judge.binary import REQUIREMENT
from memzoi.project.refusals import refusals
from memzoi.runs.check import check_paths

#: the reported repro: 900 bytes, 200 NULs, 100 invalid UTF-8 sequences
BINARY = b"\x00\x01\x02PNG\x89\xff\x00" * 100
#: a record's place in a project that does not exist (only the path decides the role; nothing is read)
RECORD_PATH = Path(__file__).parent / "no-such-project" / ".memzoi" / "records" / "random.md"


def _project(tmp_path: Path, data: bytes, name: str = "binary.md") -> Path:
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    path = records / name
    path.write_bytes(data)
    return path


def _unbounded(data: bytes) -> list[Finding]:
    """The findings as they were before the bound: :func:`memzoi.judge.binary.bounded` as the identity."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analysis_module, "bounded", lambda text, found: found)
        return analyze_bytes(data, RECORD_PATH).findings


def test_the_reported_binary_file_gives_one_finding_per_code(tmp_path, capsys, monkeypatch):
    path = _project(tmp_path, BINARY)
    report = check_paths([str(path)])
    found = {l.finding.code: l.finding for l in report.findings}
    assert len(report.findings) == 3 and set(found) == {
        "invalid_encoding",
        "invisible_character",
        "frontmatter_missing",
    }
    assert REQUIREMENT in found["invalid_encoding"].message and "byte offset 6" in found["invalid_encoding"].message
    invisible = found["invisible_character"]
    assert "101 `invisible_character` findings" in invisible.message and "at 1:1" in invisible.message
    assert invisible.data["count"] == 101 and all(f.severity == 1 for f in found.values())
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["check", str(path)]) == 1  # still refused: the exit status is what it was
    assert capsys.readouterr().out.count("binary.md:") == 3


def test_the_editor_buffer_of_a_binary_file_is_bounded_too(tmp_path):
    # an editor that reads the bytes as Latin-1 (Neovim's fallback) sends text with NULs and no invalid byte
    path = _project(tmp_path, BINARY)
    buffer = analyze_text(BINARY.decode("latin-1"), path).findings
    assert sorted(f.code for f in buffer) == ["frontmatter_missing", "invisible_character"]
    (invisible,) = [f for f in buffer if f.code == "invisible_character"]
    assert invisible.data["count"] > 1


def test_a_text_file_keeps_every_finding():
    text = "---\nid: x\n---\n\nA\u200bB and C\u200bD\n"
    found = [f.code for f in analyze_text(text).findings if f.code == "invisible_character"]
    assert len(found) == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=600), st.sampled_from(["", "\x00", "\x89"]))
def test_random_bytes_give_a_bounded_number_of_findings_and_the_same_verdict(data, extra):
    data = data + extra.encode("latin-1")
    bounded = analyze_bytes(data, RECORD_PATH).findings
    unbounded = _unbounded(data)
    codes = {f.code for f in bounded}
    # one finding per code when the file is not text; a text file (valid UTF-8, no NUL) is left as it was
    binary = b"\x00" in data or any(f.code == "invalid_encoding" for f in unbounded)
    if binary:
        assert len(bounded) == len(codes)
    else:
        assert bounded == unbounded
    # the same codes and severities, so the same refusals and the same exit status
    assert {(f.code, f.severity) for f in bounded} == {(f.code, f.severity) for f in unbounded}
    assert refusals(bounded) == refusals(unbounded)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert "invalid_encoding" in codes  # Memzoi's own code for bytes that are not UTF-8 is never lost
