"""The doctor report of a project: health of the workspace, its index and its runtime databases, with repair
steps (SPEC §6, §7, §8).

:func:`diagnose` gives Memzoi's doctor shape ``{project_root, status: ok|warning, checks: [{name, status:
ok|warning|skip, message}], next_steps}`` with one more status, ``error``: a check found data at risk that no
command can make again (a damaged ledger or resident candidate database: ``ledger``, ``resident_candidates``),
and the report's status is then ``error`` too. It adds ``index_path`` and ``drift`` (``missing_from_index``,
``stale_in_index``, ``changed_in_index``, ``fts_out_of_sync``, ``schema``, ``unreadable``: files that cannot be
read, reported as ``readable`` rather than as index drift, since a rebuild cannot index them). It never writes files or the index; it
reports runtime paths other users may read or enter (``runtime_modes``) before opening the index tightens them, and
checks the ledger and the resident candidate database read-only, never repairing, replacing or deleting them, and
warns of every ledger change a dead process left in flight or that is uncertain (``ledger_changes``), never
reconciling it.
``memzoi doctor`` prints it and the language server's ``memzoi.doctor`` command returns it.

Every path in it, ``project_root`` and ``index_path`` included, is shown, never printed raw: a path of this machine
as :func:`~memzoi.judge.pathsafety.shown_local_path` shows it (``<redacted-path:HEX>``, still a string, when any of
its names bears a secret: a runtime path carries the memzoi home's and the project folder's names), a project file
of the drift lists as :func:`~memzoi.judge.pathsafety.shown_path` shows it. The root is always shown, so every run
loads the secret detectors (with a current index, the drift check loads them anyway).
"""

from __future__ import annotations

import os
import shlex
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.checkout import foreign_note, read_only, set_aside_notes
from ..base.gitowner import git_refusal, refused_words
from ..base.ledgerfind import find_ledgers, notes
from ..base.runtime import LEDGER_DB, RESIDENT_DB, database_started, loose_modes, memzoi_home, project_runtime_dir
from ..base.runtime_errors import KINDS, RuntimeStateError, damage, guard, runtime_error
from ..judge.pathsafety import shown_local_path, shown_path, with_shown_paths
from ..judge.workspace import linked_plane, linked_plane_message, through_linked_plane
from ..project.admission import worktree_root
from ..stores.index import Index
from ..stores.index_queries import Drift
from ..stores.store import store_path


def _sample(paths: list[str], n: int = 5, show: Callable[[str], str] = shown_path) -> str:
    """The first ``n`` of ``paths`` (by default project files relative to the root, shown as :func:`shown_path`
    shows them) as ``show`` shows them, and how many more."""
    more = f" and {len(paths) - n} more" if len(paths) > n else ""
    return ", ".join(show(p) for p in paths[:n]) + more


def _shown_drift(drift: Drift) -> dict[str, Any]:
    """``drift`` as JSON, each listed path as :func:`shown_path` shows it (only a non-empty list pays for the
    detectors)."""
    return {k: [shown_path(p) for p in v] if isinstance(v, list) else v for k, v in drift.to_json().items()}


@dataclass
class _Report:
    """The doctor report being gathered: its ``checks`` in order, its ``next_steps`` (each once, in the order first
    asked for) and the index's drift once it was compared with the files."""

    checks: list[dict[str, str]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    drift: Drift | None = None

    def check(self, name: str, status: str, message: str, step: str | None = None) -> None:
        """Add the check ``name`` (``status`` ok, warning, error or skip) and its repair ``step``, if any."""
        self.checks.append({"name": name, "status": status, "message": message})
        if step and step not in self.steps:
            self.steps.append(step)


def diagnose(root: Path) -> dict[str, Any]:
    """The doctor report for ``root`` as a dict (see the module docstring)."""
    report = _Report()
    memzoi_dir = root / ".memzoi"
    linked = linked_plane(memzoi_dir)
    _plane_checks(report, root, memzoi_dir, linked)
    _git_check(report, root)
    _runtime_modes_check(report, root)  # before the index is opened: opening it tightens the modes
    # the ledger's path from the runtime plane's own rule: importing the ledger costs doctor a fifth of its time
    ledger_db = project_runtime_dir(root) / LEDGER_DB
    sound = _integrity_check(report, "ledger", ledger_db, "ledger")
    if not _checkout_check(report, root) and sound:  # another checkout's changes are not this one's to settle
        _unsettled_check(report, root, ledger_db)
    for status, message, step in notes(find_ledgers(root), shown_local_path):  # a moved repository's, ...
        report.check("ledger_elsewhere", status, message, step)
    _integrity_check(report, "resident_candidates", memzoi_home() / RESIDENT_DB, "resident")
    db = store_path(root)
    _index_checks(report, root, db, linked)
    writable = os.access(db.parent, os.W_OK) if db.parent.exists() else True
    if not writable:
        report.check(
            "runtime_dir",
            "warning",
            f"{shown_local_path(db.parent)} is not writable",
            "fix the permissions of MEMZOI_HOME",
        )
    statuses = {c["status"] for c in report.checks}
    status = next((s for s in ("error", "warning") if s in statuses), "ok")
    return {
        "project_root": shown_local_path(root),
        "status": status,
        "checks": report.checks,
        "next_steps": report.steps,
        "index_path": shown_local_path(db),
        "drift": _shown_drift(report.drift) if report.drift is not None else None,
    }


def _plane_checks(report: _Report, root: Path, memzoi_dir: Path, linked: list[Path]) -> None:
    """``canonical_path`` (the symlinked git-plane folders ``linked``) and ``records_root``."""
    records = memzoi_dir / "records"
    if linked:  # never read through: the index and the drift below see nothing of it (as `memzoi check`)
        report.check(
            "canonical_path",
            "warning",
            linked_plane_message(linked),
            "replace each symlinked folder with the real folder (`memzoi check` shows them)",
        )
    if through_linked_plane(memzoi_dir, records):
        report.check(
            "records_root",
            "warning",
            f"{shown_local_path(records)} is reached through a symlink; Memzoi refuses a symlinked records root",
        )
    elif records.is_dir():
        report.check("records_root", "ok", f"{shown_local_path(records)} exists")
    elif memzoi_dir.is_dir():  # a project whose records folder is gone: init recreates it, keeping every file
        report.check(
            "records_root",
            "warning",
            f"no `.memzoi/records` directory at {shown_local_path(root)}",
            f"run `memzoi init {shlex.quote(shown_local_path(root))}` to recreate the missing .memzoi folders (existing files are kept)",
        )
    else:
        report.check(
            "records_root",
            "warning",
            f"no `.memzoi/records` directory at {shown_local_path(root)}",
            "run doctor from inside the project, or pass --root PROJECT (or `memzoi init` to start one here)",
        )


#: What a project outside git loses (the ``git`` check's words; ``memzoi init`` says them once too).
OUTSIDE_GIT = (
    "not inside a git worktree: records cannot be reviewed through git, and attested records are refused "
    "(review-visibility)"
)


def _git_check(report: _Report, root: Path) -> None:
    """``git``: whether ``root`` is inside a git worktree; a ``warning`` naming git's refusal and its fix when git
    refuses the repository because another user owns it (:func:`memzoi.base.gitowner.git_refusal`)."""
    top = worktree_root(root)
    refused = git_refusal(root) if top is None else None
    if refused is not None:
        problem, step = refused_words(shown_local_path(refused))
        # keyed as outside git until then, the runtime folder changes with it (memzoi.base.ledgerfind)
        later = "; the ledger's changes made until then stay behind: `memzoi doctor` then names them, to bring over"
        report.check("git", "warning", problem, step + later)
    elif top is None:
        report.check("git", "skip", OUTSIDE_GIT)
    else:
        report.check("git", "ok", f"git worktree at {shown_local_path(top)}")


def _runtime_modes_check(report: _Report, root: Path) -> None:
    """``runtime_modes``: runtime paths other users may read or enter."""
    loose = loose_modes(root)
    if loose:
        modes = {str(p): mode for p, mode in loose}
        shown = _sample(list(modes), show=lambda p: f"{shown_local_path(p)} ({modes[p]:04o})")
        report.check(
            "runtime_modes",
            "warning",
            f"{len(loose)} runtime path(s) readable or writable by other users: "
            f"{shown}; runtime state may hold private memory",
            "run `memzoi rebuild` (it makes the project's "
            "runtime directory private again: folders 0700, files 0600, exports included) and, for the resident "
            "database and locks, any `memzoi resident` command; or chmod 700 the folders and 600 the files",
        )
    else:
        report.check("runtime_modes", "ok", "runtime directories are 0700 and files 0600 (private to this user)")


_AGAIN = "run `memzoi doctor` again when the other memzoi command is done"
#: What each database checked by :func:`_integrity_check` holds that no command can make again.
_HOLDS = {
    "ledger": "the change history that undo needs",
    "resident": "the resident candidates and their undo snapshots",
}


def _integrity_check(report: _Report, name: str, db: Path, kind: str) -> bool:
    """``name``: SQLite's integrity check of the runtime database ``db`` (a ``kind`` of
    :data:`~memzoi.base.runtime_errors.KINDS`), read-only (:func:`~memzoi.base.runtime_errors.damage`). A damaged
    one is an ``error``: it is not derived data, so nothing replaces it, and the step says how to keep a copy and
    export what is still readable. Paths are shown as :func:`~memzoi.judge.pathsafety.shown_local_path` shows them.
    True when the database exists and passed."""
    what = KINDS[kind][0]
    if not database_started(db):  # absent, or empty: a first write that failed (a full disk) wrote nothing in it
        report.check(name, "skip", f"{what} does not exist yet" + (" (its file is empty)" if db.is_file() else ""))
        return False
    try:
        problem = damage(db)
    except sqlite3.Error as err:  # busy, or it cannot be opened: not known to be damaged
        code = runtime_error(err, db, kind).code
        again = (
            _AGAIN
            if code == "database_busy"
            else "check MEMZOI_HOME's permissions and free space, then run `memzoi doctor` again"
        )
        report.check(name, "warning", f"{what} {shown_local_path(db)} could not be checked ({code})", again)
        return False
    if problem is None:
        report.check(name, "ok", f"{what} passed SQLite's integrity check")
        return True
    shown = shown_local_path(db)
    quoted = shlex.quote(shown)
    report.check(
        name,
        "error",
        f"{what} {shown} is damaged ({problem}); it holds {_HOLDS[kind]} and cannot be rebuilt from "
        "the files, so memzoi will not replace or delete it",
        f"with no memzoi process running (close the editors), keep a copy (`cp -p {quoted} {quoted}.copy`, and "
        f"its -wal file, if there is one, as {shown}.copy-wal); export what is still readable from the copy with "
        f"SQLite's tool (`sqlite3 {quoted}.copy .recover > recovered.sql`, or `.dump` where `.recover` fails: "
        "a dump of a damaged file ends in ROLLBACK, to be made COMMIT before it is loaded); "
        "memzoi never replaces or deletes it: to start a new one, move it aside yourself (what it recorded is "
        "then no longer known to memzoi), or put back a backup",
    )
    return False


def _checkout_check(report: _Report, root: Path) -> bool:
    """``ledger_checkout``, only when there is something to say: a warning when the live ledger was written for
    another checkout at this path (:func:`~memzoi.base.checkout.foreign_note`; returns True), ``ok`` for each ledger
    an earlier checkout left, set aside (:func:`~memzoi.base.checkout.set_aside_notes`)."""
    foreign = foreign_note(root, shown_local_path)
    if foreign is not None:
        report.check("ledger_checkout", "warning", foreign, "run `memzoi reconcile` to set it aside now (it is kept)")
    for note in set_aside_notes(root, shown_local_path):
        report.check("ledger_checkout", "ok", note)
    return foreign is not None


def _unsettled_check(report: _Report, root: Path, db: Path) -> None:
    """``ledger_changes``: a warning (so doctor exits 1) for every change of the sound ledger ``db`` that a process
    left in flight (``applying``/``undoing``) and every ``uncertain`` one, each saying what reconciliation makes or
    made of it and what to run (SPEC §6); ``ok`` when there is none. Read-only, as :func:`_integrity_check`: the
    ledger is read as it is when no process has it open, and is never reconciled here."""
    try:
        conn = read_only(db)
        try:
            # The ledger's table and statuses (memzoi.ledger.schema), asked directly: importing the ledger costs
            # doctor a fifth of its time, so it is loaded only when such a change is there (rarely).
            rows = conn.execute("SELECT 1 FROM change WHERE status IN ('applying', 'undoing', 'uncertain') LIMIT 1")
            found = rows.fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error as err:  # busy now, or written meanwhile: said, never guessed
        report.check("ledger_changes", "warning", f"the ledger's changes could not be read ({err})", _AGAIN)
        return
    if not found:
        report.check("ledger_changes", "ok", "no change is in flight or uncertain")
        return
    from ..ledger.reconcile import unsettled_report  # noqa: PLC0415 lazy: start-up (see above)

    for message, step in unsettled_report(root):
        report.check("ledger_changes", "warning", message, step)


def _index_checks(report: _Report, root: Path, db: Path, linked: list[Path]) -> None:
    """``index`` (absent, never built, of another schema, unavailable or damaged), then for a built index the
    checks of :func:`_built_index_checks`."""
    if linked:
        # Compared with a tree it may not read, the index would only look stale and `memzoi rebuild` refuses.
        report.check(
            "index",
            "skip",
            f"the index ({shown_local_path(db)}) is not compared with the files while a git-plane folder is a symlink",
        )
        return
    if not db.exists():
        report.check("index", "warning", f"the index has not been built ({shown_local_path(db)})", "memzoi rebuild")
        return
    try:
        with Index(root, path=db) as index, guard(db, "index"):
            if index.schema_problem:
                report.check("index", "warning", index.schema_problem, "memzoi rebuild")
            elif not index.exists:
                report.check("index", "warning", "the index exists but was never completely built", "memzoi rebuild")
            else:
                _built_index_checks(report, index, db)
    except RuntimeStateError as err:  # IndexUnavailable included: named, with what to do
        step = (
            err.advice
            if err.advice and err.code != "corrupt_database"
            else "run `memzoi rebuild` (it replaces a damaged index)"
        )
        report.check("index", "warning", with_shown_paths(err.message, err.path), with_shown_paths(step, err.path))


def _built_index_checks(report: _Report, index: Index, db: Path) -> None:
    """``index`` (its counts), then the drift from the files (:func:`_drift_checks`, kept in ``report.drift``)
    and the judgements it holds (:func:`_judgement_checks`)."""
    counts = index.counts()
    report.check(
        "index",
        "ok",
        f"{counts['records']} record(s) and {counts['proposals']} proposal(s) indexed at {shown_local_path(db)}",
    )
    report.drift = index.drift()
    _drift_checks(report, report.drift)
    _judgement_checks(report, index)


def _drift_checks(report: _Report, drift: Drift) -> None:
    """``repo_index`` (files missing, gone or changed since indexing), ``readable`` and ``fts``."""
    problems = []
    if drift.missing_from_index:
        problems.append(
            f"{len(drift.missing_from_index)} file(s) missing from the index ({_sample(drift.missing_from_index)})"
        )
    if drift.stale_in_index:
        problems.append(
            f"{len(drift.stale_in_index)} indexed file(s) no longer exist ({_sample(drift.stale_in_index)})"
        )
    if drift.changed_in_index:
        problems.append(
            f"{len(drift.changed_in_index)} file(s) changed since indexing ({_sample(drift.changed_in_index)})"
        )
    if problems:
        report.check("repo_index", "warning", "repo_index is stale: " + "; ".join(problems), "memzoi rebuild")
    else:
        report.check("repo_index", "ok", "the index matches the .memzoi files")
    if drift.unreadable:
        report.check(
            "readable",
            "warning",
            f"{len(drift.unreadable)} file(s) cannot be read "
            f"({_sample(drift.unreadable)}), so the index, search and the editor skip them",
            "make them readable (e.g. chmod u+r), then run `memzoi rebuild`",
        )
    if drift.fts_out_of_sync:
        report.check("fts", "warning", "the full-text index failed its integrity check", "memzoi rebuild")
    else:
        report.check("fts", "ok", "full-text index integrity check passed")


def _judgement_checks(report: _Report, index: Index) -> None:
    """``admission`` (records the index holds as refused) and ``analysis`` (files an internal error kept from
    being analysed; reported only when there are some)."""
    refused = index.refused_records()
    if refused:
        report.check(
            "admission",
            "warning",
            f"{len(refused)} record(s) refused admission ({_sample(refused)})",
            "memzoi check .memzoi",
        )
    else:
        report.check("admission", "ok", "every indexed record is admitted")
    failed = index.failed_analyses()
    if failed:
        report.check(
            "analysis",
            "warning",
            f"{len(failed)} file(s) could not be analysed because of an "
            f"internal error ({_sample(failed)}); the rest of the index is complete",
            "report the internal error with the output of `memzoi --debug rebuild`",
        )


__all__ = ["OUTSIDE_GIT", "diagnose"]
