"""``memzoi resident turn`` and ``reflect`` print no secret-bearing local path raw, in text and ``--json``: the
project folder, the memzoi home and the user's Zuno folder are each named after a token (:mod:`tests.secret_names`),
and the reflection's messages (reflection disabled, the user's configuration unreadable, a transcript below the
project that cannot be read) show them as ``<redacted-path:…>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.judge.pathsafety import REDACTED_PREFIX

from ..resident.reflection_helpers import user_config
from ..secret_names import HOME_TOKEN, ROOT_TOKEN, USER_TOKEN, assert_no_token
from .conftest import seed
from .test_shown_runtime_paths import run

TURN = ("resident", "turn", "--session", "s", "--message", "m1")


@pytest.fixture
def reflect_repo(tmp_path, monkeypatch) -> Path:
    """A seeded repository with ``.zuno/RULES.md``, its folder, the memzoi home and Zuno's folder named after
    tokens; the user's configuration has no reflection model (reflection is disabled and says where to set one)."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / HOME_TOKEN))
    monkeypatch.setenv("MEMZOI_ACTOR", "reviewer")
    (tmp_path / USER_TOKEN).mkdir()
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / USER_TOKEN / "zuno"))
    user_config(tmp_path / USER_TOKEN, None)
    root = seed(tmp_path / ROOT_TOKEN)
    (root / ".zuno").mkdir()
    (root / ".zuno" / "RULES.md").write_text("Run make lint.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("as_json", [False, True])
def test_a_disabled_reflection_names_the_user_configuration_redacted(reflect_repo, capsys, as_json):
    code, out = run(capsys, reflect_repo, *TURN, *(["--json"] * as_json))
    assert code == 0
    assert_no_token(out)
    disabled = json.loads(out)["disabled"] if as_json else out
    assert "memory reflection disabled" in disabled and REDACTED_PREFIX in disabled
    code, out = run(capsys, reflect_repo, "resident", "reflect", "--session", "s", "--transcript", "t.jsonl")
    assert code == 1
    assert_no_token(out)


def test_an_unreadable_user_configuration_is_named_redacted(reflect_repo, tmp_path, capsys):
    (tmp_path / USER_TOKEN / "zuno" / "memzoi.toml").write_text("[reflection\n", encoding="utf-8")
    code, out = run(capsys, reflect_repo, *TURN)
    assert code == 1 and "invalid_config" in out
    assert_no_token(out)
    assert REDACTED_PREFIX in out


@pytest.mark.parametrize("as_json", [False, True])
def test_a_transcript_below_the_project_that_cannot_be_read_is_named_redacted(reflect_repo, tmp_path, capsys, as_json):
    user_config(tmp_path / USER_TOKEN, "http://127.0.0.1:9/v1")
    assert run(capsys, reflect_repo, *TURN)[0] == 0
    missing = reflect_repo / "missing.jsonl"
    argv = ("resident", "reflect", "--session", "s", "--transcript", str(missing), *(["--json"] * as_json))
    code, out = run(capsys, reflect_repo, *argv)
    assert code == 1
    assert_no_token(out)
    assert REDACTED_PREFIX in out


@pytest.mark.parametrize("broken", ["[resident\n", "[resident]\nglobal_char_limit = -1\n"], ids=["toml", "value"])
def test_a_resident_command_names_the_user_configuration_redacted(reflect_repo, tmp_path, capsys, broken):
    """Any command reading the user's own configuration (here ``resident propose`` of the global file) names it as
    :func:`~memzoi.judge.pathsafety.with_shown_paths` shows it, in the core's refusal (``scope.user_resident``)."""
    (tmp_path / USER_TOKEN / "zuno" / "memzoi.toml").write_text(broken, encoding="utf-8")
    argv = ("resident", "propose", "--scope", "global", "--action", "add", "--content", "Use tabs.", "--reason", "r")
    code, out = run(capsys, reflect_repo, *argv, "--confidence", "0.5", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "invalid_config"
    assert_no_token(out)
    assert REDACTED_PREFIX in out
