"""A session or message id that holds a secret is refused before it is stored (``threat_blocked``, the id named,
never its text), from ``memzoi resident turn`` and the core's turn, reflection and proposal paths; real ids (UUIDs,
``msg_…``) are counted as ever."""

from __future__ import annotations

import json
import uuid

import pytest

from memzoi.cli.main import main
from memzoi.ledger import Refusal
from memzoi.resident import reflection, service

from ..canaries import assert_not_in, assert_not_stored, canary


def _turn(capsys, root, session, message):
    code = main(["resident", "turn", "--session", session, "--message", message, "--root", str(root), "--json"])
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("which", ["session", "message"])
def test_cli_turn_refuses_a_secret_id_and_stores_nothing(project, tmp_path, capsys, which):
    secret = canary()
    assert _turn(capsys, project, "s-plain", "msg_first")[0] == 0  # the database exists, so the scan reads it
    ids = {"session": "s-plain", "message": "msg_2"}
    ids[which] = f"{which[0]}-{secret}"
    code, said = _turn(capsys, project, ids["session"], ids["message"])
    assert code != 0 and "threat_blocked" in said and f"{which} id" in said
    assert_not_in(said, secret)
    assert assert_not_stored(tmp_path / "home", secret) >= 1


def test_real_ids_are_counted(project, capsys):
    for session, message in ((str(uuid.uuid4()), str(uuid.uuid4())), ("sess-42", "msg_01ABCDEF1234567890abcdef")):
        code, out = _turn(capsys, project, session, message)
        assert code == 0 and json.loads(out)["state"] == "not_scheduled"


def test_core_turn_and_reflection_proposal_refuse_secret_ids(project, tmp_path):
    secret = canary()
    with pytest.raises(Refusal) as err:
        reflection.record_turn("s", secret, project_root=project)
    assert err.value.code == "threat_blocked"
    assert_not_in(err.value.message, secret)
    with pytest.raises(Refusal) as err:
        service.propose(
            project,
            scope="project",
            action="add",
            content="Run make lint.",
            reason="asked",
            confidence=0.5,
            source="reflection",
            session_id=secret,
            message_id="msg_1",
            actor="agent",
        )
    assert err.value.code == "threat_blocked"
    assert_not_in(err.value.message, secret)
    reflection.record_turn("s", "msg_1", project_root=project)
    assert assert_not_stored(tmp_path / "home", secret) >= 1
