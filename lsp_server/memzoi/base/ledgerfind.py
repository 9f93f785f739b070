"""Ledgers of this checkout kept in another runtime folder than the one its key names now.

The runtime folder is keyed by a path (Memzoi's ``repository_key``, reference §7.3): the git common dir's, or the
project folder's outside git. So a moved repository (``mv repo repo2``) starts a new, empty ledger under its new key,
and a project git refused (another user's, not in ``safe.directory``) or that was not in git yet kept its ledger
under the outside-git key, which it leaves when git takes it as a repository. :func:`find_ledgers` finds both, only
when asked (``memzoi doctor``, ``memzoi history``, ``memzoi reconcile --adopt``), reading each candidate read-only
(:func:`~memzoi.base.checkout.read_only`: nothing is written beside it) and at most :data:`MAX_FOLDERS` runtime
folders:

- ``moved``: a live ledger bound to this checkout's id (:mod:`memzoi.base.checkout`) under another key. Since ledger
  schema 9 it records where its checkout was (``project_root``, ``git_common_dir``); when that git common dir still
  holds this checkout's id, a copy of the repository (``cp -a``: the id went along) uses it, and it is not this
  checkout's to take (:attr:`FoundLedger.copy_of`).
- ``outside_git``: the ledger under this folder's outside-git key (:func:`~memzoi.base.runtime.outside_git_key`),
  unbound or bound to this checkout.

A ledger whose newest change this checkout's ledger already holds (one brought over) is not listed; nor is one that
cannot be read or holds no change (a damaged or foreign file in another folder is nobody's to report here).
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .checkout import ABSENT, checkout_id, foreign, id_in, read_only
from .runtime import LEDGER_DB, cached_keys, memzoi_home, outside_git_key

#: How many runtime folders under ``<memzoi home>/projects`` one search looks at, at most (each ledger found is
#: opened once, read-only).
MAX_FOLDERS = 2000
MOVED, OUTSIDE_GIT = "moved", "outside_git"


@dataclass(frozen=True)
class FoundLedger:
    """A ledger of this checkout in another runtime folder.

    ``runtime_dir``: its folder; ``why``: :data:`MOVED` or :data:`OUTSIDE_GIT`; ``changes``: how many changes it
    holds; ``newest``: the newest change's ``created_at`` (RFC 3339, UTC); ``project``: the project root it records
    (``None``: it records none, a ledger bound before schema 9 and not written since); ``copy_of``: the project root
    (else the git common dir) of a copy of this repository that still uses it, or whose ledger holds its newest
    change (the copy brought it over), ``None`` otherwise; ``last``: its newest change's id."""

    runtime_dir: Path
    why: str
    changes: int
    newest: str | None
    project: str | None = None
    copy_of: str | None = None
    last: str | None = field(default=None, repr=False)

    @property
    def place_known(self) -> bool:
        """Whether it can be told from a copy's ledger: it records its place, or it is keyed by this folder."""
        return self.why == OUTSIDE_GIT or self.project is not None

    def to_json(self, shown: Callable[[Path], str] = str) -> dict[str, object]:
        """This finding as JSON, paths spelled by ``shown``."""
        return {
            "runtime_dir": shown(self.runtime_dir),
            "why": self.why,
            "changes": self.changes,
            "newest": self.newest,
            "project": shown(Path(self.project)) if self.project else None,
            "copy_of": shown(Path(self.copy_of)) if self.copy_of else None,
        }


@dataclass(frozen=True)
class Search:
    """What :func:`find_ledgers` found: ``found`` (by folder name), ``current_changes`` (the changes of this
    checkout's own ledger: 0 when it is absent, empty, unreadable or another checkout's) and ``truncated`` (more
    than :data:`MAX_FOLDERS` runtime folders: the rest were not looked at)."""

    found: list[FoundLedger] = field(default_factory=list)
    current_changes: int = 0
    truncated: bool = False

    def without_copies(self) -> Search:
        """This search less the ledgers a copy of the repository uses (``history`` names only what may be this
        checkout's; ``doctor`` names those too)."""
        return Search([f for f in self.found if f.copy_of is None], self.current_changes, self.truncated)


@dataclass(frozen=True)
class _Facts:
    bound: str | None
    project: str | None
    common: str | None
    changes: int
    newest: str | None
    last: str | None


def _facts(db: Path) -> _Facts | None:
    """The facts of the ledger file ``db``, read-only; ``None`` when it is not a readable ledger."""
    try:
        conn = read_only(db)
    except (sqlite3.Error, ValueError):
        return None
    try:
        conn.row_factory = sqlite3.Row
        cols = {r[1] for r in conn.execute("PRAGMA table_info(ledger_checkout)")}
        row = conn.execute("SELECT * FROM ledger_checkout LIMIT 1").fetchone() if cols else None
        changes, newest = conn.execute("SELECT count(*), max(created_at) FROM change").fetchone()
        last = conn.execute("SELECT id FROM change ORDER BY seq DESC LIMIT 1").fetchone()
    except sqlite3.Error:  # not a database, damaged, or not a ledger: nothing to say about it here
        return None
    finally:
        conn.close()
    place = {k: row[k] if row is not None and k in cols else None for k in ("project_root", "git_common_dir")}
    return _Facts(
        str(row["id"]) if row is not None else None,
        place["project_root"],
        place["git_common_dir"],
        int(changes),
        newest,
        str(last[0]) if last else None,
    )


def _holds(db: Path, change_id: str) -> bool:
    """Whether the ledger file ``db`` holds the change ``change_id`` (read-only; False when it cannot be read)."""
    try:
        conn = read_only(db)
        try:
            return conn.execute("SELECT 1 FROM change WHERE id = ?", (change_id,)).fetchone() is not None
        finally:
            conn.close()
    except (sqlite3.Error, ValueError):
        return False


def _is_ledger(db: Path) -> bool:
    """A regular, non-empty ledger file (or one whose ``-wal`` holds its first pages); never through a symlink."""
    try:
        return any(
            stat.S_ISREG(st.st_mode) and st.st_size > 0
            for st in (os.lstat(p) for p in (db, Path(f"{db}-wal")) if os.path.lexists(p))
        )
    except OSError:
        return False


def _copy_user(facts: _Facts, current: str, common: str) -> str | None:
    """Where a copy of this repository still uses the ledger of ``facts`` (bound to this checkout ``current``): its
    recorded git common dir is not this one's and still holds ``current``."""
    if not facts.common or os.path.realpath(facts.common) == os.path.realpath(common or "/"):
        return None
    if id_in(facts.common) != current:
        return None
    return facts.project or facts.common


def _candidates(projects: Path, skip: str, limit: int) -> tuple[list[Path], bool]:
    """The runtime folders under ``projects`` (not ``skip``, not symlinks) holding a ledger file, by name; at most
    ``limit`` folders looked at (and whether there were more)."""
    try:
        with os.scandir(projects) as it:
            names = sorted(e.name for e in it if e.name != skip and e.is_dir(follow_symlinks=False))
    except OSError:
        return [], False
    truncated = len(names) > limit
    return [projects / n for n in names[:limit] if _is_ledger(projects / n / LEDGER_DB)], truncated


def find_ledgers(project_root: str | os.PathLike[str], *, limit: int = MAX_FOLDERS) -> Search:
    """The ledgers of ``project_root``'s checkout found in other runtime folders under the memzoi home (see the
    module docstring), read-only; never raises for what it reads (an unreadable file or folder is skipped)."""
    root = Path(project_root).resolve()
    keys = cached_keys(root)
    projects = memzoi_home() / "projects"
    current = checkout_id(root)
    own = projects / keys.repository_key / LEDGER_DB
    own_facts = _facts(own) if _is_ledger(own) else None
    mine = own_facts is not None and not foreign(own_facts.bound, current)
    current_changes = own_facts.changes if own_facts is not None and mine else 0
    found: list[FoundLedger] = []
    truncated = False

    def keep(rdir: Path, why: str, facts: _Facts) -> None:
        if facts.changes == 0 or (mine and facts.last and _holds(own, facts.last)):
            return  # nothing in it, or brought over already
        copy_of = _copy_user(facts, current, keys.git_common_dir) if why == MOVED and current else None
        found.append(FoundLedger(rdir, why, facts.changes, facts.newest, facts.project, copy_of, facts.last))

    if keys.in_git:
        outside = projects / outside_git_key(root)
        ledger = not outside.is_symlink() and _is_ledger(outside / LEDGER_DB)
        facts = _facts(outside / LEDGER_DB) if ledger else None
        if facts is not None and (facts.bound is None or facts.bound == current):
            keep(outside, OUTSIDE_GIT, facts)
    if current not in (None, ABSENT):
        candidates, truncated = _candidates(projects, keys.repository_key, limit)
        for rdir in candidates:
            if keys.in_git and rdir.name == outside_git_key(root):
                continue
            facts = _facts(rdir / LEDGER_DB)
            if facts is not None and facts.bound == current:
                keep(rdir, MOVED, facts)
    return Search(_taken_by_copies(found), current_changes, truncated)


def _taken_by_copies(found: list[FoundLedger]) -> list[FoundLedger]:
    """``found``, each ledger whose newest change the ledger of a copy of this repository holds marked as that
    copy's (:attr:`FoundLedger.copy_of`): the copy brought it over, so it is not this checkout's to take too."""
    copies = [f for f in found if f.copy_of is not None]
    out = []
    for f in found:
        if f.copy_of is None and f.last is not None:
            user = next((c for c in copies if _holds(c.runtime_dir / LEDGER_DB, f.last)), None)
            if user is not None:
                f = replace(f, copy_of=user.copy_of)
        out.append(f)
    return out


def notes(search: Search, shown: Callable[[Path], str] = str) -> list[tuple[str, str, str | None]]:
    """What ``doctor`` (check ``ledger_elsewhere``) and ``history`` say of each ledger of ``search``:
    ``(status, message, what to do)``; ``status`` is ``warning`` when it can be brought over
    (``memzoi reconcile --adopt``), else ``ok`` (it is kept; nothing to do)."""
    out: list[tuple[str, str, str | None]] = []
    for f in search.found:
        where = shown(f.runtime_dir)
        what = f"{f.changes} change(s), the newest at {f.newest}"
        if f.why == OUTSIDE_GIT:
            head = (
                f"the ledger this project kept while git did not take it as a repository (git refused it as "
                f"another user's until `safe.directory`, or it was not in git yet) is in {where} ({what})"
            )
        else:
            came = f" from {shown(Path(f.project))}" if f.project else ""
            head = f"this checkout's ledger from before the repository moved{came} is in {where} ({what})"
        adopt = f"memzoi reconcile --adopt {shlex.quote(where)}"
        if f.copy_of is not None:
            out.append(
                (
                    "ok",
                    f"the ledger in {where} ({what}) is that of a copy of this repository at "
                    f"{shown(Path(f.copy_of))}, which uses it or brought it over (a copy takes the checkout's id "
                    "along); it is not this checkout's and is not brought over",
                    None,
                )
            )
        elif search.current_changes:
            out.append(
                ("ok", f"{head}; this checkout's ledger already holds changes, so it is kept there, not merged", None)
            )
        elif not f.place_known:
            out.append(
                (
                    "warning",
                    f"{head}; it records no place (an earlier version wrote it), so a copy of this repository "
                    "cannot be told from a move",
                    f"if this repository was moved (no copy of it uses that ledger), run `{adopt} --assume-moved` "
                    "to bring its changes (undo, history, local records, checkpoints) over; the old folder is kept",
                )
            )
        else:
            out.append(
                (
                    "warning",
                    f"{head}; its changes (undo, history, local records, checkpoints) are not used here",
                    f"run `{adopt}` to bring them over (they are copied; the old folder stays as it is)",
                )
            )
    if search.truncated:
        out.append(
            ("ok", f"more than {MAX_FOLDERS} runtime folders under the memzoi home: only the first were searched", None)
        )
    return out


__all__ = ["MAX_FOLDERS", "MOVED", "OUTSIDE_GIT", "FoundLedger", "Search", "find_ledgers", "notes"]
