"""No project configuration grades below error a framing or schema error (SPEC promise 1): Memzoi cannot type such
a record and refuses it (``typed-record``, reference §4.3, fail-closed), so ``memzoi check`` reports it as an error
whatever ``[rules]`` say, and says with ``invalid_config`` that the setting is ignored and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base.findings import CODES, UNTYPED, Severity, finding
from memzoi.base.runtime import git_env
from memzoi.judge.config import parse_config
from memzoi.runs.check import check_paths

from . import builders

#: Defects Memzoi's parser refuses (reference §1.3-§1.4), each made by the one record builder, and our code for it.
DEFECTS = {
    "invalid_value": {"lane": "sideways"},
    "unknown_key": {"extra": "colour: blue\n"},
    "missing_key": {"confidence": None},
    "invalid_timestamp": {"timestamp": "yesterday"},
    "yaml_syntax": {"extra": "notes: [unclosed\n"},
}
LOWER = ("warning", "information", "hint")


def test_the_set_is_every_framing_or_schema_error_and_ours_stay_configurable():
    expected = {c for c, (sev, g) in CODES.items() if g in ("framing", "schema") and sev is Severity.ERROR}
    assert UNTYPED == expected - {"invalid_config"} and set(DEFECTS) <= UNTYPED
    for code in ("bom", "legacy_profile", "id_path_mismatch", "prompt_injection", "pii_detected"):
        assert not parse_config(f'[rules]\nseverity = {{ {code} = "hint" }}\ndisabled = ["{code}"]\n').errors


@settings(deadline=None)  # the first parse loads the configuration model: a shared machine, no time asserted
# invalid_encoding is also one of Memzoi's own reason codes, and is refused under that name (tests/test_admission.py)
@given(
    code=st.sampled_from(sorted(UNTYPED - {"invalid_encoding"})), level=st.sampled_from(LOWER), disabling=st.booleans()
)
def test_config_validation_refuses_every_downgrade(code, level, disabling):
    text = f'[rules]\ndisabled = ["{code}"]\n' if disabling else f'[rules]\nseverity = {{ {code} = "{level}" }}\n'
    loaded = parse_config(text)
    (error,) = loaded.errors
    verb = "disabled" if disabling else "downgraded"
    assert f"`{code}` cannot be {verb}" in error and "`typed-record`" in error and "cannot type" in error
    rules = loaded.config.effective_rules  # the setting is ignored: the code stays an error, in an ignored file too
    assert rules.severity_of(code, Severity.ERROR) == Severity.ERROR
    ignoring = parse_config('[rules]\nignore = ["records/**"]\n').config.effective_rules
    found = [finding(code, "m", 0, 1)]
    assert [(f.code, f.severity) for f in ignoring.apply(found, "records/a.md")] == [(code, Severity.ERROR)]
    # an editor's per-user settings cannot do it either
    assert rules.overlay({code: level}, [code]).severity_of(code, Severity.ERROR) == Severity.ERROR


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    defects=st.lists(st.sampled_from(sorted(DEFECTS)), unique=True, min_size=1, max_size=3),
    graded=st.dictionaries(st.sampled_from(sorted(DEFECTS)), st.sampled_from(LOWER)),
    disabled=st.lists(st.sampled_from(sorted(DEFECTS)), unique=True, max_size=2),
    ignored=st.booleans(),
)
def test_a_record_memzoi_cannot_type_always_fails_check(tmp_path, defects, graded, disabled, ignored):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    fields: dict = {}
    for d in defects:
        fields.update(DEFECTS[d])
    if "unknown_key" in defects and "yaml_syntax" in defects:
        fields["extra"] = DEFECTS["unknown_key"]["extra"] + DEFECTS["yaml_syntax"]["extra"]
    builders.write(root, builders.record_path("rec"), builders.record("rec", **fields))
    severity = ", ".join([f'{c} = "{s}"' for c, s in graded.items()] + ['prompt_injection = "warning"'])
    config = f"[rules]\nseverity = {{ {severity} }}\ndisabled = {json.dumps(disabled)}\n"
    (root / ".memzoi/config.toml").write_text(config + ('ignore = ["records/**"]\n' if ignored else ""))
    report = check_paths([str(root / ".memzoi")], workers=1)
    assert report.has_errors
    on_record = [l.finding for l in report.findings if l.path.endswith("rec.md")]
    assert on_record and all(f.severity is Severity.ERROR and f.code in UNTYPED for f in on_record)
    bad = [l.finding.message for l in report.findings if l.finding.code == "invalid_config"]
    for code in set(graded) | set(disabled):  # each such setting is named, with why; nothing else is refused
        assert any(f"`{code}` cannot be" in m and "`typed-record`" in m for m in bad)
    assert len(bad) == len(graded) + len(disabled)


def _cli(root: Path, home: Path, *args: str) -> tuple[int, dict]:
    done = subprocess.run(
        [sys.executable, "-m", "memzoi", *args],
        cwd=root,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, json.loads(done.stdout)


def test_a_downgraded_invalid_value_fails_check_and_rebuild_refuses_the_record(tmp_path):
    root, home = tmp_path / "repo", tmp_path / "home"
    builders.write(root, builders.record_path("good"), builders.record("good"))
    builders.write(root, builders.record_path("bad"), builders.record("bad", lane="sideways"))
    (root / ".memzoi/config.toml").write_text('[rules]\nseverity = { invalid_value = "warning" }\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=git_env(), capture_output=True)
    code, checked = _cli(root, home, "check", "--format", "json")
    found = {(Path(f["path"]).name, f["code"], f["severity"]) for f in checked["findings"]}
    assert code == 1 and found == {("bad.md", "invalid_value", "error"), ("config.toml", "invalid_config", "error")}
    (config,) = [f for f in checked["findings"] if f["code"] == "invalid_config"]
    assert "`invalid_value` cannot be downgraded" in config["message"] and "`typed-record`" in config["message"]
    code, built = _cli(root, home, "rebuild", "--json")
    assert code == 0 and built["refused"] == [{"path": ".memzoi/records/bad.md", "refusals": ["typed-record"]}]


WARNED = sorted(
    c for c, (sev, g) in CODES.items() if g in ("framing", "schema") and c not in UNTYPED | {"invalid_config"}
)


@settings(deadline=None)
@given(code=st.sampled_from(sorted(UNTYPED)), level=st.sampled_from(LOWER), ignored=st.booleans())
def test_for_framing_and_schema_errors_the_configured_verdict_is_the_rules_own(code, level, ignored):
    # `refusals.configured` keeps framing and schema findings as found; for the errors (UNTYPED) that changes
    # nothing, since no configuration can grade them (above): the rules alone give the same `typed-record`.
    from memzoi.project.refusals import configured, refusals

    text = f'[rules]\nseverity = {{ {code} = "{level}" }}\ndisabled = ["{code}"]\n'
    rules = parse_config(text + ('ignore = ["records/**"]\n' if ignored else "")).config.effective_rules
    found = [finding(code, "m", 0, 1), finding("prompt_injection", "m", 0, 1)]
    assert refusals(configured(found, rules, "records/a.md")) == refusals(rules.apply(found, "records/a.md"))
    assert "typed-record" in refusals(configured(found, rules, "records/a.md"))


@pytest.mark.parametrize("code", WARNED)
def test_a_framing_or_schema_warning_raised_to_error_is_no_typed_record_refusal(code):
    # What the special case still does: a default-warning framing or schema code (`bom`, `legacy_profile` ...)
    # that `[rules]` raises to error fails `memzoi check`, but Memzoi types such a file, so rebuild and export
    # must not refuse it as `typed-record`. Without the special case they would: it is not redundant.
    from memzoi.project.refusals import configured, refusals

    rules = parse_config(f'[rules]\nseverity = {{ {code} = "error" }}\n').config.effective_rules
    found = [finding(code, "m", 0, 1)]
    assert found[0].severity is not Severity.ERROR
    assert [f.severity for f in rules.apply(found, "records/a.md")] == [Severity.ERROR]  # what check shows
    assert refusals(rules.apply(found, "records/a.md")) == ["typed-record"]  # what the rules alone would refuse
    assert refusals(configured(found, rules, "records/a.md")) == []
