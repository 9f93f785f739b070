"""The pushed diagnostics as the client receives them, and the stored publish set (issue 29, warm start).

Every ``publishDiagnostics`` the server pushes goes through :meth:`PublishLog.send`, which writes the JSON of the
notification as one frame (the header pygls writes, then the body ``json.dumps`` makes of it, as pygls's
``_send_data`` does). While a project's scan runs, the message each closed file was last sent is noted
(:class:`memzoi.stores.publishset.Recorder`); once the scan is done the scan stores that set with the inputs it
was judged from (:mod:`memzoi.stores.publishset`). At the next start, when none of those inputs changed, the scan
writes the stored messages as they are (:meth:`PublishLog.replay`) before it loads anything of the project, and
what it then judges is sent only where it differs from what was written (a send of a closed file whose message is
the one replayed for it is not written again: the client shows exactly that already).

The server's inputs of a set's key (:func:`server_parts`): the position encoding, the ``severity`` and
``disabled`` settings, and a digest of this package's code (:func:`memzoi.stores.toolstamp.folder_stamp`; the
core's code is in the tool stamp of the project inputs).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store's modules are loaded by the scan, not to answer `initialize`
    from pathlib import Path

    from pygls.protocol import JsonRPCProtocol

    from memzoi.stores.publishset import Held, Messages, Recorder

    from .project import Project
    from .settings import Settings


def frame(body: bytes, content_type: str, charset: str) -> bytes:
    """One JSON-RPC frame of ``body`` (UTF-8 JSON), with the headers pygls writes."""
    head = f"Content-Length: {len(body)}\r\nContent-Type: {content_type}; charset={charset}\r\n\r\n"
    return head.encode("ascii") + body


def server_parts(settings: Settings, encoding: Any) -> list[str]:
    """What of the server itself a publish set depends on, as strings: the position encoding and the settings that
    change diagnostics (per-code severities, disabled codes). The digest of the server's code is added where the
    key is made (:func:`code_stamp`, on the scan thread)."""
    return [
        str(getattr(encoding, "value", encoding)),
        json.dumps(sorted(settings.severity.items())),
        json.dumps(sorted(settings.disabled)),
    ]


@cache
def code_stamp() -> str:
    """A digest of the ``memzoi_lsp`` package's source (:func:`memzoi.stores.toolstamp.folder_stamp`), once per
    process."""
    from memzoi.stores.toolstamp import folder_stamp  # noqa: PLC0415 lazy: start-up

    return folder_stamp(os.path.dirname(os.path.abspath(__file__)))


log = logging.getLogger("memzoi_lsp.publishlog")


class PublishLog:
    """The writing of pushed diagnostics (see the module docstring). ``protocol``: the server's JSON-RPC protocol
    (its writer); ``shown``: the URIs whose diagnostics the client shows (the diagnostics feature's set, which a
    replay adds to); ``parts``: :func:`server_parts` of the session now. On the event loop only."""

    def __init__(self, protocol: JsonRPCProtocol, shown: set[str], parts: Callable[[], list[str]]) -> None:
        self._protocol = protocol
        self._shown = shown
        #: the server's parts of a publish set's key now (:func:`server_parts` of the session's settings)
        self.parts = parts
        #: URI -> the message written by the last replay and not sent again since
        self.replayed: dict[str, bytes] = {}
        #: URI -> the last message written for an open document (it names the document's version)
        self._open: dict[str, bytes] = {}
        #: the messages of closed files sent while a scan records (:meth:`begin`)
        self.recorder: Recorder | None = None
        self._recording = 0

    def send(self, uri: str, message: dict[str, Any], *, closed: bool, clean: bool) -> None:
        """Write ``message`` (a ``publishDiagnostics`` notification for ``uri``; ``closed``: of a closed file,
        ``clean``: with no diagnostic), unless the client shows exactly it already: a closed file's message that a
        replay wrote, an open document's message for the same version that was its last one."""
        body = json.dumps(message).encode("utf-8")
        stored = self.replayed.pop(uri, None) if self.replayed else None
        if closed:
            self._open.pop(uri, None)
            if self.recorder is not None:
                self.recorder.add(uri, None if clean else body)
            if stored == body:
                return
        elif self._open.get(uri) == body:
            return
        else:
            self._open[uri] = body
        self._write([body])

    def replay(self, messages: Messages, is_open: Callable[[str], bool]) -> int:
        """Write the stored ``messages`` (URI -> message) of the files the editor does not have open, in one write;
        they are then shown (:attr:`replayed`). Returns how many were written."""
        bodies: list[bytes] = []
        for uri, body in messages.items():
            if body and not is_open(uri):
                bodies.append(body)
                self.replayed[uri] = body
                self._shown.add(uri)
                if self.recorder is not None:
                    self.recorder.add(uri, body)
        self._write(bodies)
        return len(bodies)

    def begin(self) -> None:
        """A scan starts recording what closed files are sent."""
        if self.recorder is None:
            from memzoi.stores.publishset import Recorder  # noqa: PLC0415 lazy: start-up

            self.recorder = Recorder()
        self._recording += 1

    def end(self, uris: Iterable[str], open_uris: Iterable[str]) -> Messages | None:
        """A scan's recording ends: the publish set of its files ``uris`` (``open_uris``: those the editor has
        open), ``None`` when it cannot be stored (:meth:`memzoi.stores.publishset.Recorder.messages`)."""
        recorder = self.recorder
        self._recording = max(0, self._recording - 1)
        if not self._recording:
            self.recorder = None
        return recorder.messages(set(uris), set(open_uris)) if recorder is not None else None

    def _write(self, bodies: list[bytes]) -> None:
        writer = self._protocol.writer
        if writer is None or not bodies:
            return
        p = self._protocol
        res = writer.write(b"".join(frame(b, p.CONTENT_TYPE, p.CHARSET) for b in bodies))
        if inspect.isawaitable(res):  # an asynchronous writer, as pygls's _send_data allows
            asyncio.ensure_future(res)


class Start:
    """What a scan's start knows of the stored publish set (:mod:`memzoi.stores.publishset`, issue 29: warm start):
    made on the loop with the server's ``parts`` of its key (:meth:`.publishlog.PublishLog.parts`; ``None``: the
    client pulls, nothing is pushed, stored or replayed); :meth:`list` runs on the scan thread, the scan
    writes the set and records what it sends on the loop (:mod:`memzoi_lsp.scan`), :meth:`save` runs on the scan
    thread after the scan."""

    def __init__(self, parts: list[str] | None) -> None:
        self.parts = parts
        self.paths: list[str] = []
        self.key = ""
        self.projects = ""  # the project inputs as the scan began
        self.stored: Messages | None = None
        #: the stamps a replayed set was vouched by, compactly (``hash`` of the path -> ``hash`` of its stat stamp: a
        #: dict of every file's stamp list held through the scan was some 5 MB at 11,000 files), empty without one
        self.vouched: dict[int, int] = {}
        #: packed stamps of the files analysed that the store keeps no entry of; ``None`` until the scan records
        #: (never after a replay, in pull mode or when the stored set could not be read)
        self.extra: dict[str, bytes] | None = None
        #: path -> (stat stamp, revision) of each file's stage when the scan is done (:data:`publishset.Held`)
        self.held: dict[str, Held] = {}
        #: the verdict cache's stamp the scan's store entries are under (``None``: no cache, nothing is stored)
        self.ctx: str | None = None
        self.replayed = 0  # messages written from the stored set
        self.until: Any = None

    def list(self, project: Project) -> list[str]:
        """On the scan thread: the project's listing, and (pushing) the stored publish set when it is current."""
        self.paths = paths = project.listing()
        if self.parts is None:
            return paths
        from memzoi.base.freshness import stamp_list  # noqa: PLC0415 lazy: start-up
        from memzoi.stores import publishset  # noqa: PLC0415 lazy: start-up

        try:
            self.key = publishset.set_key(project.root, [*self.parts, code_stamp()])
            self.projects = publishset.project_inputs(project.root, paths)
            got = publishset.load(project.root, self.key, paths, datetime.now(UTC), self.projects)
        except Exception as err:  # the set only saves time: the scan judges as it does without one
            log.warning("stored publish set not read: %s", err)
            self.parts = None
            return paths
        if got is not None:
            self.stored = got[0]
            self.vouched = {hash(p): hash(tuple(stamp_list(s)[:4])) for p, s in got[1].items()}
        return paths

    def shown(self, path: str, stamp: tuple[int, int, int, int] | None) -> bool:
        """Whether the client shows, from the replayed set, what the file at ``path`` judged from bytes of the stat
        ``stamp`` gives: a set was replayed and vouched for those very bytes."""
        held = self.vouched.get(hash(path)) if self.replayed else None
        return held is not None and stamp is not None and held == hash(stamp)

    def save(self, root: Path, messages: Messages) -> None:
        """On the scan thread: store ``messages`` of the project ``root`` with their inputs
        (:func:`memzoi.stores.publishset.save`). Never raises."""
        from memzoi.stores import publishset  # noqa: PLC0415 lazy: start-up

        try:
            if self.extra is None or self.ctx is None:
                return
            stamps = publishset.judged_stamps(root, self.ctx, self.paths, self.held, self.extra)
            if stamps is not None:
                publishset.save(root, self.key, self.paths, stamps, self.until, self.projects, messages)
        except Exception as err:  # a store that cannot take it costs the next start its replay, nothing else
            log.warning("publish set not stored: %s", err)


__all__ = ["PublishLog", "Start", "code_stamp", "frame", "server_parts"]
