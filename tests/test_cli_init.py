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


def _memzoi(cwd, home, *args):
    """``memzoi ARGS`` run as a user runs it, in ``cwd``, with its runtime under ``home``."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEMZOI_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memzoi", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_init_inside_a_project_refuses_unless_nested_and_names_the_outer_one(tmp_path):
    """A project made below another hides the outer one's records from every command run there (discovery takes
    the nearest root), so init refuses, naming the outer project and --nested, and writes nothing."""
    import subprocess

    outer = tmp_path / "outer"
    deep = outer / "plain" / "deep"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    assert _memzoi(outer, tmp_path / "home", "init").returncode == 0
    proc = _memzoi(deep, tmp_path / "home", "init")
    assert proc.returncode == 2, proc.stdout
    assert f"inside the project at {outer.resolve()}" in proc.stderr and "--nested" in proc.stderr, proc.stderr
    assert not (deep / ".memzoi").exists()
    assert _memzoi(outer / "plain", tmp_path / "home", "init", "--root", str(deep)).returncode == 2
    assert not (deep / ".memzoi").exists()
    nested = _memzoi(deep, tmp_path / "home", "init", "--nested", "--json")
    assert nested.returncode == 0, nested.stderr
    assert any(str(outer.resolve()) in note for note in json.loads(nested.stdout)["notes"])
    # the outer project itself, and the nested one once made, are initialised again without the flag
    assert _memzoi(outer, tmp_path / "home", "init").returncode == 0
    assert _memzoi(deep, tmp_path / "home", "init").returncode == 0


def test_init_help_does_not_say_its_root_is_found_upward(tmp_path):
    """PATH and --root name the folder made a project: neither is discovered from the current directory."""
    out = _memzoi(tmp_path, tmp_path / "home", "init", "--help").stdout
    assert "found from the current directory" not in out, out
    assert "--nested" in out


def test_init_outside_git_says_once_that_attested_records_are_refused(tmp_path):
    proj = tmp_path / "nogit"
    proj.mkdir()
    proc = _memzoi(tmp_path, tmp_path / "home", "init", str(proj))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("attested records are refused") == 1, proc.stdout


def test_init_of_a_new_project_says_the_first_rebuild_builds_the_index(tmp_path):
    """`memzoi doctor` warns about an index never built on a new project; init says that this is expected."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path / "p")], check=True)
    proc = _memzoi(tmp_path / "p", tmp_path / "home", "init")
    assert proc.returncode == 0, proc.stderr
    assert "memzoi rebuild" in proc.stdout and "attested" not in proc.stdout, proc.stdout
    assert _memzoi(tmp_path / "p", tmp_path / "home", "rebuild").returncode == 0
    again = _memzoi(tmp_path / "p", tmp_path / "home", "init")
    assert "memzoi rebuild" not in again.stdout, again.stdout


def test_init_in_a_repository_hides_the_temporary_files_of_writes(tmp_path, monkeypatch, capsys):
    """``init`` writes ``config.toml`` through a temporary file beside it: the repository ignores such names from
    then on (``info/exclude``), before the first one is made."""
    import subprocess

    from memzoi.base.gitexclude import TEMP_PATTERN
    from memzoi.base.runtime import git_env

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    subprocess.run(["git", "init", "-q", "--template=", str(proj)], check=True, env=git_env())
    assert main(["init", str(proj), "--json"]) == 0
    assert (proj / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines().count(TEMP_PATTERN) == 1
