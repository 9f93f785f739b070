"""The bytes on disk of the files the editor has open: their byte findings (``invalid_encoding``, ``bom``,
``file_too_large``), which the editor's decoded text cannot show, read off the event loop and handed to the
document cache (:meth:`.documents.Documents.set_disk`), which merges them into the text's analysis as the core
decides (:mod:`memzoi.judge.diskbytes`). Read when a document is opened and whenever the watch pass sees its file
change (a save included); a file whose scan verdict is current (same stat) is not read again."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import stat
from typing import TYPE_CHECKING, Any

from .documents import uri_to_path

if TYPE_CHECKING:
    from pathlib import Path

    from memzoi.judge.diskbytes import DiskBytes

    from .session import DiskBytesSession

log = logging.getLogger("memzoi_lsp.diskview")


def refresh(ls: DiskBytesSession, uri: str) -> None:
    """Read the byte findings of the file of the open document ``uri`` (a file below a ``.memzoi`` folder) in a
    worker thread; when they change what the document shows, its text enters the project state again and it is
    published (or re-pulled)."""
    from memzoi.judge.workspace import place  # noqa: PLC0415 lazy: start-up

    loop, path = ls.loop, uri_to_path(uri)
    if loop is None or path is None or ls.stopping or place(path).memzoi_dir is None:
        return  # only the files of a `.memzoi` folder are analysed from their text (other buffers: none read)
    project = ls.project_for(path)
    held = project.verdicts.get(project.key_of(path)) if project is not None and project.verdicts else None
    turn = ls.docs.disk_turn(uri)
    future = loop.run_in_executor(None, read, path, held)
    future.add_done_callback(functools.partial(_settle, ls, uri, turn))


def read(path: Path, held: Any = None) -> DiskBytes | None:
    """The byte findings of the regular file at ``path`` (worker thread): from ``held``, the scan's first stage of
    the file (:class:`memzoi.stores.firststage.FirstStage`), while its stat is the file's and it is UTF-8; else
    from the bytes read now. ``None`` when there is no regular file (never opened: a FIFO would block) or it cannot be read."""
    from memzoi.base.freshness import read_bytes  # noqa: PLC0415 lazy: start-up
    from memzoi.judge import diskbytes  # noqa: PLC0415 lazy: start-up

    if held is not None and held.current() and not any(f.code == "invalid_encoding" for f in held.first.own):
        # a stored stage has no text: the bytes of a file that is not UTF-8 are read for the line before the bad
        # byte, which places the finding in the editor's decoding of it (diskbytes.Placed.before)
        return diskbytes.of_findings(held.first.own, held.lines(), held.revision)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        data = read_bytes(path)
    except OSError:
        return None
    return diskbytes.of_bytes(data)


def _settle(ls: DiskBytesSession, uri: str, turn: int, future: asyncio.Future[DiskBytes | None]) -> None:
    """On the loop, once a read ended: hand its findings to the document cache; re-diagnose when they changed."""
    if ls.stopping or future.cancelled():
        return
    try:
        disk = future.result()
    except Exception:  # the barrier: a failed read leaves the document judged by its text alone
        log.exception("reading the bytes of an open document failed")
        disk = None
    if not ls.docs.is_open(uri):
        ls.docs.forget_disk(uri)
        return
    if ls.docs.set_disk(uri, turn, disk):
        ls.apply_editor(uri)
        ls.republish({uri})


__all__ = ["read", "refresh"]
