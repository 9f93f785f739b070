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
