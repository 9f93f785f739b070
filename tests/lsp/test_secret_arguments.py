"""``workspace/executeCommand`` never echoes a secret a client passed as an argument: neither the error reply nor the
``window/logMessage`` the server sends repeats it (what a detector flags is ``[redacted]``). Canaries are built
at run time (:mod:`tests.canaries`)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from ..canaries import assert_not_in, canary
from .conftest import refusal

COMMANDS = ["memzoi.apply", "memzoi.reject", "memzoi.supersede", "memzoi.history", "memzoi.resident.approve"]


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_secret_argument_is_not_echoed(client, command):
    secret = canary()
    data = await refusal(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[secret]))
    )
    assert data["code"] and "[redacted]" in data["message"]  # refused, and the argument shown redacted
    assert_not_in(data["message"], secret, what="the error reply")
    assert_not_in("\n".join(m.message for m in client.log_messages), secret, what="the log messages")
