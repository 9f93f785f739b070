"""``memzoi init``."""

from __future__ import annotations

import json

from memzoi.cli.main import main
from memzoi.judge.config import load_config


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
    from memzoi.judge.config import parse_config

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    assert main(["init", str(tmp_path), "--json"]) == 0
    text = (tmp_path / ".memzoi/config.toml").read_text(encoding="utf-8")
    for section in ("[safety]", "[rules]", "[promotion]", "[mcp]"):
        assert f"# {section}" in text, section
    # the commented examples, uncommented, are a valid configuration
    uncommented = "\n".join(
        line[2:] for line in text.splitlines() if line.startswith("# ") and (line[2:].startswith("[") or " = " in line)
    )
    assert parse_config(uncommented).errors == ()
    assert parse_config(uncommented).config.mcp.proposals_per_minute == 20


def test_doctor_in_a_project_without_records_says_to_run_init(tmp_path, monkeypatch, capsys):
    """Inside a project whose `.memzoi/records` is gone, the next step is `memzoi init`, which recreates it."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    assert main(["init", str(tmp_path)]) == 0
    (tmp_path / ".memzoi/records").rmdir()
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    check = next(c for c in report["checks"] if c["name"] == "records_root")
    assert check["status"] == "warning"
    assert report["next_steps"][0].startswith("run `memzoi init ") and "--root" not in report["next_steps"][0]
    assert main(["init"]) == 0 and (tmp_path / ".memzoi/records").is_dir()


def test_init_says_when_project_id_is_not_written(tmp_path, monkeypatch, capsys):
    """An existing config.toml is never overwritten: `--project-id` is then not written, and init says so."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    assert main(["init", str(tmp_path)]) == 0
    config = (tmp_path / ".memzoi/config.toml").read_bytes()
    capsys.readouterr()
    assert main(["init", str(tmp_path), "--project-id", "my-proj"]) == 0
    err = capsys.readouterr().err
    assert "--project-id" in err and "not written" in err and 'id = "my-proj"' in err, err
    assert (tmp_path / ".memzoi/config.toml").read_bytes() == config
    assert main(["init", str(tmp_path), "--project-id", "my-proj", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [n["option"] for n in out["not_applied"]] == ["--project-id"]
    # the same id already there: nothing to say
    (tmp_path / ".memzoi/config.toml").write_text('[project]\nid = "my-proj"\n', encoding="utf-8")
    assert main(["init", str(tmp_path), "--project-id", "my-proj", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["not_applied"] == []
