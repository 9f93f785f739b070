"""Whether the index's rows are still their files' (:meth:`memzoi.stores.index.Index.refresh`).

**The index's stamp** (:func:`index_stamp`, kept in ``meta`` under ``stamp``): the schema version, the tool
(:func:`memzoi.stores.toolstamp.tool_stamp`: version and a digest of the installed code) and the project's configuration
(the bytes of ``.memzoi/config.toml``: the project id and ``[rules]`` change every row's verdict). An index made
under another stamp is rebuilt, never served.

**Each row** by the one freshness rule of the project's stores (:mod:`memzoi.base.freshness`): the stat stamp stored
with each row (size, mtime, inode, ctime and the clock of the read) vouches alone only where that rule lets it;
otherwise the file is read and its BLAKE3 hash compared with the row's, and a row whose bytes are unchanged is kept
under the new stamp. The files and their stats come from a walk of the plane or from a long-lived caller's scan
(:func:`plane_of`); one decision (:func:`stale`) judges them either way.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3

from ..base import freshness
from ..base.freshness import Stat
from ..judge.configplain import CONFIG_NAME
from ..judge.workspace import MEMZOI_DIR, RESERVED_NAMES
from .index_queries import _REDACTED_PREFIX, plane_stats  # the key prefix of a path that bore a secret (one copy)

_PLANE_FOLDERS = ("records", "proposals")

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
        return (root / MEMZOI_DIR / CONFIG_NAME).read_bytes()
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


#: The files a refresh judges: ``(index key, absolute path)`` of each record and packet, sorted by key.
Plane = list[tuple[str, str]]
#: The stat of a file of the plane (:class:`memzoi.base.freshness.Stat`), ``None`` when it has none.
StatOf = Callable[[str], "Stat | None"]


def plane_key(root: str, path: str) -> str | None:
    """The index key (``/``-separated, relative to the absolute ``root``) of ``path``, an absolute path of a file of
    the project's listing, when Memzoi's walk takes it as a record or packet
    (:func:`memzoi.judge.workspace.plane_entries`: below ``.memzoi/records`` or ``.memzoi/proposals``, Markdown, no hidden
    part, not ``index.md``/``log.md``); ``None`` otherwise. The listing holds no symlink and no name that is not
    UTF-8, and enters no symlinked folder (:func:`memzoi.project.checkpaths.expand`), so its plane files are exactly the
    walk's (``tests/test_index_afterscan.py`` holds them equal on a tree of odd entries)."""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix) or not path.endswith(".md"):
        return None
    parts = path[len(prefix) :].split(os.sep)
    if len(parts) < 3 or parts[0] != MEMZOI_DIR or parts[1] not in _PLANE_FOLDERS or parts[-1] in RESERVED_NAMES:
        return None
    if any(not p or p.startswith(".") for p in parts[1:]):
        return None
    return "/".join(parts)


def plane_of(
    root: Path,
    files: Iterable[str] | None = None,
    stat_of: StatOf | None = None,
    lstat: StatOf = freshness.lstat,
) -> tuple[Plane, StatOf]:
    """The two sources of a refresh's files (:func:`stale`): without ``files``, the git plane walked and stat'ed
    here (:func:`memzoi.stores.index_queries.plane_stats`, one descriptor per folder); after a long-lived caller's
    scan (issue 29: one walk and one stat per file), its listing (``files``, absolute paths: the files ``memzoi
    check`` checks, :func:`memzoi.project.checkpaths.expand`) narrowed to the records and packets
    (:func:`plane_key`), each with the stat the scan took (``stat_of(path)``) or, where it has none, one ``lstat``
    here. Returns the :data:`Plane` and the stat of each of its files."""
    if files is None:
        walked = plane_stats(root)
        return sorted((key, path) for key, (path, _) in walked.items()), dict(walked.values()).get
    base = os.path.abspath(root)
    taken = stat_of or (lambda _: None)
    plane = sorted((key, path) for path in files if (key := plane_key(base, path)) is not None)
    return plane, lambda path: taken(path) or lstat(path)


def stale(
    db: sqlite3.Connection,
    root: Path,
    plane: Plane,
    stat_of: StatOf,
) -> Plan:
    """The :class:`Plan` of a refresh of the index ``db`` of the project ``root`` whose files are ``plane`` with
    their stats ``stat_of`` (:func:`plane_of`, from a walk or a caller's scan: one decision either way): the files
    that are new, whose bytes differ from their row's (by the one freshness rule, :func:`memzoi.base.freshness.trusted`
    under one clock, else a read compared with the row's BLAKE3 digest: equal bytes keep the row under the new
    stat), or whose admission may have changed because git's state did (:func:`readmitted`); the rows whose file is gone (no longer
    listed, or without a stat). The rows are read in key order one at a time beside the sorted files (a merge), so
    not every row's stamp is held at once. A file the index does not hold under its plain key is looked up under its
    redacted key (:func:`memzoi.judge.pathsafety.redacted_path`: its path bore a secret when its row was written, and
    still does; a hash, computed without the detectors); a new file is keyed by
    :func:`memzoi.stores.index_rows.index_key` (only such a path is scanned for secrets). Raises ``sqlite3.Error``."""
    now = time.time_ns()
    trusted = freshness.trusted
    plan = Plan(git=git_state(root, {path.rpartition(os.sep)[0] for _, path in plane}))
    stored = db.execute("SELECT value FROM meta WHERE key = 'git'").fetchone()
    plan.git_changed = stored is None or stored[0] != plan.git
    present: dict[str, str] | None = {} if plan.git_changed else None  # key -> path, for readmitted()
    redacted: dict[str, Any] = {}  # rows under a redacted key: few, matched by key after the merge
    unmatched: list[str] = []  # files without a row under their plain key

    def judge(path: str, key: str, row: Any) -> None:
        if present is not None:
            present[key] = path
        st = stat_of(path)
        if st is None and row is not None:  # listed, gone since (or no longer a regular file): gone
            plan.gone.append(key)
        if st is None or (row is not None and trusted(st.stamp, st.dev, row[:4], row[4], now)):
            return
        read = freshness.confirm(path, row[0], bytes.fromhex(row[5])) if row is not None else None
        if read is None:
            plan.changed.append(Path(path))
        else:
            plan.restamp.append((*read[1], read[2], key))

    files = iter(plane)
    nxt = next(files, None)
    for row in _rows(db):
        key = row[0]
        if key.startswith(_REDACTED_PREFIX):
            redacted[key] = row[1:]
            continue
        while nxt is not None and nxt[0] < key:
            unmatched.append(nxt[1])
            nxt = next(files, None)
        if nxt is not None and nxt[0] == key:
            judge(nxt[1], key, row[1:])
            nxt = next(files, None)
        else:
            plan.gone.append(key)
    unmatched += [nxt[1]] if nxt is not None else []
    unmatched.extend(path for _, path in files)
    if unmatched:  # new files, and files the index holds under a redacted key
        from ..judge.pathsafety import redacted_path  # noqa: PLC0415 lazy: start-up

        base = os.path.abspath(root)
        for path in unmatched:
            key = redacted_path(plane_key(base, path) or "")
            if key not in redacted:  # a new file: only its path is scanned for secrets (index_rows loads the detectors)
                from .index_rows import index_key  # noqa: PLC0415 lazy: start-up (a search loads no analysis)

                key = index_key(Path(base), path)
            judge(path, key, redacted.pop(key, None))
    plan.gone += list(redacted)
    plan.changed.sort()
    if present is not None:
        again = {str(p) for p in plan.changed}
        plan.changed += [Path(p) for p in readmitted(db, root, present) if p not in again]
    return plan


def _rows(db: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """The index's ``files`` rows ``(path, size, mtime_ns, ino, ctime_ns, checked_ns, sha)`` in key order (SQLite's
    binary order of UTF-8 is Python's order of the keys), read a row at a time."""
    cur = db.cursor()
    cur.row_factory = None  # plain tuples: 50,000 rows as sqlite3.Row cost a third more
    yield from cur.execute("SELECT path, size, mtime_ns, ino, ctime_ns, checked_ns, sha FROM files ORDER BY path")


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


__all__ = [
    "config_bytes",
    "git_state",
    "index_stamp",
    "plane_key",
    "plane_of",
    "stale",
]
