"""Where our code for a refusal differs from Memzoi's, both are reported (issue 30, item 5): a record with no
``content_class`` (``missing_key`` and Memzoi's ``unknown_content_class``), a symlinked record (``canonical_path``
and ``unsafe_output_path``), an oversized file without frontmatter (``frontmatter_missing`` and
``candidate_too_large``). Checked in the core and through ``memzoi check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.base.findings import Severity
from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.project.admission import canonical_path_findings

from . import builders


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    return root


def _check(capsys, root: Path) -> list[dict]:
    main(["check", "--root", str(root), "--format", "json", "--no-cache"])
    return json.loads(capsys.readouterr().out)["findings"]


def test_a_record_without_content_class_gets_missing_key_and_unknown_content_class(tmp_path):
    root = _project(tmp_path)
    text = builders.record("rec", content_class=None)
    found = analyze_text(text, root / ".memzoi/records/rec.md").findings
    codes = [f.code for f in found]
    assert "missing_key" in codes and "unknown_content_class" in codes
    [f] = [f for f in found if f.code == "unknown_content_class"]
    assert f.severity is Severity.ERROR and "content_class" in f.message


def test_a_pending_packet_without_content_class_gets_both_codes_as_warning_and_error(tmp_path):
    root = _project(tmp_path)
    text = builders.packet("mem-x", content_class=None)
    found = analyze_text(text, root / ".memzoi/proposals/pending/mem-x.md").findings
    assert {"missing_key", "unknown_content_class"} <= {f.code for f in found}
    assert [f.severity for f in found if f.code == "unknown_content_class"] == [Severity.WARNING]


def test_a_legacy_record_without_content_class_is_left_to_its_upgrade(tmp_path):
    root = _project(tmp_path)
    legacy = builders.edit(builders.record("rec", content_class=None), "profile: memzoi\n", "profile: memzoi/v1\n")
    codes = {f.code for f in analyze_text(legacy, root / ".memzoi/records/rec.md").findings}
    assert "legacy_profile" in codes and "unknown_content_class" not in codes


def test_a_record_with_content_class_gets_neither(tmp_path):
    root = _project(tmp_path)
    codes = {f.code for f in analyze_text(builders.record("rec"), root / ".memzoi/records/rec.md").findings}
    assert not codes & {"missing_key", "unknown_content_class"}


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_symlinked_record_gets_canonical_path_and_unsafe_output_path(tmp_path, capsys, linked):
    root = _project(tmp_path)
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "rec.md").write_text(builders.record("rec"), encoding="utf-8")
    if linked == "file":
        link = root / ".memzoi/records/rec.md"
        link.symlink_to(real / "rec.md")
    else:
        (root / ".memzoi/records/sub").symlink_to(real, target_is_directory=True)
        link = root / ".memzoi/records/sub/rec.md"
    in_core = [f.code for f in canonical_path_findings(link, analyze_path(link))]
    assert in_core == ["canonical_path", "unsafe_output_path"]
    assert sorted(f["code"] for f in _check(capsys, root)) == ["canonical_path", "unsafe_output_path"]


def test_an_oversized_file_without_frontmatter_gets_frontmatter_missing_and_candidate_too_large(tmp_path, capsys):
    root = _project(tmp_path)
    rel = ".memzoi/records/big.md"
    builders.write(root, rel, "# Big\n\n" + ("Plain words of a long note. " * 20000))
    codes = {f.code for f in analyze_path(root / rel).findings}
    assert {"frontmatter_missing", "candidate_too_large"} <= codes
    assert {"frontmatter_missing", "candidate_too_large"} <= {f["code"] for f in _check(capsys, root)}
    small = ".memzoi/records/small.md"
    builders.write(root, small, "# Small\n\nA note.\n")
    assert "candidate_too_large" not in {f.code for f in analyze_path(root / small).findings}
