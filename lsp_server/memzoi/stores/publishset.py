"""The language server's stored publish set (issue 29, warm start): what the server published for every closed file
of a project, kept in the project's store with the inputs it was judged from, so that a warm start whose inputs
are all unchanged publishes it as it is instead of judging anything first.

**What is kept.** Each closed file's last published message (opaque bytes to this module: the server's JSON of its
``publishDiagnostics`` notification, a line without a newline) under the file's key (its URI); a file published
clean is not kept (a new session shows nothing for it); a file the editor had open keeps only its key, with an
empty message: its closed-file diagnostics were never published, so a replay is refused unless the editor has it
open again. Nothing of a file's text is kept: a message names the kind of a secret and where it is, never its
value, as ``memzoi check``'s stored report does (:mod:`memzoi.stores.replay`, which also keeps the findings of a file
holding a secret, without its bytes). The set is stored as a row of the stored reports (table ``reports``, checksummed,
a damaged row is a miss: :func:`memzoi.stores.replay.load`) under a key of its own (:func:`set_key`).

**Its inputs** are those of ``memzoi check``'s replay (:mod:`memzoi.stores.replay`, one rule): the listing of the
project's files (their paths in order), every file's bytes by the one freshness rule
(:func:`memzoi.stores.replay.changed_files`), the project's inputs (:func:`memzoi.stores.replay.project_inputs`:
``config.toml``, git's ``HEAD``, index, ``info/exclude`` and every ``.gitignore``, the ledger's head, the store
version, the tool stamp) and the earliest retention boundary (a passing boundary invalidates); plus what only the
server has, in the key: the position encoding, the settings that change diagnostics and a digest of the server's own
code (:func:`set_key`'s ``server`` parts). Any difference, and the set is not published: the server judges as it
does without one.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base import freshness
from . import replay
from .replayinputs import Inputs, Stamps

#: The first part of a publish set's key (:func:`set_key`): a key no argument list of ``memzoi check`` makes.
KIND = "memzoi-lsp.publish-set.v1"
#: Messages by file key: the stored form of a publish set (:func:`encode`); ``b""`` marks a file open at the record.
Messages = dict[str, bytes]


def set_key(root: str | os.PathLike[str], server: list[str]) -> str:
    """The key a project's publish set is stored under: the project ``root`` and the ``server`` parts (the position
    encoding, the settings that change diagnostics, the server code's digest, as strings). Hex BLAKE3
    (:func:`memzoi.stores.replay.report_key`)."""
    return replay.report_key([KIND, *server], os.fspath(root))


class Recorder:
    """The messages published for closed files, by key, as they are sent (the last one of a key wins; ``None``: the
    file is clean again). Holds them as given; :meth:`messages` gives the set. A key holding a NUL or a newline,
    or a message holding a newline, makes the record unusable (:attr:`sound` False), never a wrong set."""

    def __init__(self) -> None:
        self._last: dict[str, bytes | None] = {}
        self.sound = True

    def add(self, key: str, message: bytes | None) -> None:
        """Note that ``message`` (``None``: nothing) is what the file ``key`` shows now."""
        if message is not None and b"\n" in message or "\0" in key or "\n" in key:
            self.sound = False
        self._last[key] = message

    def messages(self, keys: set[str], open_keys: set[str]) -> Messages | None:
        """The publish set of the files ``keys``: each one's last non-empty message, and ``b""`` for those of
        ``open_keys`` (open in the editor: not known as a closed file); ``None`` when the record is not sound."""
        if not self.sound:
            return None
        out: Messages = {k: b"" for k in open_keys & keys}
        for key, message in self._last.items():
            if message and key in keys and key not in open_keys:
                out[key] = message
        return out


def encode(messages: Messages) -> bytes:
    """The stored form of ``messages``: per file, its key (UTF-8, ``surrogateescape``), a NUL, its message and a
    newline, in key order. Raises ``ValueError`` for a key holding a NUL or newline or a message holding a newline."""
    parts: list[bytes] = []
    for key in sorted(messages):
        message = messages[key]
        if "\0" in key or "\n" in key or b"\n" in message:
            raise ValueError("a key or message that cannot be stored")
        parts.append(key.encode("utf-8", "surrogateescape") + b"\0" + message + b"\n")
    return b"".join(parts)


def decode(data: bytes) -> Messages:
    """:func:`encode`'s ``data`` read back. Raises ``ValueError`` for data it did not write."""
    out: Messages = {}
    for line in data.split(b"\n")[:-1] if data else []:
        key, sep, message = line.partition(b"\0")
        if not sep:
            raise ValueError("not a stored publish set")
        out[key.decode("utf-8", "surrogateescape")] = message
    if data and not data.endswith(b"\n"):
        raise ValueError("not a stored publish set")
    return out


def listing_digest(paths: list[str]) -> str:
    """The walk part of a publish set's inputs: :func:`memzoi.stores.replay.walk_digest` of the project's listed
    files (absolute paths, in the listing's order)."""
    return replay.walk_digest(paths, (), (), ())


def project_inputs(root: str | os.PathLike[str], paths: list[str]) -> str:
    """:func:`memzoi.stores.replay.project_inputs` of the project ``root`` whose files are ``paths`` (the folders
    holding them decide which ``.gitignore`` files count). Never raises."""
    return replay.project_inputs({os.fspath(root): {os.path.dirname(p) for p in paths}})


def _connect(root: str | os.PathLike[str], create: bool) -> sqlite3.Connection | None:
    """A connection to the store of the project ``root``; ``None`` when it cannot be opened, or (without
    ``create``) when there is none yet. Never raises."""
    from .store import connect, store_path  # noqa: PLC0415 lazy: start-up

    try:
        db = store_path(root)
        if not create and not db.is_file():
            return None
        return connect(db)
    except (OSError, RuntimeError, ValueError):
        return None


def current(
    inputs: Inputs, root: str | os.PathLike[str], paths: list[str], now: datetime, projects: str | None = None
) -> bool:
    """Whether a publish set stored with ``inputs`` is still what the project ``root`` (whose files are listed as
    ``paths`` now) shows at the clock ``now``: no boundary passed, the same listing, the same project inputs
    (``projects``: :func:`project_inputs` when the caller has it) and every file's bytes unchanged
    (:func:`memzoi.stores.replay.changed_files`). Reads files only where the stat does not vouch. Never raises."""
    if inputs.until_us is not None and replay.micros(now) >= inputs.until_us:
        return False
    if listing_digest(paths) != inputs.walk or len(paths) != len(inputs.stamps):
        return False
    if (projects if projects is not None else project_inputs(root, paths)) != inputs.projects:
        return False
    changed, _ = replay.changed_files(inputs.stamps)
    return not changed


def load(
    root: str | os.PathLike[str], key: str, paths: list[str], now: datetime, projects: str | None = None
) -> tuple[Messages, Stamps] | None:
    """The publish set stored under ``key`` for the project ``root`` when it is :func:`current` (``paths``: the
    files listed now; ``projects``: :func:`project_inputs` when the caller has it), with the stamps it vouched by
    (path -> ``[size, mtime_ns, ino, ctime_ns, checked_ns, digest hex]``: a holder compares what it judges later
    with them); else ``None`` (none stored, a damaged row, an input changed). Creates no store; never raises for a
    store problem."""
    conn = _connect(root, create=False)
    if conn is None:
        return None
    try:
        stored = replay.load(conn, key)
    finally:
        conn.close()
    if stored is None or not current(stored[0], root, paths, now, projects):
        return None
    try:
        return decode(stored[1]), stored[0].stamps
    except ValueError:
        return None


#: A file's stage as a holder knows it: the stat stamp of the bytes it was made from and its revision (the hex of
#: the first 16 bytes of their BLAKE3 digest, :attr:`memzoi.stores.firststage.FirstStage.revision`).
Held = tuple[tuple[int, int, int, int], str]


def _judged(digest: bytes, stamp: tuple[int, ...], checked: int, held: Held) -> bytes | list[Any] | None:
    """The stored stamp of bytes of ``digest`` read with ``stamp`` at ``checked`` when they are those of ``held``."""
    if tuple(stamp) != tuple(held[0]) or digest.hex()[:32] != held[1]:
        return None
    return freshness.pack_stamp(digest, held[0], checked) or [*held[0], checked, digest.hex()]


def judged_stamps(
    root: str | os.PathLike[str], ctx_stamp: str, paths: list[str], held: dict[str, Held], extra: dict[str, bytes]
) -> Stamps | None:
    """The stamp (:data:`memzoi.stores.replay.Stamps`' form, with read clock and digest) of the bytes each file of
    ``paths`` was judged from, as the holder of its stage knows them (``held``: path -> :data:`Held`): from the
    project store's entry of the file under the verdict cache's stamp ``ctx_stamp``
    (:func:`memzoi.stores.verdictcache.context_stamp`) when its stamp and digest are the stage's, else from
    ``extra`` (packed stamps of files the store keeps no entry of, such as those holding a secret) on the same
    condition. ``None`` when one is not known that way (a file changed, not judged, or an entry another process
    wrote since): nothing is then stored. Read once the scan is done, so that a scan holds no stamp of every file.
    Never raises."""
    from .store import path_key  # noqa: PLC0415 lazy: start-up

    conn = _connect(root, create=False)
    if conn is None:
        return None
    try:
        rows = conn.execute(
            "SELECT key, size, mtime_ns, ino, ctime_ns, checked_ns, digest FROM entries WHERE ctx = ?", (ctx_stamp,)
        )
        stored = {r[0]: r[1:] for r in rows}
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    out: Stamps = {}
    for path in paths:
        mine = held.get(path)
        if mine is None:
            return None
        row = stored.get(path_key(path))
        got = _judged(row[5], row[:4], row[4], mine) if row is not None and isinstance(row[5], bytes) else None
        if got is None and path in extra:
            digest, stamp, checked = freshness.unpack_stamp(extra[path])
            got = _judged(digest, stamp, checked, mine)
        if got is None:
            return None
        out[path] = got
    return out


def save(
    root: str | os.PathLike[str],
    key: str,
    paths: list[str],
    stamps: Stamps,
    until: datetime | None,
    projects: str,
    messages: Messages,
) -> bool:
    """Store ``messages`` under ``key`` for the project ``root`` with their inputs: the listing ``paths``, the
    stamp of the bytes each file was judged from (``stamps``: :data:`memzoi.stores.replay.Stamps`, one for every
    path), the earliest retention boundary still to pass (``until``) and the project inputs as the judging began
    (``projects``). Stored only when every path has a stamp, no file's bytes changed since and the project inputs
    are still ``projects`` (a change meanwhile is never hidden). Returns True when stored; never raises for a
    store problem."""
    if any(p not in stamps for p in paths) or len(stamps) != len(paths):
        return False
    if project_inputs(root, paths) != projects:
        return False
    changed, _ = replay.changed_files(stamps)
    if changed:
        return False
    try:
        blob = encode(messages)
    except ValueError:
        return False
    folders = sorted({os.path.dirname(p) for p in paths})
    inputs = Inputs(
        listing_digest(paths),
        projects,
        {p: stamps[p] for p in paths},
        replay.micros(until) if until is not None else None,
        {os.fspath(Path(root)): folders},
    )
    conn = _connect(root, create=True)
    if conn is None:
        return False
    try:
        return replay.save(conn, key, inputs, blob)
    finally:
        conn.close()


__all__ = [
    "KIND",
    "Held",
    "Messages",
    "Recorder",
    "current",
    "decode",
    "encode",
    "judged_stamps",
    "listing_digest",
    "load",
    "project_inputs",
    "save",
    "set_key",
]
