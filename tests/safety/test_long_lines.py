"""Long single lines that once made a detector quadratic: each is analysed here at a size where the quadratic
search took minutes (so the suite's per-test timeout catches a regression; nothing here measures time), and the
detectors still find what the line holds."""

from __future__ import annotations

import pytest

from memzoi.judge.analysis import analyze_text

HEAD = "---\ntitle: x\n---\n"


@pytest.mark.parametrize(
    "line",
    [
        "?\ufffdn\ufffd:3>" * 60_000,  # `>` every few characters before an agent file name (injection rule)
        "apikey" * 80_000,  # one run of key characters holding the stem many times (keyed values)
        "eyJ" * 150_000,  # one run of token characters holding many JWT starts
    ],
    ids=["redirect-marks", "key-stems", "jwt-starts"],
)
def test_one_long_line_is_analysed(line: str):
    analysis = analyze_text(HEAD + line + "\n", ".memzoi/records/x.md")
    assert all(f.start <= f.end <= len(analysis.text) for f in analysis.findings)


def test_bounded_prefixes_still_find_agent_file_edits():
    text = HEAD + "Then run `echo hi >> AGENTS.md` and `cat x > ~/src/app/.zuno/config`.\n"
    codes = [f.code for f in analyze_text(text, ".memzoi/records/x.md").findings]
    assert codes.count("prompt_injection") >= 1
