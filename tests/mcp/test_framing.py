"""Every line a client sends to memzoi-mcp gets an answer (memzoi_mcp.framing): parse errors, invalid requests
and invalid params are answered with JSON-RPC errors, malformed notifications with nothing, and the server keeps
serving after each."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import mcp_types as types
import pytest

from memzoi.agent.arguments import call_params_problem
from memzoi_mcp.framing import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, triage

SERVER = Path(sys.executable).with_name("memzoi-mcp")
valid = types.jsonrpc_message_adapter.validate_json


@pytest.mark.parametrize(
    "line,forward,code,rid",
    [
        ('{"jsonrpc":"2.0","id":1,"method":"ping"}', True, None, None),
        ("{not json", False, PARSE_ERROR, None),
        ("\xff\xfe garbage", False, PARSE_ERROR, None),
        ('{"jsonrpc":"2.0","id":1}', False, INVALID_REQUEST, 1),
        ('{"jsonrpc":"1.0","id":"a","method":"ping"}', False, INVALID_REQUEST, "a"),
        ("[1,2]", False, INVALID_REQUEST, None),
        ('"text"', False, INVALID_REQUEST, None),
        ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}', False, INVALID_PARAMS, 2),
    ],
)
def test_triage(line, forward, code, rid):
    fwd, answer = triage(line, valid)
    assert fwd is forward
    if code is None:
        assert answer is None
    else:
        assert answer["error"]["code"] == code and answer["id"] == rid and answer["jsonrpc"] == "2.0"


def test_call_params_problem_names_arguments_as_an_object():
    text = call_params_problem("tools/call", {"name": "propose_memory", "arguments": '{"title": "x"}'})
    assert text is not None
    assert "`arguments` must be a JSON object, got a JSON string" in text and "not its JSON text" in text
    assert '"x"' not in text  # the values are never echoed
    assert "got an array" in (call_params_problem("tools/call", {"name": "t", "arguments": [1]}) or "")
    for fine in ({"name": "t", "arguments": {"a": "1"}}, {"name": "t"}, "x"):
        assert call_params_problem("tools/call", fine) is None
    assert call_params_problem("tools/list", {"arguments": "x"}) is None


def test_a_whole_arguments_string_is_answered_with_what_to_send():
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t", "arguments": '{"a": 1}'}}
    )
    fwd, answer = triage(line, valid)
    assert fwd is False and answer is not None
    assert answer["id"] == 7 and answer["error"]["code"] == INVALID_PARAMS
    assert "`arguments` must be a JSON object" in answer["error"]["message"]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   \n",
        '{"jsonrpc":"2.0","method":"notifications/x","params":"bad"}',
        '{"jsonrpc":"2.0","id":9,"result":"late"}',
    ],
)
def test_blank_lines_malformed_notifications_and_responses_get_no_answer(line):
    assert triage(line, valid)[1] is None


def test_the_server_answers_every_malformed_line_and_keeps_serving(tmp_path, home):
    (tmp_path / ".memzoi" / "records").mkdir(parents=True)
    proc = subprocess.Popen(
        [str(SERVER), "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MEMZOI_HOME": str(home)},
    )
    got: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [got.put(json.loads(x)) for x in proc.stdout], daemon=True).start()

    def send(line: str) -> None:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    def answer() -> dict:
        return got.get(timeout=60)  # a condition wait: the next line the server writes

    try:
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
        )
        assert answer()["id"] == 0
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for line, code, rid in [
            ("{not json", PARSE_ERROR, None),
            ('{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, 1),
            ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}', INVALID_PARAMS, 2),
            ("[1,2]", INVALID_REQUEST, None),
            ('{"jsonrpc":"2.0","id":3,"method":"no/such"}', -32601, 3),
            (
                '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_memory",'
                '"arguments":"{\\"query\\": \\"x\\"}"}}',
                INVALID_PARAMS,
                4,
            ),
        ]:
            send(line)
            reply = answer()
            assert reply["error"]["code"] == code and reply["id"] == rid, (line, reply)
            if rid == 4:
                assert "`arguments` must be a JSON object, got a JSON string" in reply["error"]["message"]
        proc.stdin.write(b"\xff\xfe\x00 not utf-8\n")
        proc.stdin.flush()
        assert answer()["error"]["code"] == PARSE_ERROR
        send('{"jsonrpc":"2.0","id":6,"method":"ping"}')
        assert answer() == {"jsonrpc": "2.0", "id": 6, "result": {}}
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


async def test_a_call_is_noted_when_read_before_the_lines_ahead_of_it_are_handled(monkeypatch):
    """The server starts a call's listing when the call's line is read (issue 29): the line is read by a thread of
    its own, so a call behind a line the SDK is still handling (``initialized``, while the core loads) is noted
    at once; the lines still reach the SDK in order, and the end of input ends them."""
    import anyio

    from memzoi_mcp.arrivals import Arrivals
    from memzoi_mcp.framing import triaged_stdin

    r, w = os.pipe()
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=os.fdopen(r, "rb")))
    noted = threading.Event()
    arrivals = Arrivals(lambda: noted.set())  # type: ignore[func-returns-value]
    answers, stdin = triaged_stdin(arrivals)
    lines = [
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"a"}}}\n',
    ]
    os.write(w, "".join(lines).encode())
    it = stdin.__aiter__()
    assert await it.__anext__() == lines[0]  # the SDK holds the first line: the second is not asked for yet
    assert await anyio.to_thread.run_sync(noted.wait, 60)
    assert arrivals.take(7) is not None
    os.close(w)
    assert await it.__anext__() == lines[1]
    with pytest.raises(StopAsyncIteration):
        await it.__anext__()
    await answers.aclose()
