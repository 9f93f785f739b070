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
import random
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import blake3

from ..base import freshness
from ..base.freshness import Stat
from ..base.smallfile import read_small
from ..judge.configplain import CONFIG_NAME
from ..judge.workspace import MEMZOI_DIR
from . import currentlisting, storedstamps
from .findlisting import Ahead, Found
from .index_queries import _REDACTED_PREFIX  # the key prefix of a path that bore a secret (one copy)
from .planelisting import Listing, from_files, walk
from .refreshplan import Judge, Plan


def index_stamp(root: Path) -> str:
    """The stamp an index of the project ``root`` is made under (see the module docstring): hex BLAKE3."""
    from .index_schema import SCHEMA_VERSION  # noqa: PLC0415 lazy: start-up
    from .toolstamp import tool_stamp  # noqa: PLC0415 lazy: start-up

    return blake3.blake3(
        b"\n".join([str(SCHEMA_VERSION).encode(), tool_stamp().encode(), config_bytes(root)])
    ).hexdigest()


def config_bytes(root: Path) -> bytes:
    """The bytes of the project's ``.memzoi/config.toml`` (a marker when it is absent or unreadable), read without
    loading the configuration's models; bounded and never through a link (:func:`memzoi.base.smallfile.read_small`)."""
    try:
        return read_small(root / MEMZOI_DIR / CONFIG_NAME)
    except FileNotFoundError:
        return b"\0absent"
    except OSError as err:  # unreadable: a stamp of its own, so it never passes for another configuration
        return f"\0unreadable: {err.errno}".encode()


#: The stat of a file (:class:`memzoi.base.freshness.Stat`), ``None`` when it has none.
StatOf = Callable[[str], "Stat | None"]


def plane_of(
    root: Path,
    files: Iterable[str] | None = None,
    stat_of: StatOf | None = None,
    lstat: StatOf | None = None,
) -> Listing:
    """The two sources of a refresh's files (:func:`stale`): without ``files``, the git plane walked and stat'ed
    here (:func:`memzoi.stores.planelisting.walk`, one descriptor per folder); after a long-lived caller's scan
    (issue 29: one walk and one stat per file), its listing (``files``, absolute paths: the files ``memzoi check``
    checks, :func:`memzoi.project.checkpaths.expand`) narrowed to the records and packets
    (:func:`memzoi.stores.planelisting.plane_key`), each with the stat the scan took (``stat_of(path)``) or, where
    it has none, one ``lstat`` here (default :func:`memzoi.base.freshness.lstat`)."""
    if files is None:
        return walk(root)
    return from_files(root, files, stat_of or (lambda _: None), lstat or freshness.lstat)


def stale(
    db: sqlite3.Connection,
    root: Path,
    listing: Listing | Found | Callable[[], Listing | Found],
    *,
    bulk: bool = True,
) -> Plan:
    """The :class:`Plan` of a refresh of the index ``db`` of the project ``root`` whose files are ``listing``
    (:func:`plane_of`, from a walk or a caller's scan: one decision either way; find's output,
    :class:`memzoi.stores.findlisting.Found`; or a function that gives one of them, asked once the rows' stamps
    are read, so that a walk running meanwhile overlaps the read, or first where it is find's,
    :class:`memzoi.stores.findlisting.Ahead`): the files that are new, whose
    bytes differ from their row's (by the one freshness rule, :func:`memzoi.base.freshness.trusted` under one
    clock, else a read compared with the row's BLAKE3 digest: equal bytes keep the row under the new stat), or whose
    admission may have changed because git's state did (:func:`readmitted`); the rows whose file is gone (no longer
    listed, or without a stat). A file the index does not hold under its plain key is looked up under its
    redacted key (:func:`memzoi.judge.pathsafety.redacted_path`: its path bore a secret when its row was written, and
    still does; a hash, computed without the detectors); a new file is keyed by
    :func:`memzoi.stores.index_rows.index_key` (only such a path is scanned for secrets).

    ``bulk`` (the default) decides the unchanged files together (issue 29: 55,000 files of a search at 50,000
    records): the rows whose stored stamp vouches while unchanged (:data:`memzoi.stores.storedstamps.VOUCHING`, in
    SQL) are read as plain stamps in key order beside the listing's sorted keys (:func:`_changed`: a row at a time,
    none held after its comparison), a file whose stamp equals its row's on a device whose stamps vouch is kept
    unless the sample draws it (:data:`memzoi.base.freshness.SAMPLE_SHARE`, one draw per file), and only the other
    files and the drawn ones are judged one by one, by that same rule (:class:`memzoi.stores.refreshplan.Judge`).
    Where find's output is byte for byte one a refresh found so current (:func:`memzoi.stores.currentlisting.holds`),
    that comparison is known and only the sample is drawn and read (:func:`_through_mark`); a refresh that keeps
    every file so leaves that mark (``Plan.mark``). ``bulk=False`` judges every file one by one; all give the same
    plan (``tests/test_index_bulk_freshness.py``). Raises ``sqlite3.Error``."""
    now = time.time_ns()
    gen = currentlisting.generation(db)  # before the rows are read: a mark is never of rows newer than those judged
    pre = None
    if isinstance(listing, Ahead):  # find's output first: where it was found current, no row's stamp is read
        if bulk and gen is not None and listing.finding is not None:  # the sample drawn and read while find runs
            pre = currentlisting.presample(db, str(root), now)
        listing = listing()
    if isinstance(listing, Found) and bulk and listing.valid and gen is not None:
        sampled = _through_mark(db, root, listing, now, pre, gen)
        if sampled is not None:
            return _read_at(db, sampled, gen)
    stored = storedstamps.read(db, now, bulk=bulk)
    vouching, rows = stored.vouching, stored.rows  # (key, stamp) of the rows that vouch while unchanged; the others
    if not isinstance(listing, (Listing, Found)):  # a walk runs meanwhile: the vouching rows are read before it is
        vouching = list(vouching)  # waited for
        listing = listing()
    found = listing if isinstance(listing, Found) else None
    listing = listing.listing() if isinstance(listing, Found) else listing
    plan = Plan(git=git_state(root, listing.folders))
    plan.git_changed = _known_git(db) != plan.git
    judged, held, others = _changed(listing, vouching)
    drawn = _drawn(listing, judged)
    judged = sorted([*judged, *listing.unstated])
    stamps, unstated = listing.stamps, set(listing.unstated)
    held += [k for k in others if k in unstated]  # listed without a stat: judged (gone), with their rows
    unlisted = {k for k in (*others, *rows) if k not in stamps and k not in unstated}
    redacted = {k for k in unlisted if k.startswith(_REDACTED_PREFIX)}
    rows.update(storedstamps.full_rows(db, [*held, *drawn, *(k for k in redacted if k not in rows)]))
    present = {k: listing.path(k) for k in listing.keys()} if plan.git_changed else None  # for readmitted()
    judge = Judge(plan, now, present)
    unmatched: list[str] = []  # files without a row under their plain key
    under: dict[str, str] = {}  # redacted key -> plain key of the files held under one
    for key in judged:
        row = rows.get(key)
        if row is None:
            unmatched.append(key)
        else:
            judge(listing.path(key), key, row, listing.stat(key))
    for key in drawn:
        judge(listing.path(key), key, rows[key], listing.stat(key), due=True)
    plan.gone += sorted(unlisted - redacted)
    left = {k: rows[k] for k in redacted}  # rows under a redacted key: few, matched by key
    if unmatched:  # new files, and files the index holds under a redacted key
        from ..judge.pathsafety import redacted_path  # noqa: PLC0415 lazy: start-up

        for plain in unmatched:
            path, key = listing.path(plain), redacted_path(plain)
            if key not in left:  # a new file: only its path is scanned for secrets (index_rows loads the detectors)
                from .index_rows import index_key  # noqa: PLC0415 lazy: start-up (a search loads no analysis)

                key = index_key(Path(listing.root), path)
            else:
                under[key] = plain
            judge(path, key, left.pop(key, None), listing.stat(plain))
    plan.gone += sorted(left)
    plan.changed.sort()
    plan.restamp.sort(key=lambda r: r[-1])
    if present is not None:
        again = {str(p) for p in plan.changed}
        plan.changed += [Path(p) for p in readmitted(db, root, present) if p not in again]
    if found is not None and gen is not None:
        plan.mark = currentlisting.mark_of(plan, found, listing, judge, gen, under)
    return _read_at(db, plan, gen)


def _read_at(db: sqlite3.Connection, plan: Plan, gen: str | None) -> Plan:
    """``plan`` with the generation of the rows it was decided on (``Plan.gen``): ``gen``, read before the first
    row, where it is still the generation now (no write came while the rows were read), else unknown."""
    plan.gen = gen if gen is not None and currentlisting.generation(db) == gen else None
    return plan


def _through_mark(
    db: sqlite3.Connection, root: Path, found: Found, now: int, pre: currentlisting.Presampled | None, gen: str
) -> Plan | None:
    """The plan of :func:`stale` through the mark of :mod:`memzoi.stores.currentlisting` where it holds for
    ``found`` and git's state is the one the rows were judged under (else every file's admission is asked: the
    whole decision): the sample ``pre`` drew while find ran, where the rows it read were the mark's (read at its
    generation ``gen``), else a sample drawn from ``found``; ``None`` otherwise."""
    mark = currentlisting.holds(db, currentlisting.digest(found), now)
    if mark is None:
        return None
    git = git_state(root, mark.folders)
    if git != _known_git(db):
        return None
    if pre is not None and pre.digest == mark.digest and gen == mark.gen:
        return currentlisting.settled(found, mark, pre, git)
    return currentlisting.sampled(db, found, mark, git, now)


def _known_git(db: sqlite3.Connection) -> str | None:
    """git's state the index's rows were judged under (``meta``), ``None`` before the first."""
    known = db.execute("SELECT value FROM meta WHERE key = 'git'").fetchone()
    return None if known is None else str(known[0])


def _changed(listing: Listing, vouching: storedstamps.Vouching) -> tuple[list[str], list[str], list[str]]:
    """The files of ``listing`` the stat does not keep, beside the rows ``vouching`` (``(key, stored stamp)`` of the
    rows whose stamp vouches while unchanged, in key order; read once, each row compared as it comes and none held):
    ``(changed, held, unlisted)``. ``changed``: the keys, sorted, of the files whose stamp differs from their
    vouching row's or has none there, or that are on a device whose stamps do not vouch
    (:func:`memzoi.base.freshness.ctime_kept_on`); ``held``: those of them that have a vouching row; ``unlisted``:
    the keys of vouching rows ``listing`` holds no stamp for. The other files are those
    :func:`memzoi.base.freshness.trusted` keeps but for its sample: one comparison per file (tuple equality) and one
    file-system type per device."""
    stamps = listing.stamps
    keys = sorted(stamps)
    devices = {listing.dev, *listing.devs.values()}
    every = all(freshness.fs_type(d) in freshness.KEEPS_CTIME for d in devices)  # every device's stamps vouch
    on, dev, kept_on = listing.devs.get, listing.dev, freshness.ctime_kept_on
    changed: list[str] = []
    held: list[str] = []
    unlisted: list[str] = []
    i, n = 0, len(keys)
    for key, stored in vouching:
        while i < n and keys[i] < key:  # listed files without a vouching row
            changed.append(keys[i])
            i += 1
        if i < n and keys[i] == key:
            i += 1
            stamp = stamps[key]
            if stamp != stored or not (every or kept_on(on(key, dev), stamp)):
                changed.append(key)
                held.append(key)
        else:
            unlisted.append(key)
    changed += keys[i:]
    return changed, held, unlisted


def _drawn(listing: Listing, changed: list[str]) -> list[str]:
    """The kept files (those of ``listing`` not in ``changed``) the sample draws to be read anyway
    (:func:`memzoi.base.freshness.due`'s draw: each with the chance :data:`memzoi.base.freshness.SAMPLE_SHARE`),
    sorted. Drawn over every file and narrowed to the kept ones after: the same independent draw per kept file."""
    share, draw = freshness.SAMPLE_SHARE, random.random
    if share <= 0:
        return []
    if not changed:
        return sorted(k for k in listing.stamps if draw() < share)
    out = set(changed)
    return sorted(k for k in listing.stamps if draw() < share and k not in out)


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


def _stat(path: Path) -> bytes:
    """A large file's stat stamp (git's index and ``packed-refs``: git writes both by renaming a new file over
    them, so the inode changes with every write, whatever the mtime says)."""
    st = freshness.lstat(path)
    return repr(st.stamp if st is not None else None).encode()


def git_state(root: Path, folders: Iterable[str]) -> str:
    """Hex BLAKE3 of what git's answers about the project ``root`` depend on: the worktree's ``HEAD`` and the ref
    it names, its index and ``packed-refs`` (by stat stamp), ``info/exclude``, the configuration files and the
    excludes file they name (``core.excludesFile``, the user's global ignore rules:
    :func:`memzoi.project.gitexcludes.excludes_inputs`), and the ``.gitignore`` of every folder from the worktree's
    top down to ``root`` and down to every folder in ``folders`` (absolute, those holding indexed files). Never
    raises."""
    from ..project.gitexcludes import excludes_inputs, small_file  # noqa: PLC0415 lazy: start-up
    from ..project.gitfacts import git_dirs  # noqa: PLC0415 lazy: start-up

    top = _worktree_top(root)
    if top is None:
        return "no worktree"
    h = blake3.blake3(str(top).encode("utf-8", "surrogateescape"))
    dirs = git_dirs(top)
    if dirs is not None:
        gitdir, common = dirs
        head = small_file(gitdir / "HEAD")
        h.update(b"\0HEAD" + head + _stat(gitdir / "index") + _stat(common / "packed-refs"))
        h.update(b"\0exclude" + small_file(common / "info" / "exclude"))
        h.update(b"\0excludesFile" + excludes_inputs(top, gitdir, common))
        if head.startswith(b"ref:"):
            h.update(b"\0ref" + small_file(common / head[4:].strip().decode("utf-8", "replace")))
    chain = {str(d) for d in (root, *root.parents) if d == top or top in d.parents}
    for folder in folders:  # and every folder between them and the root
        while folder not in chain and len(folder) > len(str(root)):
            chain.add(folder)
            folder = os.path.dirname(folder)
    for folder in sorted(chain):  # a folder without one adds nothing: a new folder alone changes no answer
        rules = small_file(Path(folder) / ".gitignore")
        if rules != b"\0absent":
            h.update(b"\0" + folder.encode("utf-8", "surrogateescape") + b"\0" + rules)
    return h.hexdigest()


__all__ = [
    "config_bytes",
    "git_state",
    "index_stamp",
    "plane_of",
    "stale",
]
