"""The CLI never echoes a secret a caller typed: ``memzoi undo`` and ``memzoi explain`` of one, and argparse's usage
errors quoting one, show it ``[redacted]`` (:func:`memzoi.safety.redact.scrub`). Canaries are built at run time
(:mod:`tests.canaries`)."""

from __future__ import annotations

import subprocess

import pytest

from memzoi.base.runtime import git_env
from memzoi.cli.main import main

from .canaries import assert_not_in, canary


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    (root / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(root)
    return root


def _said(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage error
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize(
    "argv",
    [
        ["undo", "{s}"],
        ["undo", "{s}", "--json"],
        ["explain", "{s}"],
        ["undo", "chg_1", "--bogus={s}"],
        ["history", "--limit", "{s}"],
        ["{s}"],
    ],
)
def test_a_secret_argument_is_not_echoed(project, capsys, argv):
    secret = canary()
    code, said = _said(capsys, [a.format(s=secret) for a in argv])
    assert code != 0 and "[redacted]" in said
    assert_not_in(said, secret)
