"""``memzoi init``."""

from __future__ import annotations

import json

from memzoi.cli.main import main
from memzoi.config import load_config


def test_init_creates_layout_and_is_idempotent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    proj.mkdir()
    assert main(["init", str(proj), "--project-id", "acme", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (proj / ".memzoi/records").is_dir() and (proj / ".memzoi/proposals/pending").is_dir()
    assert len(out["created"]) == 3 and out["existing"] == []
    assert out["runtime_dir"].startswith(str(tmp_path / "home" / "projects"))
    assert load_config(proj / ".memzoi").config.project.id == "acme"
    config = (proj / ".memzoi/config.toml").read_bytes()
    assert main(["init", str(proj), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["created"] == [] and len(again["existing"]) == 3
    assert (proj / ".memzoi/config.toml").read_bytes() == config


def test_init_rejects_bad_project_id(tmp_path, capsys):
    assert main(["init", str(tmp_path), "--project-id", "Not Valid"]) == 2
    assert "project-id" in capsys.readouterr().err


def test_init_config_names_every_section_and_its_examples_are_valid(tmp_path, monkeypatch, capsys):
    from memzoi.config import parse_config

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    assert main(["init", str(tmp_path), "--json"]) == 0
    text = (tmp_path / ".memzoi/config.toml").read_text(encoding="utf-8")
    for section in ("[safety]", "[rules]", "[promotion]", "[mcp]"):
        assert f"# {section}" in text, section
    # the commented examples, uncommented, are a valid configuration
    uncommented = "\n".join(line[2:] for line in text.splitlines() if line.startswith("# ") and (
        line[2:].startswith("[") or " = " in line))
    assert parse_config(uncommented).errors == ()
    assert parse_config(uncommented).config.mcp.proposals_per_minute == 20
