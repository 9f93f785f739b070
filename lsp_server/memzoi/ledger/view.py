"""The ledger as a file's verdict sees it: per file, the uncertain changes touching it and the last applied
change (for the ``ledger_uncertain`` / ``ledger_drift`` findings of :mod:`memzoi.project.verdict`, and for the editor's
Undo and Recover actions and hover).

The ledger is read once per project and re-read only when its database files change, so judging a file does not
open SQLite. Nothing here ever creates a ledger: a project without one has no ledger facts. Thread-safe.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.checkout import marker_path
from ..base.findings import Finding
from ..base.runtime import LEDGER_DB, database_started
from ..base.runtime_errors import RuntimeStateError
from .history import HistoryRead, file_history, history, ledger_findings
from .model import ChangeRecord
from .reconcile import foreseen, writer_alive
from .store import cached_runtime_dir

log = logging.getLogger("memzoi.ledger")


@dataclass
class FileLedger:
    """Ledger facts of one file: ``uncertain`` changes (oldest first) and the ``last`` applied change."""

    uncertain: list[ChangeRecord] = field(default_factory=list)
    last: ChangeRecord | None = None


class LedgerView:
    """Cached per-file ledger facts of one project.

    ``live`` (the editor): the database's stamp is looked at on every question, so a change applied meanwhile is
    seen. Not ``live`` (a batch run such as ``memzoi check``, which asks once per file): the ledger is read at
    the first question and kept for the run, and a project whose ledger touched no file answers without
    resolving the file's path.

    A change still ``applying``/``undoing`` while no process holds the lifecycle lock (its process died) counts
    as what reconciliation would make of it (:func:`~memzoi.ledger.reconcile.foreseen`, read-only): ``uncertain``
    or ``applied``; nothing is written, so ``memzoi check`` stays read-only and agrees with the editor, which
    reconciles as it starts.
    """

    def __init__(self, root: Path, *, live: bool = True) -> None:
        self.root = root
        self.live = live
        self._stamp: tuple[Any, ...] | None = None
        self._read = False
        self._files: dict[str, FileLedger] = {}
        self._folders: dict[str, str] = {}  # folder -> its real path (batch runs)
        self._lock = threading.Lock()
        #: The ``corrupt_database`` error of the last reading when the ledger is damaged (its facts are then
        #: unknown, not empty: a caller showing history says so), else ``None``.
        self.damage: RuntimeStateError | None = None
        self._unreadable = False  # said once: the ledger's folder cannot be looked at

    def _db(self) -> Path | None:
        try:
            # cached: deriving the repository key runs git, which must not happen per keystroke
            db = cached_runtime_dir(self.root, create=False) / LEDGER_DB
        except Exception:  # no git, odd paths: no ledger
            return None
        try:
            # an empty file (a failed first write) is no ledger
            return db if db.is_file() and database_started(db) else None
        except OSError as err:  # a memzoi home this user cannot enter: its facts unknown, every file still judged
            if not self._unreadable:
                self._unreadable = True
                from ..judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up

                log.warning("%s", shown_for_projects(f"cannot read the ledger of {self.root}: {err}", [self.root]))
            return None

    def _refresh(self) -> None:
        db = self._db()
        if db is None:
            self._files, self._stamp, self.damage = {}, None, None
            return
        # The checkout's id is an input too: a checkout re-cloned at this path under a running server changes only it.
        marker = marker_path(self.root)
        stamp = tuple(_stat_stamp(p) for p in (db, db.with_name(db.name + "-wal"), *([marker] if marker else [])))
        if stamp == self._stamp:
            return
        files: dict[str, FileLedger] = {}
        damage = None
        try:
            changes = history(self.root)
        except Exception as err:  # an unreadable ledger must not break diagnostics
            from ..judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up

            log.warning("%s", shown_for_projects(f"cannot read the ledger of {self.root}: {err}", [self.root]))
            changes = []
            if isinstance(err, RuntimeStateError) and err.code == "corrupt_database":
                damage = err
        seen, held = as_reconciled(self.root, reversed(changes))  # oldest first: `last` ends as the newest applied
        for change, status in seen:
            for f in change.files:
                entry = files.setdefault(f.path, FileLedger())
                if status == "uncertain":
                    entry.uncertain.append(change)
                elif status == "applied":
                    entry.last = change
        # While a live writer holds a change in flight, the next question reads again (it may die meanwhile).
        self._files, self._stamp, self.damage = files, None if held else stamp, damage

    def for_file(self, path: str | os.PathLike[str]) -> FileLedger:
        """Facts of ``path`` (empty when the ledger never touched it)."""
        if not self.live:
            with self._lock:
                if not self._read:
                    self._refresh()
                    self._read = True
                    try:
                        self._real_root = self.root.resolve()
                    except (RuntimeError, OSError):  # a symlink loop: no file can be named below it
                        self._files = {}
            if not self._files:
                return FileLedger()
            rel = self._batch_relative(path)
            return self._files.get(rel, FileLedger()) if rel is not None else FileLedger()
        with self._lock:
            self._refresh()
            files = self._files
        if not files:  # the usual case: no ledger, or one that touched no file; no path to resolve
            return FileLedger()
        rel = _relative(Path(path), self.root)
        return files.get(rel, FileLedger()) if rel is not None else FileLedger()

    def file_history(self, path: str | os.PathLike[str], *, limit: int | None = None) -> HistoryRead:
        """:func:`~memzoi.ledger.history.file_history` of the file at ``path`` (newest first; never creates a
        ledger, never raises) as this view sees the ledger, for the editor's hover: a change a dead process left in
        flight carries the status :func:`as_reconciled` gives it, as the file's findings and actions see it, and a
        sound read carries the damage the project's whole reading met (a page of ``change`` the file's query does
        not read when no change touched the file)."""
        found = file_history(self.root, path, limit=limit)
        if found.damage is None:
            self.for_file(path)
            found = dataclasses.replace(found, damage=self.damage)
        seen, _held = as_reconciled(self.root, found.changes)
        changes = [c if status == c.status else dataclasses.replace(c, status=status) for c, status in seen]
        return dataclasses.replace(found, changes=changes)

    def settled(self) -> LedgerView:
        """A view of the ledger as it is now, for many questions asked at once (a scan's chunk of files, judged in
        one turn of the editor's loop): read, or re-read when its database changed, once here, and then kept as a
        batch run keeps it (not ``live``), so each question costs no database stamp."""
        view = LedgerView(self.root, live=False)
        with self._lock:
            self._refresh()
            view._files = self._files  # replaced, never changed in place, by a later refresh
            view.damage = self.damage
        view._read = True
        if not view._files:  # no file to name (the usual case): no real path to take (a stat per folder of the root)
            return view
        try:
            view._real_root = self.root.resolve()
        except (RuntimeError, OSError):  # a symlink loop: no file can be named below it
            view._files = {}
        return view

    def _batch_relative(self, path: str | os.PathLike[str]) -> str | None:
        """:func:`_relative` with each folder resolved once: the real path of a file that is not a symlink is its
        folder's real path joined with its name."""
        text = os.path.abspath(path)
        if os.path.islink(text):
            return _relative(Path(path), self.root)
        folder, name = os.path.split(text)
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        try:
            return Path(real, name).relative_to(self._real_root).as_posix()
        except ValueError:
            return None

    def undo_available(self, path: Path, change: ChangeRecord) -> bool:
        """True while every file of ``change`` on disk still equals its after snapshot (SPEC §6)."""
        for f in change.files:
            p = self.root / f.path
            try:
                current = p.read_bytes() if p.is_file() else None
            except OSError:
                return False
            if current != f.after:
                return False
        return True

    def findings(self, path: str | os.PathLike[str], text: str | Callable[[], str]) -> list[Finding]:
        """:func:`~memzoi.ledger.ledger_findings` of the file at ``path`` (spans into ``text``, the analysed text,
        or a function giving it): the file's bytes on disk are compared with what its last applied change wrote,
        and are read (and ``text`` asked for) only when the ledger touched the file."""
        facts = self.for_file(path)
        if not facts.uncertain and facts.last is None:
            return []
        path = Path(path)
        rel = _relative(path, self.root)
        if rel is None:
            return []
        try:
            current = path.read_bytes() if path.is_file() else None
        except OSError:
            current = None
        return ledger_findings(facts.uncertain, facts.last, rel, current, text if isinstance(text, str) else text())


def as_reconciled(root: Path, changes: Iterable[ChangeRecord]) -> tuple[list[tuple[ChangeRecord, str]], bool]:
    """Each of ``changes`` with the status every reader shows it with (SPEC §6: the one verdict of ``memzoi check``,
    the index and the editor's diagnostics, actions and hover): its own, or, for a change still ``applying``/
    ``undoing`` while no process holds the lifecycle lock (its process died), what reconciliation would make of
    it (:func:`~memzoi.ledger.reconcile.foreseen`, read-only: nothing is written). A live writer's change keeps its
    status: it finishes or reconciles its own. The flag is True when such a live writer was found (a reading is
    then kept only until the next question); whether one lives is asked once, at the first change in flight."""
    alive: bool | None = None
    out = []
    for change in changes:
        status = change.status
        if status in ("applying", "undoing"):
            alive = writer_alive(root) if alive is None else alive
            status = status if alive else foreseen(root, change)
        out.append((change, status))
    return out, bool(alive)


def _stat_stamp(p: Path) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of ``p``, ``None`` when it does not exist (one ``stat``: asked once per question)."""
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _relative(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` (both resolved), or ``None`` outside it or when it cannot be resolved: a
    symlink loop raises ``RuntimeError`` from :meth:`Path.resolve` (Python before 3.13), which turned the file's
    diagnostics into ``internal_error``; such a link never has ledger facts."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, RuntimeError, OSError):
        return None
