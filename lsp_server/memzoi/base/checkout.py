"""Which checkout of a repository this is, so a ledger is never taken over by another checkout at the same path.

The runtime directory is keyed by the git common dir's path (Memzoi's ``repository_key``, reference §7.3), so a
fresh clone at the path of a deleted one finds the deleted one's ledger there. A checkout is therefore named by a
random id kept in the git common dir (:data:`MARKER`): git never commits, packs or prunes files it does not know
there (``git gc`` keeps it), linked worktrees share the common dir and so the id, a moved or copied repository
takes it along, and a re-clone starts without it. The ledger records the id it was written for
(:mod:`memzoi.ledger.checkout`); a ledger of another id is set aside, never deleted, under a name that says when
and why (:data:`SET_ASIDE_PREFIX`). Outside git there is no id: the ledger is used as before.
"""

from __future__ import annotations

import os
import re
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from .runtime import LEDGER_DB, cached_keys, memzoi_home

#: The file in the git common dir holding the checkout's id (32 hex digits and a newline).
MARKER = "memzoi-lsp-checkout"
#: A ledger set aside because another checkout wrote it: ``memzoi-lsp-ledger.set-aside-<UTC time>-other-checkout.db``
#: in the runtime directory, beside the live ledger.
SET_ASIDE_PREFIX = "memzoi-lsp-ledger.set-aside-"
SET_ASIDE_REASON = "other-checkout"
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(rf"{re.escape(SET_ASIDE_PREFIX)}(\d{{8}}T\d{{6}}Z)-{SET_ASIDE_REASON}(?:-\d+)?\.db")
#: :func:`checkout_id`'s answer for a git repository whose common dir holds no id yet.
ABSENT = ""


def marker_path(project_root: str | os.PathLike[str]) -> Path | None:
    """``<git common dir>/memzoi-lsp-checkout`` of ``project_root``; ``None`` outside git. Cached per root spelling
    and git presence (every ledger connection asks: resolving the root costs more than reading the marker)."""
    root = os.fspath(project_root)
    return _marker(root, os.path.lexists(os.path.join(root, ".git")))


@lru_cache(maxsize=64)
def _marker(root: str, has_git: bool) -> Path | None:
    common = cached_keys(root).git_common_dir
    return Path(common) / MARKER if common else None


def _first_line(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        data = os.read(fd, 256)
    finally:
        os.close(fd)
    return data.decode("ascii", errors="replace").split("\n", 1)[0].strip()


def id_in(common_dir: str | os.PathLike[str]) -> str | None:
    """The checkout id kept in the git common dir ``common_dir`` (the first line of its :data:`MARKER`, read without
    following a link); ``None`` when it holds none or it cannot be read."""
    try:
        return _first_line(Path(common_dir) / MARKER) or None
    except OSError:
        return None


def checkout_id(project_root: str | os.PathLike[str], *, create: bool = False) -> str | None:
    """The id of ``project_root``'s checkout (the first line of :data:`MARKER`); :data:`ABSENT` when the common dir
    holds none and ``create`` is false; ``None`` when unknown (outside git, or the marker cannot be read or made:
    then no verdict depends on it). With ``create``, a missing id is made (random, 128 bits) and linked into place
    atomically, so two processes that race agree on the one that landed first."""
    path = marker_path(project_root)
    if path is None:
        return None
    try:
        return _first_line(path)
    except FileNotFoundError:
        if not create:
            return ABSENT
    except OSError:
        return None
    tmp = path.with_name(f".{MARKER}.{secrets.token_hex(6)}.tmp")
    try:
        tmp.write_text(secrets.token_hex(16) + "\n", encoding="ascii")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: its id is the one
        return _first_line(path)
    except OSError:
        return None
    finally:
        tmp.unlink(missing_ok=True)


def foreign(bound: str | None, current: str | None) -> bool:
    """Whether a ledger bound to the checkout ``bound`` (``None``: written before ids, or outside git) belongs to
    another checkout than ``current`` (:func:`checkout_id`): only a known id that differs, or an id the common dir
    no longer holds. The one rule the ledger, ``check``, the editor and ``doctor`` follow."""
    return bool(bound) and current is not None and current != bound


def read_only(db: Path) -> sqlite3.Connection:
    """A read-only connection to the ledger file ``db`` that leaves nothing beside it: ``immutable`` while it has no
    ``-wal`` (no writer has it open; a WAL reader would make ``-wal`` and ``-shm``, changing the ledger's stamp that
    ``check``'s replay and the server's publish set take as an input), else ``mode=ro``."""
    mode = "mode=ro" if os.path.lexists(f"{db}-wal") else "immutable=1"
    return sqlite3.connect(f"{db.absolute().as_uri()}?{mode}", uri=True, timeout=5)


def bound_checkout(db: Path) -> str | None:
    """The checkout id the ledger file ``db`` records, read-only; ``None`` when it records none or cannot be read
    (``doctor``'s own reading; the ledger's connections use :func:`memzoi.ledger.checkout.bound`)."""
    try:
        conn = read_only(db)
    except (sqlite3.Error, ValueError):
        return None
    try:
        row = conn.execute("SELECT id FROM ledger_checkout LIMIT 1").fetchone()
    except sqlite3.Error:  # an older schema, or damage that doctor's integrity check reports
        return None
    finally:
        conn.close()
    return str(row[0]) if row else None


def _runtime_dir(project_root: str | os.PathLike[str]) -> Path:
    """``project_root``'s runtime directory (:func:`memzoi.base.runtime.project_runtime_dir`, from the cached keys
    every ledger connection uses); creates nothing."""
    return memzoi_home() / "projects" / cached_keys(project_root).repository_key


def ledger_foreign(project_root: str | os.PathLike[str]) -> bool:
    """Whether ``project_root``'s live ledger was written for another checkout at the same path (:func:`foreign`),
    read-only; False without a ledger."""
    db = _runtime_dir(project_root) / LEDGER_DB
    return db.is_file() and foreign(bound_checkout(db), checkout_id(project_root))


@dataclass(frozen=True)
class SetAside:
    """A ledger set aside: its ``path`` and the UTC time it was set aside (RFC 3339)."""

    path: Path
    at: str


def set_aside_ledgers(project_root: str | os.PathLike[str]) -> list[SetAside]:
    """The ledgers of earlier checkouts set aside in ``project_root``'s runtime directory, oldest first (empty when
    there are none or the directory cannot be read). Creates nothing."""
    rdir = _runtime_dir(project_root)
    try:
        names = os.listdir(rdir)
    except OSError:
        return []
    out = []
    for name in sorted(names):
        m = _NAME.fullmatch(name)
        if m:
            at = datetime.strptime(m.group(1), _STAMP).replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append(SetAside(rdir / name, at))
    return out


def set_aside_path(db: Path) -> Path:
    """A new, unused name beside the ledger ``db`` for setting it aside now (see :data:`SET_ASIDE_PREFIX`)."""
    stamp = datetime.now(UTC).strftime(_STAMP)
    base = f"{SET_ASIDE_PREFIX}{stamp}-{SET_ASIDE_REASON}"
    path, n = db.with_name(base + ".db"), 1
    while path.exists():
        n += 1
        path = db.with_name(f"{base}-{n}.db")
    return path


def foreign_note(project_root: str | os.PathLike[str], shown: Callable[[Path], str] = str) -> str | None:
    """What ``doctor`` and ``history`` say when the live ledger was written for another checkout at this path (it
    is not used, and the next change sets it aside), ``None`` otherwise. ``shown`` spells a path for the user."""
    if not ledger_foreign(project_root):
        return None
    return (
        f"the ledger {shown(_runtime_dir(project_root) / LEDGER_DB)} was written for another checkout at this path "
        "(a deleted and re-cloned repository): its changes are not this checkout's and are not used; the next change "
        "sets it aside"
    )


def set_aside_notes(project_root: str | os.PathLike[str], shown: Callable[[Path], str] = str) -> list[str]:
    """What ``doctor`` and ``history`` say of each ledger an earlier checkout left, set aside (where, when)."""
    return [
        f"the ledger of an earlier checkout at this path was set aside at {s.at} as {shown(s.path)} "
        "(kept as its audit trail; its changes cannot be undone here)"
        for s in set_aside_ledgers(project_root)
    ]


def checkout_notes(project_root: str | os.PathLike[str], shown: Callable[[Path], str] = str) -> list[str]:
    """What ``history`` says, once, about checkouts: :func:`foreign_note`, then :func:`set_aside_notes`. Empty in
    the usual case."""
    note = foreign_note(project_root, shown)
    return ([note] if note else []) + set_aside_notes(project_root, shown)
