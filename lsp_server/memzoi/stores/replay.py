"""Replay of ``memzoi check``: when no input of a run's report changed since a run with the same arguments stored
it, the stored report is given back instead of judging anything again (issue 29, "Replay").

**The inputs of a report** (:class:`memzoi.stores.replayinputs.Inputs`, which holds their stored form):

- the walk: every file it found, in order, with the skipped entries and path findings (a new, removed or renamed
  file changes it); a replay whose folders keep the stamps they had when the walk listed them skips it
  (:mod:`memzoi.stores.walklisting`);
- every file's bytes, by the one freshness rule of the store (:mod:`memzoi.base.freshness`): its stat stamp vouches
  alone only where that rule lets it (not racy, a file system with a real ctime, not drawn for a re-hash), else
  the file is read and its BLAKE3 digest compared with the one its verdict was made from;
- per project: the bytes of ``.memzoi/config.toml`` (project id, ``[rules]``), git's state
  (:func:`memzoi.stores.index_fresh.git_state`: ``HEAD`` and its ref, the index, ``packed-refs``, ``info/exclude`` and
  every ``.gitignore`` from the worktree's top to the files' folders) and the ledger's head (the stat of the ledger
  database and its write-ahead log, as :class:`memzoi.ledger.view.LedgerView` follows it, and whether a live process
  holds the lifecycle lock, which decides how that view judges a change left in flight);
- the store's version and the tool stamp (:func:`memzoi.stores.toolstamp.tool_stamp`: version and a digest of the
  installed code);
- the clock: the earliest retention boundary of any checked file; once it passes, the report is judged again.

A report is stored for a run whose every file lies in a project and was read stably (a run over several projects
is kept in the store of the first, with every project's inputs), and whose finding data is plain
JSON. A check of a few files (what pre-commit runs) also reads the cross-file facts of the project's other
records and packets: their listing is then part of the walk and their bytes are among the stamps (``Inputs.planes``;
a file whose facts came from the index, which keeps no stamp of ours, makes the report not stored). What is stored is what the report prints (no file text, no matched value: a secret is named by its
kind, place and fingerprint only). A stored report is checksummed: a damaged row is a miss. A miss runs the
check as usual: files whose bytes are unchanged still come from their store entries, only changed files are
analysed again.

Stored in table ``reports`` of the project store (:mod:`memzoi.stores.store`), one row per argument list and working
directory, the most recent :data:`KEEP` kept.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import stat
import struct
import time
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import blake3

from ..base import freshness
from .index_schema import _Tx
from .replayinputs import Inputs, Stamps, decode, encode

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Stored reports kept per project (one per argument list and working directory).
KEEP = 16


def report_key(args: list[str], cwd: str) -> str:
    """The key a report is stored under: the arguments as given and the working directory (display paths are
    relative to it). Hex BLAKE3."""
    return blake3.blake3(json.dumps([cwd, args]).encode("utf-8", "surrogateescape")).hexdigest()


#: Domain of :func:`link_key`.
_LINK_DOMAIN = b"memzoi-lsp.replay.link.v1\0"


def link_key(key: str) -> str:
    """The stored form of a cross-file key (:attr:`Inputs.links`): 12 hex characters of a domain-separated BLAKE3
    digest, so that an id or reference that holds a secret is never stored, only compared (two keys with the same
    digest only widen the files re-judged together). A lone surrogate (a reference decoded from a `\\ud800` escape) is
    hashed as its code point (``surrogatepass``), never refused."""
    return blake3.blake3(_LINK_DOMAIN + key.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def pack_links(keys: list[list[str]]) -> str:
    """The stored form of :attr:`Inputs.links` from each file's :func:`link_key` values, in the order of
    :attr:`Inputs.stamps`: one plain string (keys joined by spaces, files by ``|``), which a replay reads past at
    the cost of a copy."""
    return "|".join(" ".join(k) for k in keys)


def unpack_links(text: str) -> tuple[list[list[str]], dict[str, list[int]]]:
    """:func:`pack_links`'s ``text`` read back: each file's keys (by position in :attr:`Inputs.stamps`) and each key
    → the positions of the files that have it."""
    per_file = [part.split() for part in text.split("|")]
    owners: dict[str, list[int]] = {}
    for i, keys in enumerate(per_file):
        for key in keys:
            owners.setdefault(key, []).append(i)
    return per_file, owners


def walk_digest(
    files: Iterable[str],
    skipped: Iterable[tuple[str, str]],
    path_findings: Iterable[tuple[str, Any]],
    complete: Iterable[str],
    planes: Iterable[str] = (),
) -> str:
    """Hex BLAKE3 of what a walk found: the files in order, the skipped entries, the path findings (display,
    code, message) and the ``.memzoi`` directories walked in full; and, for a check of a few files, ``planes``: the
    records and packets of their projects (whose cross-file facts count) in walk order. Each part is hashed as the
    UTF-8 of its JSON list (``json.dumps``' default separators) and a NUL, encoded a batch of items at a time
    (:func:`_list_pieces`), never as one text (at 55,000 files that text and its copies were some 14 MB)."""
    h = blake3.blake3()
    parts = (files, sorted(skipped), ((d, f.code, f.message) for d, f in path_findings), sorted(complete), planes)
    for part in parts:
        for piece in _list_pieces(part):
            h.update(piece)
        h.update(b"\0")
    return h.hexdigest()


#: Items encoded together by :func:`_list_pieces`.
_BATCH = 4096


def _list_pieces(items: Iterable[Any]) -> Iterable[bytes]:
    """The UTF-8 (``surrogateescape``) of ``json.dumps(list(items))`` in pieces of at most :data:`_BATCH` items,
    which joined are byte for byte that text (a list's items are joined by ``", "``, as ``json.dumps`` does)."""
    yield b"["
    it = iter(items)
    first = True
    while batch := list(itertools.islice(it, _BATCH)):
        text = json.dumps(batch)[1:-1]
        yield ((", " if not first else "") + text).encode("utf-8", "surrogateescape")
        first = False
    yield b"]"


def _ledger_stamp(root: Path) -> list[Any]:
    """The ledger's part of a report's inputs for the project ``root``: the stat of its ledger database and WAL (the
    project's runtime directory, :func:`memzoi.ledger.store.cached_runtime_dir`, is the worktree's runtime
    directory's grandparent), and, when there is a ledger, whether a live process holds the lifecycle lock
    (:func:`memzoi.base.lock.held`, an open, a ``flock`` and a close). The lock decides how a change left in flight
    is judged (:class:`memzoi.ledger.view.LedgerView`: left to its live writer, else as reconciliation would make
    it), and a writer can die without touching the ledger again: a report judged under a live writer is then not
    replayed (SPEC §6, promise 3). Without a ledger there is no ledger fact, so no lock is looked at."""
    from ..base.lock import held  # noqa: PLC0415 lazy: start-up
    from ..base.runtime import LEDGER_DB, LOCK_FILE, worktree_runtime_dir  # noqa: PLC0415 lazy: start-up

    try:
        db = worktree_runtime_dir(root).parent.parent / LEDGER_DB
    except Exception:  # noqa: BLE001 - no git, odd paths: no ledger, as the ledger view decides
        return [None]
    out: list[Any] = []
    for p in (db, db.with_name(db.name + "-wal")):
        st = freshness.lstat(p)
        out.append(list(st.stamp) if st is not None else None)
    out.append(held(db.with_name(LOCK_FILE)) if out[0] is not None else None)
    return out


def project_inputs(roots: dict[str, set[str]]) -> str:
    """Hex BLAKE3 of the inputs of a report besides its files (see the module docstring): the store's version, the
    tool stamp and, for each project root of ``roots`` (root → the folders holding its checked files), its
    configuration's bytes, git's state and the ledger's head. Never raises."""
    from . import toolstamp  # noqa: PLC0415 lazy: start-up
    from .index_fresh import config_bytes, git_state  # noqa: PLC0415 lazy: start-up
    from .store import STORE_VERSION  # noqa: PLC0415 lazy: start-up

    h = blake3.blake3(f"{STORE_VERSION}\0{toolstamp.tool_stamp()}\0".encode())
    for root in sorted(roots):
        r = Path(root)
        h.update(root.encode("utf-8", "surrogateescape") + b"\0" + config_bytes(r) + b"\0")
        h.update(git_state(r, roots[root]).encode() + json.dumps(_ledger_stamp(r)).encode() + b"\0")
    return h.hexdigest()


def changed_files(stamps: Stamps) -> tuple[list[str], Stamps]:
    """The files of ``stamps`` whose bytes are not those their stored stamp was made from, by the one freshness
    rule (:func:`memzoi.base.freshness.vouches`, else a read compared by digest, :func:`memzoi.base.freshness.confirm`;
    a file that is gone is changed), in ``stamps``' order; and the unchanged files confirmed by reading whose new
    stamp lets the stat vouch where the stored one would not (:func:`memzoi.base.freshness.restamp_gains`: a racy,
    old or other stamp), under the stamp and clock of that read (for :func:`restamp`, so that the next run trusts
    them by stat again). A file only drawn for a re-hash, or on a file system whose ctime is not kept, is read
    and compared like any other but not restamped: writing the report's inputs again would change nothing the rule
    decides (at 10,000 files that write was a sixth of a replay)."""
    changed: list[str] = []
    confirmed: Stamps = {}
    trusted, now, lstat, regular = freshness.trusted, time.time_ns(), os.lstat, stat.S_ISREG  # one clock for all
    for path, held in stamps.items():
        stored = freshness.stamp_list(held)
        try:
            st = lstat(path)
        except (OSError, ValueError):
            changed.append(path)
            continue
        if not regular(st.st_mode) or st.st_size != stored[0]:
            changed.append(path)
            continue
        # the stamp spelled out, not freshness.of_stat: this loop runs once per file of a replayed check
        if trusted((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns), st.st_dev, stored[:4], stored[4], now):
            continue
        read = freshness.confirm(path, stored[0], bytes.fromhex(stored[5]))
        if read is None:
            changed.append(path)
        elif freshness.restamp_gains(stored[:4], stored[4], read[1], read[2]):
            confirmed[path] = [*read[1], read[2], stored[5]]
    return changed, confirmed


def restamp(conn: sqlite3.Connection, key: str, inputs: Inputs, confirmed: Stamps, report: bytes) -> bool:
    """Store ``inputs`` of the report under ``key`` again with the files of ``confirmed`` under their new stamps
    (their bytes are those the report was made from). Returns False when it could not be written."""
    inputs.stamps.update(confirmed)
    return save(conn, key, inputs, report)


def _sum(key: str, inputs: bytes, blob: bytes) -> bytes:
    """The checksum of a stored report: 16 bytes of BLAKE3 over the key, a NUL, the inputs' stored form
    (:func:`memzoi.stores.replayinputs.encode`), a NUL and the compressed report."""
    h = blake3.blake3(key.encode() + b"\0")
    h.update(inputs)
    h.update(b"\0")
    h.update(blob)
    return h.digest(16)


def load(conn: sqlite3.Connection, key: str) -> tuple[Inputs, bytes] | None:
    """The stored inputs (:func:`memzoi.stores.replayinputs.decode`) and report (as
    :func:`memzoi.runs.checkreport.dump` wrote it) under ``key``; ``None`` when none is stored, its checksum does not
    match, or it cannot be read (a row of another layout included). Never raises."""
    try:
        row = conn.execute("SELECT inputs, report, sum FROM reports WHERE key = ?", (key,)).fetchone()
        if row is None or not isinstance(row[0], bytes) or _sum(key, row[0], row[1]) != row[2]:
            return None
        return decode(row[0]), zlib.decompress(row[1])
    except (sqlite3.Error, ValueError, TypeError, zlib.error, struct.error):
        return None


def save(conn: sqlite3.Connection, key: str, inputs: Inputs, report: bytes) -> bool:
    """Store ``report`` under ``key`` with its ``inputs`` (:func:`memzoi.stores.replayinputs.encode`) in one
    transaction, keeping the :data:`KEEP` most recent reports. Returns False when it could not be written (inputs
    that cannot be stored included); never raises for a database problem."""
    blob = zlib.compress(report, 1)
    try:
        packed = encode(inputs)
    except ValueError:
        return False
    checksum = _sum(key, packed, blob)
    try:
        with _Tx(conn):
            conn.execute(
                "INSERT OR REPLACE INTO reports VALUES (?, ?, ?, ?, ?)", (key, time.time_ns(), packed, blob, checksum)
            )
            del packed
            conn.execute(
                "DELETE FROM reports WHERE key NOT IN (SELECT key FROM reports ORDER BY made_ns DESC LIMIT ?)", (KEEP,)
            )
        return True
    except (sqlite3.Error, ValueError):  # (a failed ROLLBACK included)
        return False


def micros(when: datetime) -> int:
    """``when`` (aware) in microseconds since the epoch (the unit of :attr:`Inputs.until_us`)."""
    return (when - _EPOCH) // timedelta(microseconds=1)


__all__ = [
    "Inputs",
    "Stamps",
    "changed_files",
    "link_key",
    "load",
    "pack_links",
    "micros",
    "project_inputs",
    "report_key",
    "restamp",
    "save",
    "unpack_links",
    "walk_digest",
]
