"""The stdio transport never goes deaf: malformed frames over a real stdio subprocess, each followed by a valid
request that must be answered (or a clean non-zero exit), and the frame parser byte by byte."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
import types
from pathlib import Path

import pytest

from memzoi_lsp.clientinput import MAX_DEFERRED_MESSAGES, Input
from memzoi_lsp.transport import MAX_CONTENT_LENGTH, Broken, FrameParser

from .conftest import git_init, server_command
from .test_stdio import frame

TIMEOUT = 60  # seconds to wait for one expected message (never a sleep: a reply ends the wait at once)


def body(message: dict) -> bytes:
    return json.dumps(message).encode()


def frame_bytes(data: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _hover(i: int) -> dict:
    return {"jsonrpc": "2.0", "id": i, "method": "workspace/symbol", "params": {"query": "x"}}


# -- the parser -------------------------------------------------------------------------------------------------


def _feed_all(chunks: list[bytes], cap: int = MAX_CONTENT_LENGTH) -> list[bytes | Broken]:
    parser = FrameParser(cap)
    out: list[bytes | Broken] = []
    for c in chunks:
        out += parser.feed(c)
    return out


def test_parser_frames_split_anywhere():
    data = frame(_hover(1)) + frame(_hover(2))
    for cut in range(len(data) + 1):
        assert _feed_all([data[:cut], data[cut:]]) == [body(_hover(1)), body(_hover(2))], cut
    assert _feed_all([bytes([b]) for b in data]) == [body(_hover(1)), body(_hover(2))]


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: abc\r\n\r\n",
        b"Content-Type: x\r\n\r\n",
        b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n",
        b"garbage\r\n\r\n",
        b"Content-Length 12\r\n\r\n",
    ],
)
def test_parser_resynchronises_after_a_broken_header(header):
    good = frame(_hover(7))
    out = _feed_all([header + b'{"jsonrpc": "2.0"}' + good])
    assert isinstance(out[0], Broken) and out[-1] == body(_hover(7))


def test_parser_short_and_long_lengths():
    good = body(_hover(1))
    short = b"Content-Length: %d\r\n\r\n" % (len(good) - 5) + good
    out = _feed_all([short + frame(_hover(2))])
    assert out[0] == good[:-5] and isinstance(out[1], Broken) and out[-1] == body(_hover(2))
    long = b"Content-Length: %d\r\n\r\n" % (len(good) + 500) + good
    out = _feed_all([long, frame(_hover(2))])  # the next frame shows the length was wrong: no waiting
    assert isinstance(out[0], Broken) and out[-1] == body(_hover(2))


def test_parser_refuses_a_length_over_the_cap_without_buffering_it():
    parser = FrameParser(cap=1000)
    assert isinstance(parser.feed(b"Content-Length: 99999999999\r\n\r\n")[0], Broken)
    for _ in range(100):
        assert parser.feed(b"x" * 900) == []
        assert len(parser.buf) < 200  # skipped as it arrives
    assert parser.hopeless
    assert parser.feed(frame(_hover(3))) == [body(_hover(3))]


# -- over stdio ---------------------------------------------------------------------------------------------------


class Server:
    """A real ``memzoi-lsp`` process with a thread reading its framed stdout into a queue."""

    def __init__(self, root: Path, home: Path, env: dict[str, str] | None = None, init_options=None) -> None:
        self.proc = subprocess.Popen(
            server_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "MEMZOI_HOME": str(home), **(env or {})},
        )
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = b""
        self.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": root.as_uri(),
                        "capabilities": {"window": {"showDocument": {"support": True}}},
                        "initializationOptions": init_options,
                    },
                }
            )
        )
        assert self.wait(lambda m: m.get("id") == 1)["result"]["capabilities"]
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, pred, skipped: list | None = None) -> dict:
        """The next message matching ``pred``; the others read meanwhile go to ``skipped``."""
        while True:
            msg = self.messages.get(timeout=TIMEOUT)
            if msg is None:
                raise AssertionError("the server closed stdout")
            if pred(msg):
                return msg
            if skipped is not None:
                skipped.append(msg)

    def request(self, message: dict, skipped: list | None = None) -> dict:
        self.send(frame(message))
        return self.wait(lambda m: m.get("id") == message["id"] and "method" not in m, skipped)

    def answer_request(self, method: str, result) -> dict:
        msg = self.wait(lambda m: m.get("method") == method)
        self.send(frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        return msg

    def close(self) -> int:
        try:
            self.send(frame({"jsonrpc": "2.0", "id": 999, "method": "shutdown"}))
            self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
            _, self.stderr = self.proc.communicate(timeout=TIMEOUT)
        except (BrokenPipeError, ValueError):
            self.proc.wait(timeout=TIMEOUT)
        finally:
            self.proc.kill()
        return self.proc.returncode


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    s = Server(root, tmp_path / "home")
    s.root = root
    yield s
    s.proc.kill()


def test_malformed_frames_each_followed_by_an_answered_request(server: Server):
    good = body(_hover(0))
    cases = [
        ("not JSON", b"Content-Length: 9\r\n\r\nnot json!"),
        ("short length", b"Content-Length: %d\r\n\r\n" % (len(good) - 3) + good),
        ("negative length", b"Content-Length: -4\r\n\r\n" + good),
        ("non-numeric length", b"Content-Length: many\r\n\r\n" + good),
        ("missing length", b"Content-Type: application/json\r\n\r\n" + good),
        ("huge length", b"Content-Length: 99999999999\r\n\r\n" + good),
        ("long length", b"Content-Length: %d\r\n\r\n" % (len(good) + 10_000) + good),
        ("deep JSON", frame_bytes(b"[" * 100_000 + b"]" * 100_000)),
        ("not an object", frame_bytes(b"[1, 2]")),
    ]
    for i, (name, bad) in enumerate(cases, start=10):
        server.send(bad)
        before: list = []  # what the server sent between the broken frame and the answer
        reply = server.request(_hover(i), before)
        assert "result" in reply, name
        errors = [m for m in before if "error" in m]
        assert errors and all(
            m["error"]["code"] in (-32700, -32600) and "id" in m and m["id"] is None for m in errors
        ), name
    assert server.close() == 0


def test_requests_after_shutdown_get_invalid_request(server: Server):
    assert server.request({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})["result"] is None
    reply = server.request(_hover(3))
    assert reply["error"]["code"] == -32600
    server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    server.proc.communicate(timeout=TIMEOUT)
    assert server.proc.returncode == 0


def test_garbage_without_any_frame_start_exits_nonzero(tmp_path: Path):
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    s = Server(root, tmp_path / "home")
    chunk = b"x" * (1 << 20)
    try:
        for _ in range(MAX_CONTENT_LENGTH // len(chunk) + 8):
            s.send(chunk)
        s.proc.stdin.close()
    except (BrokenPipeError, ValueError):
        pass  # the server gave up before reading it all
    try:
        s.proc.wait(timeout=TIMEOUT)
    finally:
        s.proc.kill()
    assert s.proc.returncode == 1
    assert b"no frame start" in s.proc.stderr.read()  # it gave up on purpose, not at the end of input


def test_null_reply_to_show_document_does_not_block_the_command(workspace: Path, tmp_path: Path):
    git_init(workspace)
    s = Server(workspace, tmp_path / "home2")
    try:
        record = workspace / ".memzoi" / "records" / "use-pnpm.md"
        s.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "workspace/executeCommand",
                    "params": {
                        "command": "memzoi.tombstone",
                        "arguments": [{"uri": record.as_uri(), "reason": "obsolete"}],
                    },
                }
            )
        )
        s.answer_request("window/showDocument", None)  # malformed: ShowDocumentResult is an object
        reply = s.wait(lambda m: m.get("id") == 5 and "method" not in m)
        assert reply["result"]["status"] == "applied", reply
        assert "result" in s.request(_hover(6))
        assert s.close() == 0
    finally:
        s.proc.kill()


def test_a_client_that_never_answers_show_document_still_gets_the_command_answered(workspace: Path, tmp_path: Path):
    # The wait for window/showDocument is bounded (a very short one here, so the test never waits on a clock):
    # the tombstone is on disk, so the command answers and the server logs that the client did not answer.
    git_init(workspace)
    s = Server(workspace, tmp_path / "home3", init_options={"showDocumentTimeoutMs": 1})
    try:
        record = workspace / ".memzoi" / "records" / "use-pnpm.md"
        s.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "workspace/executeCommand",
                    "params": {
                        "command": "memzoi.tombstone",
                        "arguments": [{"uri": record.as_uri(), "reason": "obsolete"}],
                    },
                }
            )
        )
        seen: list = []
        reply = s.wait(lambda m: m.get("id") == 5 and "method" not in m, seen)
        assert reply["result"]["status"] == "applied", reply
        [show] = [m for m in seen if m.get("method") == "window/showDocument"]  # asked, never answered

        def said(m: dict) -> bool:  # logged before the reply (it is sent right after), or just after it
            return (
                m.get("method") == "window/logMessage"
                and "did not answer window/showDocument" in m["params"]["message"]
            )

        if not any(said(m) for m in seen):
            s.wait(said)
        # A late answer is taken quietly, and the server goes on.
        s.send(frame({"jsonrpc": "2.0", "id": show["id"], "result": {"success": True}}))
        assert "result" in s.request(_hover(6))
        assert s.close() == 0
        assert b"Traceback" not in s.stderr and b"InvalidStateError" not in s.stderr, s.stderr
    finally:
        s.proc.kill()


# -- what the transport tells of the client's input (the start-up's deferred work) ---------------------------------


def _input_with_queue(fd: int | None = None) -> tuple[Input, asyncio.Queue[bytes]]:
    state = Input()
    q: asyncio.Queue[bytes] = asyncio.Queue()
    state.queue, state.fd = q, fd
    return state, q


def test_input_before_serving_is_drained_and_runs_a_callback_at_once():
    state = Input()
    ran: list[int] = []
    state.when_drained(lambda: ran.append(1))
    assert ran == [1]


def test_input_waits_while_a_message_is_parsed_queued_being_read_or_readable():
    state, q = _input_with_queue()
    ran: list[int] = []
    state.backlog = 1
    state.when_drained(lambda: ran.append(1))
    state.check()
    assert ran == []
    state.backlog = 0
    q.put_nowait(b"x")
    state.check()
    assert ran == []
    q.get_nowait()
    state.reading = True
    state.check()
    assert ran == []
    state.reading = False
    read_end, write_end = os.pipe()
    try:
        state.fd = read_end
        os.write(write_end, b"Content-Length: 2\r\n\r\n{}")
        state.check()
        assert ran == [], "bytes waiting on stdin count as input"
        os.read(read_end, 1024)
        state.check()
        assert ran == [1]
        state.check()
        assert ran == [1], "a callback runs once"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_input_that_never_drains_runs_the_callback_after_the_cap_of_messages():
    state, q = _input_with_queue()
    q.put_nowait(b"more")
    ran: list[int] = []
    state.when_drained(lambda: ran.append(1))
    state.handled += MAX_DEFERRED_MESSAGES - 1
    state.check()
    assert ran == []
    state.handled += 1
    state.check()
    assert ran == [1]


def test_a_failing_deferred_callback_is_logged_and_the_others_run(caplog):
    state, q = _input_with_queue()
    q.put_nowait(b"x")
    ran: list[int] = []

    def fail() -> None:
        raise RuntimeError("boom")

    state.when_drained(fail)
    state.when_drained(lambda: ran.append(1))
    q.get_nowait()
    state.check()
    assert ran == [1]
    assert "deferred start-up work failed" in caplog.text


def test_the_readers_mark_ends_on_the_loop_in_the_step_that_queues_the_bytes():
    # The loop must never take bytes from the queue while they still count as being read: it would then wait for
    # input with the deferred start-up work never run.
    from memzoi_lsp.transport import _put

    async def run() -> tuple[bool, bytes]:
        state, q = _input_with_queue()
        state.reading = True
        await _put(q, b"frame", state)
        return state.reading, q.get_nowait()

    assert asyncio.run(run()) == (False, b"frame")


class _Recorder:
    """A protocol for :func:`serve` alone: each message's method, with whether the input counted as drained as the
    message was handled (what the deferred start-up work would have been told)."""

    def __init__(self, state: Input) -> None:
        self.state = state
        self.seen: list[tuple[str, bool]] = []
        self.changed = asyncio.Event()

    def structure_message(self, data: dict) -> object:
        return types.SimpleNamespace(**data)

    def handle_message(self, message: object) -> None:
        self.seen.append((message.method, self.state.drained()))  # type: ignore[attr-defined]
        self.changed.set()


@pytest.mark.parametrize("cut", ["after_the_header", "in_the_body", "in_the_header"])
async def test_a_message_partly_received_is_input_still_to_handle(cut: str):
    # A client may write a frame's header and its body apart, and a large document arrives in several reads: with
    # part of `didOpen` received and nothing more readable yet, the work deferred until the input is drained must
    # still wait (it ran before the document was published).
    from memzoi_lsp.transport import serve

    opened = frame_bytes(body({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": "x" * 100}}))
    at = {"after_the_header": opened.index(b"\r\n\r\n") + 4, "in_the_body": len(opened) - 50, "in_the_header": 9}[cut]
    read_end, write_end = os.pipe()
    os.write(write_end, frame_bytes(body({"jsonrpc": "2.0", "method": "initialized", "params": {}})) + opened[:at])
    state = Input()
    proto = _Recorder(state)
    with os.fdopen(read_end, "rb", buffering=0) as stdin:
        served = asyncio.ensure_future(serve(threading.Event(), stdin, proto, None, state))
        try:
            await asyncio.wait_for(proto.changed.wait(), TIMEOUT)
            proto.changed.clear()
            os.write(write_end, opened[at:])  # the rest of the frame
            await asyncio.wait_for(proto.changed.wait(), TIMEOUT)
        finally:
            os.close(write_end)  # the end of the input: serve returns
            await asyncio.wait_for(served, TIMEOUT)
    assert proto.seen == [("initialized", False), ("textDocument/didOpen", True)]


def test_the_parser_tells_part_of_a_frame_from_line_breaks_and_skipped_garbage():
    parser = FrameParser()
    assert not parser.partial
    parser.feed(b"\r\n")  # line breaks between frames are no message
    assert not parser.partial
    parser.feed(b"Content-Len")
    assert parser.partial
    parser.feed(b"gth: 2\r\n\r\n{")
    assert parser.partial
    assert parser.feed(b"}") == [b"{}"] and not parser.partial
    parser.feed(b"garbage\r\n\r\nmore garbage")  # skipped until the next frame start: no message on its way
    assert parser.skipping and not parser.partial


def test_a_message_that_cannot_be_read_is_logged_as_one_line(server: Server):
    uri = (server.root / ".memzoi" / "records" / "fuzz.md").as_uri()
    doc = {"uri": uri, "languageId": "markdown", "version": 1, "text": "x"}
    server.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}}))
    negative = {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}  # LSP: uinteger
    params = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": negative, "text": "key zq7"}]}
    server.send(frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}))
    seen: list = []
    assert "result" in server.request(_hover(5), seen)  # still answering
    assert server.close() == 0
    stderr = server.stderr.decode("utf-8", "replace")
    logged = [m["params"]["message"] for m in seen if m.get("method") == "window/logMessage"]
    assert "Traceback" not in stderr and not any("Traceback" in m for m in logged), stderr[-3000:]
    (line,) = [l for l in stderr.splitlines() if "a message could not be read" in l]
    assert "ValueError at DidChangeTextDocumentNotification.params.content_changes[0].range.start" in line, line
    assert "zq7" not in stderr and not any("zq7" in m for m in logged)
