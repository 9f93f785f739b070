"""The stdio channel at the byte level: nothing but framed JSON-RPC on stdout, and process exit behaviour
(B24 shutdown before exit, B25 stdin closed without shutdown)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..builders import edit
from .conftest import git_init, proposal_text, record_text, server_command


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse_strict(data: bytes) -> list[dict]:
    """Parse a JSON-RPC stdout stream; any byte outside a well-formed frame is an error."""
    out = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            raise AssertionError(f"stray bytes on stdout at {pos}: {data[pos : pos + 80]!r}")
        headers = data[pos:end].decode("ascii").split("\r\n")
        length = None
        for h in headers:
            name, sep, value = h.partition(":")
            if not sep:
                raise AssertionError(f"not a header line on stdout: {h!r}")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
            elif name.strip().lower() != "content-type":
                raise AssertionError(f"unexpected header on stdout: {h!r}")
        if length is None:
            raise AssertionError("frame without Content-Length")
        body = data[end + 4 : end + 4 + length]
        if len(body) != length:
            raise AssertionError("truncated frame")
        out.append(json.loads(body))
        pos = end + 4 + length
    return out


def test_strict_parser_rejects_pollution():
    good = frame({"jsonrpc": "2.0", "id": 1, "result": None})
    assert parse_strict(good + good)[1]["id"] == 1
    for polluted in (b"hello\n" + good, good + b"print output", good[:-1]):
        with pytest.raises((AssertionError, ValueError)):
            parse_strict(polluted)


def _spawn(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*server_command(), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "MEMZOI_HOME": str(home)},
    )


def _init(root: Path, encodings=("utf-16",)) -> list[bytes]:
    return [
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": root.as_uri(),
                    "capabilities": {
                        "general": {"positionEncodings": list(encodings)},
                        "window": {"workDoneProgress": True},
                    },
                    "initializationOptions": {"logToClient": True, "logLevel": "debug"},
                },
            }
        ),
        frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    ]


def read_until(proc: subprocess.Popen, done) -> list[dict]:
    """Read framed messages from the server until ``done(messages)`` holds; answers the server's own requests
    (progress tokens, configuration) as a client would, so the server never waits on us. Returns every message
    read. The test's timeout bounds the wait if the condition never comes."""
    messages: list[dict] = []
    while not done(messages):
        msg = read_frame(proc.stdout)
        messages.append(msg)
        if "method" in msg and "id" in msg:
            result = [{}] * len(msg["params"]["items"]) if msg["method"] == "workspace/configuration" else None
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            proc.stdin.flush()
    return messages


def scanned(messages: list[dict]) -> bool:
    """The server has logged the end of its workspace scan to the client (logToClient)."""
    return any(m.get("method") == "window/logMessage" and "scanned" in m["params"]["message"] for m in messages)


def test_stdout_is_only_framed_jsonrpc(tmp_path: Path):
    root = tmp_path / "ws"
    rec = root / ".memzoi" / "records"
    rec.mkdir(parents=True)
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    (rec / "a.md").write_text(record_text("a"))
    (rec / "b.md").write_text(edit(record_text("b"), "lane: semantic", "lane: nope"))
    (root / ".memzoi" / "proposals" / "pending" / "p-1.md").write_text(proposal_text("p-1"))
    git_init(root)  # hover runs git: its output must not reach our stdout
    uri = (rec / "b.md").as_uri()
    text = (rec / "b.md").read_text()
    msgs = _init(root, ("utf-8", "utf-16")) + [
        frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
            }
        ),
        frame(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}},
            }
        ),
        frame(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": 8, "character": 8}},
            }
        ),
        frame(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "textDocument/codeAction",
                "params": {
                    "textDocument": {"uri": uri},
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 30, "character": 0}},
                    "context": {"diagnostics": []},
                },
            }
        ),
        frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/nonsense", "params": {"x": 1}}),
        frame({"jsonrpc": "2.0", "id": 6, "method": "textDocument/hover", "params": {"bad": True}}),
    ]
    proc = _spawn(tmp_path / "home")
    try:
        for m in msgs:
            proc.stdin.write(m)
        proc.stdin.flush()
        # Let the scan, watcher and logging run: wait for the last request's answer and the end of the scan.
        early = read_until(proc, lambda ms: scanned(ms) and any(m.get("id") == 6 and "method" not in m for m in ms))
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    messages = early + parse_strict(out)
    by_id = {m.get("id"): m for m in messages if "id" in m and "method" not in m}
    assert by_id[1]["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert "memzoi" in json.dumps(by_id[2]["result"])
    assert "error" in by_id[5] and "error" in by_id[6]  # malformed requests answered, server alive
    assert by_id[9]["result"] is None
    assert proc.returncode == 0
    methods = {m.get("method") for m in messages}
    assert "window/logMessage" in methods  # logToClient bridges records to the client, not to stdout
    # pygls logs the malformed request's structuring error; none of our own code may have raised.
    assert b"memzoi_lsp/" not in err and b"/memzoi/" not in err, err.decode(errors="replace")
    # stderr (which editors record as errors) stays quiet: no INFO line there, the client got them instead
    assert b" INFO " not in err, err.decode(errors="replace")
    assert any(m.get("method") == "window/logMessage" and m["params"]["type"] == 3 for m in messages)
    assert not any("Error in server" in json.dumps(m) for m in messages)


def test_stdin_closed_without_shutdown_exits_nonzero(tmp_path: Path):
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    proc = _spawn(tmp_path / "home")
    for m in _init(root):
        proc.stdin.write(m)
    proc.stdin.flush()
    read_until(proc, scanned)  # fully started: scan done, watcher running
    proc.stdin.close()
    try:
        proc.wait(timeout=30)  # a hang guard, not a speed bar (about 0.3 s when the machine is idle)
    finally:
        proc.kill()
    assert proc.returncode == 1
    parse_strict(proc.stdout.read())


def read_frame(stream) -> dict:
    """Read exactly one framed message from a binary stream (blocking)."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError("stdout closed")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def test_b26_reply_to_server_request_after_shutdown_is_processed(tmp_path: Path):
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    proc = _spawn(tmp_path / "home", "--log-level", "INFO")  # the test reads an INFO line from stderr
    try:
        proc.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": root.as_uri(),
                        "capabilities": {"workspace": {"configuration": True}},
                    },
                }
            )
        )
        proc.stdin.flush()
        first = read_frame(proc.stdout)
        while first.get("method") == "window/logMessage":  # allowed before the initialize result (LSP 3.17)
            first = read_frame(proc.stdout)
        assert first["id"] == 1
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.flush()
        while True:
            msg = read_frame(proc.stdout)
            if msg.get("method") == "workspace/configuration":
                break
        # The client shuts down first, then answers the server's pending request.
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": [{"debounceMs": 50}]}))
        proc.stdin.flush()
        while True:
            reply = read_frame(proc.stdout)
            if reply.get("id") == 2:
                break
        assert reply["result"] is None
        # The reply must resolve the server's pending request before exit: wait until the server says so.
        seen = b""
        while b"configuration received after shutdown" not in seen:
            line = proc.stderr.readline()
            assert line, "stderr closed before the configuration reply was processed"
            seen += line
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        _out, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 0


def test_b24_shutdown_during_scan_is_answered_and_exits_zero(tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(1500):
        (records / f"r-{i}.md").write_text(record_text(f"r-{i}", f"Record {i}"))
    proc = _spawn(tmp_path / "home", "--log-level", "INFO")  # the test reads an INFO line from stderr
    try:
        for m in _init(root):
            proc.stdin.write(m)
        proc.stdin.flush()
        # The scan is running once it has reported progress on its first chunk (1500 files make 15 chunks).
        read_until(
            proc,
            lambda ms: any(m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "report" for m in ms),
        )
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.flush()
        read_until(proc, lambda ms: any(m.get("id") == 2 and "method" not in m for m in ms))
        # the reply comes at once; the scan thread's kept jobs and the indexes' close run before the process exits
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        _out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert b"shutdown complete" in err


def _one_request(tmp_path: Path, method: str, params: dict, *server_args: str) -> tuple[dict, bytes]:
    """Start a server on an empty project, send one request (id 2) after initialize, shut down; returns the reply
    and everything the server wrote to stderr."""
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    proc = _spawn(tmp_path / "home", *server_args)
    try:
        for m in _init(root):
            proc.stdin.write(m)
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}))
        proc.stdin.flush()
        [reply] = [
            m
            for m in read_until(proc, lambda ms: any(m.get("id") == 2 and "method" not in m for m in ms))
            if m.get("id") == 2 and "method" not in m
        ]
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return reply, err


def test_client_mistakes_log_one_line_not_a_traceback(tmp_path: Path):
    # An unknown command is answered with an error; stderr (which editors show as errors) gets one line for it.
    reply, err = _one_request(tmp_path, "workspace/executeCommand", {"command": "memzoi.nope", "arguments": [{}]})
    assert reply["error"]["code"] == -32602
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert b"JsonRpcInvalidParams" in err  # the one line names what went wrong


@pytest.mark.parametrize("level", [None, "DEBUG"])
def test_an_undeserializable_message_logs_one_line_without_the_clients_text(tmp_path: Path, level):
    # pygls formats the whole stack, with the value it could not read, into the text of "Unable to deserialize
    # message": stderr gets that line with the exception's type only; --log-level DEBUG keeps the stack.
    marker = "MARKER-client-text-7f3a"
    uri = (tmp_path / "ws" / ".memzoi" / "records" / "a.md").as_uri()
    reply, err = _one_request(
        tmp_path,
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": marker, "character": 0}},
        *(["--log-level", level] if level else []),
    )
    assert reply["error"]["code"] == -32602
    text = err.decode(errors="replace")
    if level == "DEBUG":
        assert "Traceback" in text and "Unable to deserialize message" in text
        return
    [line] = [ln for ln in text.splitlines() if "Unable to deserialize message" in ln]
    assert line.endswith(
        "Unable to deserialize message (ClassValidationError; run with --log-level DEBUG for the stack)"
    ), line
    assert marker not in text and "Traceback" not in text and "Exception Group" not in text, text
