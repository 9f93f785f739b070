"""``.memzoi/config.toml`` in Neovim and Emacs (trial 2, #14): the clients attach to the project configuration and
show the server's findings, the ones ``memzoi check .memzoi/config.toml`` reports (``invalid_config`` for a typo, a
credential finding for a key in a comment), never the key itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.cli.main import main

from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)


def aws_key() -> str:
    """An AWS-access-key-shaped string built at run time (no secret-shaped literal in the source)."""
    return "AKIA" + "".join("QWERTYUIOPASDFGH"[i] for i in range(16))


def project(tmp_path: Path) -> Path:
    """A project whose config.toml has a typo in `[rules]` and a credential in a comment; returns the file."""
    config = tmp_path / "repo" / ".memzoi" / "config.toml"
    (config.parent / "records").mkdir(parents=True)
    config.write_text(f'[rules]\nseverty = {{ duplicate_content = "hint" }}\n# key {aws_key()}\n', encoding="utf-8")
    return config


def check_codes(config: Path, capsys) -> set[str]:
    capsys.readouterr()
    main(["check", str(config), "--format", "json", "--no-cache"])
    return {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}


def test_neovim_attaches_to_config_toml_and_shows_its_findings(tmp_path, monkeypatch, capsys):
    nvim, server = editor("nvim")
    config = project(tmp_path)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "memzoi-home"))
    env = editor_env("nvim", tmp_path, server, tmp_path / "memzoi-home")
    run = run_script(nvim, "nvim_config.lua", [str(config)], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert report["filetype"] == "toml" and Path(report["root_dir"]) == config.parent.parent
    codes = {d["code"] for d in report["diagnostics"]}
    assert "invalid_config" in codes and any(c.startswith("credential") for c in codes), codes
    assert codes == check_codes(config, capsys)
    assert aws_key() not in json.dumps(report) + run.proc.stdout + run.proc.stderr


@pytest.mark.editor_packages
def test_emacs_attaches_to_config_toml_and_shows_its_findings(tmp_path, monkeypatch, capsys):
    emacs, server = editor("emacs")
    config = project(tmp_path)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "memzoi-home"))
    env = editor_env("emacs", tmp_path, server, tmp_path / "memzoi-home")
    run = run_script(emacs, "emacs_config.el", [str(config)], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert report["mode"] == "memzoi-config-mode"
    texts = " ".join(d["text"] for d in report["diagnostics"])
    assert "[invalid_config]" in texts and "[credential" in texts, texts
    assert aws_key() not in json.dumps(report) + run.proc.stdout + run.proc.stderr
