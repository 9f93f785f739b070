"""``memzoi local pending|approve|reject``: the human side of local candidates proposed by agents."""

from __future__ import annotations

import json

from memzoi.cli.main import main
from memzoi.lifecycle.candidates import propose_local
from memzoi.lifecycle.propose import Draft

from .conftest import draft_args


def _run(capsys, *argv):
    capsys.readouterr()
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_pending_approve_reject(project, capsys):
    a = propose_local(project, Draft(**draft_args()), actor="codex").candidate
    b = propose_local(project, Draft(**draft_args(body="Prefer small pull requests here.")), actor="codex").candidate
    code, out = _run(capsys, "local", "pending", "--root", str(project))
    assert code == 0 and [c["id"] for c in out["candidates"]] == [a.id, b.id]
    assert out["candidates"][0]["reason"] == "fixed the same race twice" and out["candidates"][0]["actor"] == "codex"
    code, change = _run(capsys, "local", "approve", a.id, "--root", str(project), "--actor", "reviewer")
    assert code == 0 and change["status"] == "applied" and change["operation"] == "local_promote"
    code, again = _run(capsys, "local", "approve", a.id, "--root", str(project))
    assert code == 1 and again["error"]["code"] == "candidate_resolved"
    code, rej = _run(capsys, "local", "reject", b.id, "--reason", "not durable", "--root", str(project))
    assert code == 0 and rej["state"] == "rejected"
    code, out = _run(capsys, "local", "pending", "--root", str(project))
    assert out["candidates"] == []
    code, out = _run(capsys, "local", "list", "--root", str(project))
    assert [r["proposal_id"] for r in out["records"]] == [a.id]
    code, missing = _run(capsys, "local", "reject", "nope", "--reason", "x", "--root", str(project))
    assert code == 1 and missing["error"]["code"] == "candidate_not_found"
