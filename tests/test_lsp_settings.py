"""The editor settings (``memzoi_lsp.settings``) are checked by plain functions, as the validation model did:
each invalid key is reported and takes its default, codes are screened by the rules, and nothing heavier than
the settings module is loaded unless a setting names codes."""

from __future__ import annotations

import json
import subprocess
import sys

from memzoi_lsp.settings import Settings, parse_settings, wire_names


def test_defaults_and_a_full_valid_set():
    assert parse_settings(None) == (Settings(), [])
    settings, problems = parse_settings(
        {
            "memzoi": {
                "severity": {"pii_detected": "hint"},
                "disabled": ["pii_detected"],
                "debounceMs": 0,
                "logLevel": "debug",
                "logToClient": False,
                "showDocumentTimeoutMs": 500,
            }
        }
    )
    assert problems == []
    assert settings == Settings(
        severity={"pii_detected": "hint"},
        disabled=frozenset({"pii_detected"}),
        debounce_ms=0,
        log_level="debug",
        log_to_client=False,
        show_document_timeout_ms=500,
    )


def test_later_sources_win_key_by_key_and_snake_case_is_read():
    settings, problems = parse_settings({"debounceMs": 5, "logLevel": "error"}, {"debounceMs": 7}, None)
    assert problems == [] and settings.debounce_ms == 7 and settings.log_level == "error"
    assert parse_settings({"log_to_client": False})[0].log_to_client is False
    assert parse_settings({"debounceMs": 300.0})[0].debounce_ms == 300  # a JSON number written as a float


def test_each_invalid_key_is_reported_and_takes_its_default():
    settings, problems = parse_settings(
        {
            "debounceMs": -1,
            "logLevel": "loud",
            "logToClient": "yes",
            "severity": {"unknown_key": "fatal"},
            "disabled": "unknown_key",
            "showDocumentTimeoutMs": True,
            "colour": "blue",
        },
        [1, 2],
    )
    assert settings == Settings()
    joined = "\n".join(problems)
    for key in ("debounceMs", "logLevel", "logToClient", "severity", "disabled", "showDocumentTimeoutMs"):
        assert f"setting `{key}`" in joined
    assert "colour" not in joined and "settings must be an object, got list" in joined
    assert all(p.endswith(("using the default", "ignored")) for p in problems)


def test_codes_are_screened_by_the_rules():
    settings, problems = parse_settings(
        {
            "severity": {
                "credential_token": "hint",
                "not_a_code": "error",
                "unknown_key": "warning",
                "pii_detected": "error",
            },
            "disabled": ["credential_token", "pii_detected"],
        }
    )
    assert settings.severity == {"pii_detected": "error"} and settings.disabled == frozenset({"pii_detected"})
    assert any("severity.credential_token" in p and "downgraded" in p for p in problems)
    # a framing or schema error: Memzoi cannot type the record, so no editor setting grades it below error
    assert any("severity.unknown_key" in p and "downgraded" in p and "`typed-record`" in p for p in problems)
    assert any("severity.not_a_code" in p for p in problems)
    assert any("cannot be disabled" in p for p in problems)


def test_the_wire_names_are_the_documented_keys():
    assert wire_names() == ["severity", "disabled", "debounceMs", "logLevel", "logToClient", "showDocumentTimeoutMs"]


def test_parsing_settings_without_codes_loads_no_model():
    code = (
        "import json, sys\nfrom memzoi_lsp.settings import parse_settings\n"
        "parse_settings({'debounceMs': 0, 'logLevel': 'info'})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('pydantic', 'memzoi.judge.rules')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == []
