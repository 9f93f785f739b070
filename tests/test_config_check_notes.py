"""`memzoi check .memzoi/config.toml`: the closing line about the settings does not read as a contradiction of the
findings listed above it (trial 2: a credential in a comment was reported, then "the settings are valid")."""

from __future__ import annotations

from memzoi.cli.main import main


def _key() -> str:
    # Built at run time so the source holds no complete credential shape; never printed.
    return "AKIA" + "QWERTYUIOPASDF" + "GH"


def test_a_finding_in_a_valid_config_is_said_to_be_about_its_text(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    config = tmp_path / ".memzoi" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'# old key {_key()}\n[project]\nid = "demo"\n', encoding="utf-8")
    code = main(["check", str(config)])
    out, err = capsys.readouterr()
    assert code == 1 and "credential_token" in out
    assert _key() not in out + err
    assert "the settings are valid; its findings are about the file's text, not its settings" in err
    config.write_text('[project]\nid = "demo"\n', encoding="utf-8")
    assert main(["check", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "the settings are valid\n" in err and "its findings" not in err
