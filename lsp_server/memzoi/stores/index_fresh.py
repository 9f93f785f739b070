"""Whether the index's rows are still their files' (:meth:`memzoi.stores.index.Index.refresh`).

**The index's stamp** (:func:`index_stamp`, kept in ``meta`` under ``stamp``): the schema version, the tool
(:func:`memzoi.stores.toolstamp.tool_stamp`: version and a digest of the installed code) and the project's configuration
(the bytes of ``.memzoi/config.toml``: the project id and ``[rules]`` change every row's verdict). An index made
under another stamp is rebuilt, never served.

**Each row** by the one freshness rule of the project's stores (:mod:`memzoi.base.freshness`): the stat stamp stored
with each row (size, mtime, inode, ctime and the clock of the read) vouches alone only where that rule lets it;
otherwise the file is read and its BLAKE3 hash compared with the row's, and a row whose bytes are unchanged is kept
under the new stamp.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3

from ..base import freshness
from ..judge.workspace import MEMZOI_DIR
from .index_queries import plane_stamps

#: One row's new stat after a confirming read: ``(size, mtime_ns, ino, ctime_ns, checked_ns, path key)``.
Restamp = tuple[int, int, int, int, int, str]


def index_stamp(root: Path) -> str:
    """The stamp an index of the project ``root`` is made under (see the module docstring): hex BLAKE3."""
    from .index_schema import SCHEMA_VERSION  # noqa: PLC0415 lazy: start-up
    from .toolstamp import tool_stamp  # noqa: PLC0415 lazy: start-up

    return blake3.blake3(
        b"\n".join([str(SCHEMA_VERSION).encode(), tool_stamp().encode(), config_bytes(root)])
    ).hexdigest()


def config_bytes(root: Path) -> bytes:
    """The bytes of the project's ``.memzoi/config.toml`` (a marker when it is absent or unreadable), read without
    loading the configuration's models."""
    try:
        return (root / MEMZOI_DIR / "config.toml").read_bytes()  # memzoi.judge.config.CONFIG_NAME, without pydantic
    except FileNotFoundError:
        return b"\0absent"
    except OSError as err:  # unreadable: a stamp of its own, so it never passes for another configuration
        return f"\0unreadable: {err.errno}".encode()


@dataclass
class Plan:
    """What a refresh must do: re-index ``changed`` (absolute paths), drop the rows ``gone`` (keys), keep the
    rows of ``restamp`` under their new stat, and record ``git`` (:func:`git_state`) once done."""

    changed: list[Path] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    restamp: list[Restamp] = field(default_factory=list)
    git: str = ""
    git_changed: bool = False


def stale(
    db: sqlite3.Connection,
    root: Path,
    redacted_key: Callable[[str, dict[str, Any]], str | None],
    key_of: Callable[[Path], str],
) -> Plan:
    """The :class:`Plan` of a refresh of the index ``db`` of the project ``root``: the files that are new or whose
    bytes differ from their row's, or whose admission may have changed because git's state did (the
    visibility git gives now differs from the row's, or a stale attestation git explains); the rows whose file is
    gone; the rows confirmed by hash. ``redacted_key(rel, known)`` and ``key_of(path)`` give a file's key (only a
    path the index does not hold as it is is scanned for its key). Raises ``sqlite3.Error``."""
    cur = db.cursor()
    cur.row_factory = None  # plain tuples: 50,000 rows as sqlite3.Row cost a third more
    known = {r[0]: r for r in cur.execute("SELECT path, size, mtime_ns, ino, ctime_ns, checked_ns FROM files")}
    files, folders = plane_stamps(root)
    plan = Plan(git=git_state(root, folders))
    stored = db.execute("SELECT value FROM meta WHERE key = 'git'").fetchone()
    plan.git_changed = stored is None or stored[0] != plan.git
    present: dict[str, str] = {}
    unsure: list[tuple[str, str]] = []  # (key, path) of rows the stat alone does not vouch for
    now = time.time_ns()  # one clock for the whole walk
    trusted = freshness.trusted
    for rel, path, stamp, dev in files:
        # A path the index holds as it is was judged free of secrets when its row was written, so only a
        # path it does not hold is scanned for its key (a scan per file was most of a search at 10,000).
        row = known.get(rel)
        key = rel
        if row is None:
            key = redacted_key(rel, known) or key_of(Path(path))
            row = known.get(key)
        present[key] = path
        if stamp is None or (row is not None and trusted(stamp, dev, row[1:5], row[5], now)):
            continue
        if row is None:
            plan.changed.append(Path(path))
        else:
            unsure.append((key, path))
    if unsure:  # read and compared with the row's digest: equal bytes keep the row under the new stamp
        digests = _digests(db, [key for key, _ in unsure])
        for key, path in unsure:
            row = known[key]
            read = freshness.confirm(path, row[1], digests[key]) if key in digests else None
            if read is None:
                plan.changed.append(Path(path))
            else:
                plan.restamp.append((*read[1], read[2], key))
    plan.changed.sort()
    plan.gone = [rel for rel in known if rel not in present]
    if plan.git_changed:
        again = {str(p) for p in plan.changed}
        plan.changed += [Path(p) for p in readmitted(db, root, present) if p not in again]
    return plan


def _digests(db: sqlite3.Connection, keys: list[str]) -> dict[str, bytes]:
    """The stored BLAKE3 digests of the rows ``keys`` (raw bytes), read only for the rows a refresh must confirm
    by reading."""
    out: dict[str, bytes] = {}
    for k in range(0, len(keys), 500):  # SQLite's limit of bound parameters
        part = keys[k : k + 500]
        marks = ",".join("?" * len(part))
        out.update(
            (r[0], bytes.fromhex(r[1]))
            for r in db.execute(f"SELECT path, sha FROM files WHERE path IN ({marks})", part)
        )
    return out


def readmitted(db: sqlite3.Connection, root: Path, present: dict[str, str]) -> list[str]:
    """The absolute paths (of ``present``: key → path) whose row's verdict git's state may have changed: git's
    visibility now differs from the row's (``git add``, ``git rm --cached``, an ignore rule, a commit), or a
    record with a stale attestation (explained from ``HEAD``). One batch of git calls
    (:func:`memzoi.project.admission.git_visibility`). Raises ``sqlite3.Error``."""
    from ..project.admission import GitVisibility, git_visibility  # noqa: PLC0415 lazy: start-up

    if not present:
        return []
    vis = git_visibility(root, present.values())
    rows = {r[0]: r[1] for r in db.execute("SELECT path, visibility FROM files")}
    explained = {r[0] for r in db.execute("SELECT path FROM records WHERE attestation = 'stale'")}
    return [
        path
        for key, path in present.items()
        if key in rows
        and (key in explained or rows[key] != vis.get(os.path.abspath(path), GitVisibility.UNKNOWN).value)
    ]


def _worktree_top(root: Path) -> Path | None:
    """The folder holding the ``.git`` of the worktree ``root`` is in (as git finds it), ``None`` outside one."""
    for d in (root, *root.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def _content(path: Path) -> bytes:
    """A small file's bytes (a ref, ``HEAD``, an ignore file); ``absent``/``unreadable`` markers otherwise."""
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20)
    except FileNotFoundError:
        return b"\0absent"
    except OSError:
        return b"\0unreadable"


def _stat(path: Path) -> bytes:
    """A large file's stat stamp (git's index and ``packed-refs``: git writes both by renaming a new file over
    them, so the inode changes with every write, whatever the mtime says)."""
    st = freshness.lstat(path)
    return repr(st.stamp if st is not None else None).encode()


def git_state(root: Path, folders: Iterable[str]) -> str:
    """Hex BLAKE3 of what git's answers about the project ``root`` depend on: the worktree's ``HEAD`` and the ref
    it names, its index and ``packed-refs`` (by stat stamp), ``info/exclude``, and the ``.gitignore`` of every
    folder from the worktree's top down to ``root`` and down to every folder in ``folders`` (absolute, those
    holding indexed files). Not followed: the user's global excludes file (``core.excludesFile``). Never raises."""
    from ..project.gitfacts import git_dirs  # noqa: PLC0415 lazy: start-up

    top = _worktree_top(root)
    if top is None:
        return "no worktree"
    h = blake3.blake3(str(top).encode("utf-8", "surrogateescape"))
    dirs = git_dirs(top)
    if dirs is not None:
        gitdir, common = dirs
        head = _content(gitdir / "HEAD")
        h.update(b"\0HEAD" + head + _stat(gitdir / "index") + _stat(common / "packed-refs"))
        h.update(b"\0exclude" + _content(common / "info" / "exclude"))
        if head.startswith(b"ref:"):
            h.update(b"\0ref" + _content(common / head[4:].strip().decode("utf-8", "replace")))
    chain = {str(d) for d in (root, *root.parents) if d == top or top in d.parents}
    for folder in folders:  # and every folder between them and the root
        while folder not in chain and len(folder) > len(str(root)):
            chain.add(folder)
            folder = os.path.dirname(folder)
    for folder in sorted(chain):  # a folder without one adds nothing: a new folder alone changes no answer
        rules = _content(Path(folder) / ".gitignore")
        if rules != b"\0absent":
            h.update(b"\0" + folder.encode("utf-8", "surrogateescape") + b"\0" + rules)
    return h.hexdigest()


__all__ = ["Plan", "Restamp", "config_bytes", "git_state", "index_stamp", "readmitted", "stale"]
