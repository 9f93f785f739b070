"""What follows an applied supersede: re-attesting the replacement (which Memzoi cannot attest: an update candidate
carries no ``supersedes_id``) and the superseded predecessor (not active), and resolving an applied packet again."""

from __future__ import annotations

import subprocess

from memzoi.base.runtime import git_env

from .. import builders
from .conftest import Cli

NEW = ".memzoi/records/builds-use-make-all.md"


def _superseded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "p"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    builders.write(root, builders.packet_path("builds-pkt"), builders.packet("builds-pkt", title="Builds use make"))
    cli = Cli(root, capsys)
    assert cli("proposals", "apply", "builds-pkt")[0] == 0
    code, out = cli(
        "supersede", "builds-use-make", "--title", "Builds use make all", "--body", "Run make all.", "--reason", "r"
    )
    assert code == 0, out
    assert cli("proposals", "apply", "supersede-builds-use-make")[0] == 0
    return root, cli


def _codes(cli, rel):
    return [f["code"] for f in cli("check", str(cli.root / rel))[1]["findings"]]


def test_reattest_accepts_a_hand_edit_of_a_supersede_replacement(tmp_path, monkeypatch, capsys):
    root, cli = _superseded(tmp_path, monkeypatch, capsys)
    path = root / NEW
    path.write_bytes(path.read_bytes() + b"Also run make check.\n")
    edited = path.read_bytes()
    assert "ledger_drift" in _codes(cli, NEW)
    code, out = cli("reattest", "builds-use-make-all", "--reason", "reviewed")
    assert code == 0, out
    assert out["operation"] == "reattest" and out["details"]["attested"] is False
    assert path.read_bytes() == edited
    assert "ledger_drift" not in _codes(cli, NEW)
    code, err = cli("reattest", "builds-use-make-all")
    assert code == 1 and err["error"]["code"] == "already_current"


def test_reattest_refuses_a_superseded_record_plainly(tmp_path, monkeypatch, capsys):
    root, cli = _superseded(tmp_path, monkeypatch, capsys)
    code, err = cli("reattest", "builds-use-make")
    assert code == 1 and err["error"]["code"] == "record_not_active"
    assert "builds-use-make.md" in err["error"]["message"] and "superseded" in err["error"]["message"]


def test_resolving_an_applied_proposal_again_says_where_it_went(tmp_path, monkeypatch, capsys):
    root, cli = _superseded(tmp_path, monkeypatch, capsys)
    moved = ".memzoi/proposals/resolved/applied/builds-pkt.md"
    for argv in (
        ("proposals", "apply", "builds-pkt"),
        ("proposals", "reject", "builds-pkt", "--reason", "r"),
        ("proposals", "route-local", "builds-pkt"),
    ):
        code, err = cli(*argv)
        assert code == 1 and err["error"]["code"] == "proposal_resolved", (argv, err)
        assert "already applied" in err["error"]["message"] and moved in err["error"]["message"]
    code, err = cli("proposals", "apply", "never-proposed")
    assert code == 1 and err["error"]["code"] == "proposal_not_found"
