"""``memzoi-route`` in a real batch Emacs 28 with eglot (Debian packages) against the real memzoi-lsp: an agent's
session-end file opens in ``memzoi-routing-mode`` with the gate's diagnostic on its unsafe repo candidate; the
preview shows each candidate's outcome and writes nothing when declined; after the fix, yes writes the packet and
the checkpoint as one ledgered change."""

from __future__ import annotations

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C

from .editor_runs import editor, editor_env, run_script
from .test_neovim_routing import SESSION

pytestmark = [pytest.mark.editor_packages, pytest.mark.timeout(600)]


def test_memzoi_route_in_emacs(tmp_path, monkeypatch):
    emacs, server = editor("emacs")
    home = tmp_path / "memzoi-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    session = root / "session.yml"
    session.write_text(SESSION, encoding="utf-8")
    env = editor_env("emacs", tmp_path, server, home)
    run = run_script(emacs, "emacs_routing.el", [str(session)], tmp_path / "out.json", env, timeout=180)
    res = run.report
    assert run.proc.returncode == 0 and not res.get("error"), run.ok()
    assert res["mode"] == "memzoi-routing-mode"
    assert any("sensitivity" in d["text"].lower() and d["line"] == 3 for d in res["diagnostics"])
    first, second = res["questions"]
    assert "some are blocked" in first["prompt"] and "sensitivity_not_repo_safe" in first["shown"]
    assert "create_proposal" in second["shown"] and "create_runtime" in second["shown"]
    assert res["cancelled_result"]["blocked"] is True  # the preview's answer: nothing was applied
    applied = res["applied"]
    assert applied["status"] == "routed" and applied["change_id"]
    assert (root / applied["candidates"][0]["path"]).is_file()
    assert [cp.title for cp in C.list_checkpoints(root)[1]] == ["Where I stopped"]
    assert [c.operation for c in L.history(root)] == ["session_end"]
