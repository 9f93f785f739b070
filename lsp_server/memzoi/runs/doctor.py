"""The doctor report of a project: health of the workspace and its index, with repair steps (SPEC §7, §8).

:func:`diagnose` gives Memzoi's doctor shape ``{project_root, status: ok|warning, checks: [{name, status:
ok|warning|skip, message}], next_steps}`` plus ``index_path`` and ``drift`` (``missing_from_index``,
``stale_in_index``, ``changed_in_index``, ``fts_out_of_sync``, ``schema``, ``unreadable``: files that cannot be
read, reported as ``readable`` rather than as index drift, since a rebuild cannot index them). It never writes files or the index; it
reports runtime paths other users may read or enter (``runtime_modes``) before opening the index tightens them.
``memzoi doctor`` prints it and the language server's ``memzoi.doctor`` command returns it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from ..base.runtime import loose_modes
from ..base.runtime_errors import RuntimeStateError, guard
from ..judge.workspace import linked_plane, linked_plane_message, through_linked_plane
from ..project.admission import worktree_root
from ..stores.index import Drift, Index, index_path


def _sample(paths: list[str], n: int = 5) -> str:
    more = f" and {len(paths) - n} more" if len(paths) > n else ""
    return ", ".join(paths[:n]) + more


def diagnose(root: Path) -> dict[str, Any]:
    """The doctor report for ``root`` as a dict (see the module docstring)."""
    checks: list[dict[str, str]] = []
    steps: list[str] = []

    def check(name: str, status: str, message: str, step: str | None = None) -> None:
        checks.append({"name": name, "status": status, "message": message})
        if step and step not in steps:
            steps.append(step)

    memzoi_dir = root / ".memzoi"
    records = memzoi_dir / "records"
    linked = linked_plane(memzoi_dir)
    if linked:  # never read through: the index and the drift below see nothing of it (as `memzoi check`)
        check(
            "canonical_path",
            "warning",
            linked_plane_message(linked),
            "replace each symlinked folder with the real folder (`memzoi check` shows them)",
        )
    if through_linked_plane(memzoi_dir, records):
        check(
            "records_root",
            "warning",
            f"{records} is reached through a symlink; Memzoi refuses a symlinked records root",
        )
    elif records.is_dir():
        check("records_root", "ok", f"{records} exists")
    elif memzoi_dir.is_dir():  # a project whose records folder is gone: init recreates it, keeping every file
        check(
            "records_root",
            "warning",
            f"no `.memzoi/records` directory at {root}",
            f"run `memzoi init {shlex.quote(str(root))}` to recreate the missing .memzoi folders (existing files are kept)",
        )
    else:
        check(
            "records_root",
            "warning",
            f"no `.memzoi/records` directory at {root}",
            "run doctor from inside the project, or pass --root PROJECT (or `memzoi init` to start one here)",
        )

    top = worktree_root(root)
    if top is None:
        check(
            "git",
            "skip",
            "not inside a git worktree: records cannot be reviewed through git, and attested "
            "records are refused (review-visibility)",
        )
    else:
        check("git", "ok", f"git worktree at {top}")

    # Before the index is opened: opening it tightens the modes of the runtime directory.
    loose = loose_modes(root)
    if loose:
        shown = _sample([f"{p} ({mode:04o})" for p, mode in loose])
        check(
            "runtime_modes",
            "warning",
            f"{len(loose)} runtime path(s) readable or writable by other users: "
            f"{shown}; runtime state may hold private memory",
            "run `memzoi rebuild` (it makes the project's "
            "runtime directory private again: folders 0700, files 0600, exports included) and, for the resident "
            "database and locks, any `memzoi resident` command; or chmod 700 the folders and 600 the files",
        )
    else:
        check("runtime_modes", "ok", "runtime directories are 0700 and files 0600 (private to this user)")

    db = index_path(root)
    drift: Drift | None = None
    if linked:
        # Compared with a tree it may not read, the index would only look stale and `memzoi rebuild` refuses.
        check("index", "skip", f"the index ({db}) is not compared with the files while a git-plane folder is a symlink")
    elif not db.exists():
        check("index", "warning", f"the index has not been built ({db})", "memzoi rebuild")
    else:
        try:
            with Index(root, path=db) as index, guard(db, "index"):
                if index.schema_problem:
                    check("index", "warning", index.schema_problem, "memzoi rebuild")
                elif not index.exists:
                    check("index", "warning", "the index exists but was never completely built", "memzoi rebuild")
                else:
                    counts = index.counts()
                    check(
                        "index",
                        "ok",
                        f"{counts['records']} record(s) and {counts['proposals']} proposal(s) indexed at {db}",
                    )
                    drift = index.drift()
                    problems = []
                    if drift.missing_from_index:
                        problems.append(
                            f"{len(drift.missing_from_index)} file(s) missing from the index "
                            f"({_sample(drift.missing_from_index)})"
                        )
                    if drift.stale_in_index:
                        problems.append(
                            f"{len(drift.stale_in_index)} indexed file(s) no longer exist "
                            f"({_sample(drift.stale_in_index)})"
                        )
                    if drift.changed_in_index:
                        problems.append(
                            f"{len(drift.changed_in_index)} file(s) changed since indexing "
                            f"({_sample(drift.changed_in_index)})"
                        )
                    if problems:
                        check("repo_index", "warning", "repo_index is stale: " + "; ".join(problems), "memzoi rebuild")
                    else:
                        check("repo_index", "ok", "the index matches the .memzoi files")
                    if drift.unreadable:
                        check(
                            "readable",
                            "warning",
                            f"{len(drift.unreadable)} file(s) cannot be read "
                            f"({_sample(drift.unreadable)}), so the index, search and the editor skip them",
                            "make them readable (e.g. chmod u+r), then run `memzoi rebuild`",
                        )
                    if drift.fts_out_of_sync:
                        check("fts", "warning", "the full-text index failed its integrity check", "memzoi rebuild")
                    else:
                        check("fts", "ok", "full-text index integrity check passed")
                    refused = index.refused_records()
                    if refused:
                        check(
                            "admission",
                            "warning",
                            f"{len(refused)} record(s) refused admission ({_sample(refused)})",
                            "memzoi check .memzoi",
                        )
                    else:
                        check("admission", "ok", "every indexed record is admitted")
                    failed = index.failed_analyses()
                    if failed:
                        check(
                            "analysis",
                            "warning",
                            f"{len(failed)} file(s) could not be analysed because of an "
                            f"internal error ({_sample(failed)}); the rest of the index is complete",
                            "report the internal error with the output of `memzoi --debug rebuild`",
                        )
        except RuntimeStateError as err:  # IndexUnavailable included: named, with what to do
            step = (
                err.advice
                if err.advice and err.code != "corrupt_database"
                else "run `memzoi rebuild` (it replaces a damaged index)"
            )
            check("index", "warning", err.message, step)
    writable = os.access(db.parent, os.W_OK) if db.parent.exists() else True
    if not writable:
        check("runtime_dir", "warning", f"{db.parent} is not writable", "fix the permissions of MEMZOI_HOME")
    status = "warning" if any(c["status"] == "warning" for c in checks) else "ok"
    return {
        "project_root": str(root),
        "status": status,
        "checks": checks,
        "next_steps": steps,
        "index_path": str(db),
        "drift": drift.to_json() if drift is not None else None,
    }


__all__ = ["diagnose"]
