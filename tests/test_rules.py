"""``[rules]`` in ``.memzoi/config.toml``: one rules configuration for check, pre-commit and the servers."""

from __future__ import annotations

import pytest

from memzoi.check import check_paths
from memzoi.config import parse_config
from memzoi.findings import UNSUPPRESSIBLE, Severity, finding
from memzoi.rules import DEFAULT_RULES, Rules, RulesSection, rule_problem

from .test_framing_yaml import VALID


def rules(toml: str) -> Rules:
    loaded = parse_config(toml)
    assert loaded.errors == ()
    return loaded.config.effective_rules


def test_severity_disabled_and_ignore_apply():
    r = rules('[rules]\nseverity = { legacy_profile = "error" }\ndisabled = ["bom"]\nignore = ["records/old/**"]\n')
    found = [finding("legacy_profile", "m", 0, 1), finding("bom", "m", 0, 1), finding("private_key", "m", 0, 1)]
    graded = r.apply(found, "records/x.md")
    assert [(f.code, f.severity) for f in graded] == [("legacy_profile", Severity.ERROR), ("private_key", Severity.ERROR)]
    # an ignored file keeps only what can never be suppressed
    assert [f.code for f in r.apply(found, "records/old/deep/x.md")] == ["private_key"]
    assert r.ignored("records/old/x.md") and not r.ignored("records/older/x.md")
    assert rules("[rules]\nignore = [\"records/old\"]\n").ignored("records/old/x.md")


@pytest.mark.parametrize("code", sorted(UNSUPPRESSIBLE))
def test_unsuppressible_codes_cannot_be_disabled_or_downgraded(code):
    assert rule_problem(code, disabling=True)
    assert rule_problem(code, disabling=False, level="warning")
    loaded = parse_config(f'[rules]\ndisabled = ["{code}"]\n')
    assert loaded.errors and "cannot be disabled" in loaded.errors[0]
    loaded = parse_config(f'[rules]\nseverity = {{ {code} = "hint" }}\n')
    assert loaded.errors and "cannot be downgraded" in loaded.errors[0]
    # and an editor overlay cannot do it either
    assert DEFAULT_RULES.overlay({code: "hint"}, [code]).severity_of(code, Severity.ERROR) == Severity.ERROR


def test_unknown_codes_and_bad_patterns_are_errors():
    assert "not a diagnostic code" in parse_config('[rules]\ndisabled = ["nope"]\n').errors[0]
    assert "inside the .memzoi folder" in parse_config('[rules]\nignore = ["../x"]\n').errors[0]
    with pytest.raises(ValueError):
        RulesSection(severity={"bom": "fatal"})


def test_overlay_adds_per_user():
    base = rules('[rules]\nseverity = { bom = "error" }\ndisabled = ["ledger_drift"]\n')
    mine = base.overlay({"bom": "hint"}, ["retention_query_only"])
    assert mine.severity_of("bom", Severity.WARNING) == Severity.HINT
    assert mine.severity_of("ledger_drift", Severity.INFORMATION) is None
    assert mine.severity_of("retention_query_only", Severity.INFORMATION) is None


def _project(tmp_path, config: str):
    records = tmp_path / ".memzoi" / "records"
    (records / "old").mkdir(parents=True)
    bad = VALID.replace("lane: semantic", "lane: weekly")
    (records / "rec-x.md").write_text(bad, encoding="utf-8")
    (records / "old" / "rec-y.md").write_text(bad.replace("rec-x", "old/rec-y"), encoding="utf-8")
    (tmp_path / ".memzoi" / "config.toml").write_text(config, encoding="utf-8")
    return tmp_path


def test_check_applies_project_rules(tmp_path):
    root = _project(tmp_path, "")
    before = check_paths([str(root / ".memzoi")], workers=1)
    assert {(l.path.rsplit("/", 1)[-1], l.finding.code) for l in before.findings} >= {
        ("rec-x.md", "invalid_value"), ("rec-y.md", "invalid_value")}
    (root / ".memzoi" / "config.toml").write_text(
        '[rules]\nseverity = { invalid_value = "warning" }\nignore = ["records/old/**"]\n', encoding="utf-8")
    after = check_paths([str(root / ".memzoi")], workers=1)
    codes = [(l.path.rsplit("/", 1)[-1], l.finding.code, l.finding.severity) for l in after.findings]
    assert ("rec-x.md", "invalid_value", Severity.WARNING) in codes
    assert not any(name == "rec-y.md" for name, _, _ in codes)
    assert not after.has_errors and after.files_checked == 3  # the two records and config.toml (scanned: committed)
