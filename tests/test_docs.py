"""docs/diagnostics.md documents the codes, and the README keeps its two set-up commands on top."""

from __future__ import annotations

import re

from memzoi.base.findings import CODES

from .conftest import ROOT


def _documented() -> list[str]:
    return re.findall(r"(?m)^### ([a-z0-9_]+)\s*$", (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8"))


def test_doc_sections_are_known_codes_without_duplicates():
    documented = _documented()
    assert len(documented) == len(set(documented))
    assert set(documented) <= set(CODES)


def test_framing_and_schema_codes_documented():
    documented = set(_documented())
    for code, (_, group) in CODES.items():
        if group in ("framing", "schema"):
            assert code in documented, f"docs/diagnostics.md has no section for {code}"


def test_readme_starts_with_two_setup_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text.split("\n## ", 1)[0]
    blocks = re.findall(r"<!-- (main|test)-command -->\n    (.+)", head)
    assert [b[0] for b in blocks] == ["main", "test"]
    assert "memzoi check examples/" in blocks[0][1]
    assert "pytest" in blocks[1][1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "test-command" in ci


def test_every_code_is_documented():
    documented = set(_documented())
    missing = sorted(set(CODES) - documented)
    assert missing == [], f"docs/diagnostics.md lacks sections for {missing}"
