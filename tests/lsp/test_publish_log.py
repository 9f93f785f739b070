"""The writing of pushed diagnostics (:class:`memzoi_lsp.publishlog.PublishLog`), without a server: each message is
framed as pygls frames it, a replay writes the stored messages of closed files in one write, and a message the
client shows already (a closed file's replayed one, an open document's last one for its version) is not written
again, while anything else is; what a scan records is each closed file's last message."""

from __future__ import annotations

import json

from pygls.protocol import JsonRPCProtocol

from memzoi_lsp import diagwire
from memzoi_lsp.publishlog import PublishLog, frame


class _Writer:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)


class _Protocol:
    CONTENT_TYPE = JsonRPCProtocol.CONTENT_TYPE
    CHARSET = JsonRPCProtocol.CHARSET

    def __init__(self) -> None:
        self.writer = _Writer()


def _log() -> tuple[PublishLog, _Protocol, set[str]]:
    protocol, shown = _Protocol(), set()
    return PublishLog(protocol, shown, lambda: ["utf-16", "[]", "[]"]), protocol, shown  # type: ignore[arg-type]


def _message(uri: str, n: int, version: int | None = None) -> dict:
    item = {"range": {"start": {"line": n, "character": 0}, "end": {"line": n, "character": 1}}, "message": "m"}
    return diagwire.publish_notification(uri, [item] if n >= 0 else [], version)


def _body(uri: str, n: int, version: int | None = None) -> bytes:
    return json.dumps(_message(uri, n, version)).encode()


def test_a_frame_is_what_pygls_writes():
    body = _body("file:///a.md", 1)
    header = f"Content-Length: {len(body)}\r\nContent-Type: {JsonRPCProtocol.CONTENT_TYPE}; charset=utf-8\r\n\r\n"
    assert frame(body, JsonRPCProtocol.CONTENT_TYPE, "utf-8") == header.encode() + body


def test_a_replay_is_one_write_of_the_closed_files_and_a_same_message_is_not_written_again():
    log, protocol, shown = _log()
    stored = {"file:///a.md": _body("file:///a.md", 1), "file:///b.md": _body("file:///b.md", 2), "file:///o.md": b""}
    assert log.replay(stored, lambda uri: uri == "file:///b.md") == 1  # b is open: the editor's text governs it
    assert protocol.writer.writes == [frame(stored["file:///a.md"], protocol.CONTENT_TYPE, protocol.CHARSET)]
    assert shown == {"file:///a.md"}
    log.send("file:///a.md", _message("file:///a.md", 1), closed=True, clean=False)
    assert len(protocol.writer.writes) == 1  # the client shows exactly this already
    log.send("file:///a.md", _message("file:///a.md", 1), closed=True, clean=False)
    assert len(protocol.writer.writes) == 2  # once taken, the replayed message is no longer assumed shown
    log.replay({"file:///a.md": _body("file:///a.md", 1)}, lambda uri: False)
    log.send("file:///a.md", _message("file:///a.md", 3), closed=True, clean=False)
    assert protocol.writer.writes[-1].endswith(_body("file:///a.md", 3))  # another message: written


def test_an_open_documents_same_message_for_its_version_is_written_once():
    log, protocol, _ = _log()
    for version in (1, 1, 2):
        log.send("file:///o.md", _message("file:///o.md", 1, version), closed=False, clean=False)
    assert len(protocol.writer.writes) == 2
    log.send("file:///o.md", _message("file:///o.md", 1), closed=True, clean=False)  # closed: its file's message
    log.send("file:///o.md", _message("file:///o.md", 1, 2), closed=False, clean=False)  # opened again
    assert len(protocol.writer.writes) == 4


def test_a_recording_keeps_each_closed_files_last_message():
    log, _, _ = _log()
    log.send("file:///x.md", _message("file:///x.md", 1), closed=True, clean=False)  # before: not recorded
    log.begin()
    log.send("file:///a.md", _message("file:///a.md", 1), closed=True, clean=False)
    log.send("file:///a.md", _message("file:///a.md", 2), closed=True, clean=False)
    log.send("file:///b.md", _message("file:///b.md", 1), closed=True, clean=False)
    log.send("file:///b.md", _message("file:///b.md", -1), closed=True, clean=True)  # clean again
    log.send("file:///o.md", _message("file:///o.md", 1, 1), closed=False, clean=False)
    files = {"file:///a.md", "file:///b.md", "file:///o.md", "file:///x.md"}
    assert log.end(files, {"file:///o.md"}) == {"file:///a.md": _body("file:///a.md", 2), "file:///o.md": b""}
    assert log.recorder is None
