"""Git's refusal of a repository that belongs to another user.

Since 2.35.2 git refuses to work in a repository owned by another user unless it is listed in ``safe.directory``
(``git-config(1)``, ``safe.directory``; CVE-2022-24765): every command then fails with ``fatal: detected dubious
ownership in repository at '<path>'``. To memzoi that looks like a folder outside git, so the places that say "not
inside a git worktree" ask :func:`git_refusal` first and, when git refused, name the refusal and its one-line fix
instead (:func:`refused_words`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from .runtime import git_env

_TIMEOUT = 10  # seconds
#: git's words for the refusal (``setup.c``, ``die(_("detected dubious ownership in repository at '%s'")``).
_DUBIOUS = re.compile(rb"detected dubious ownership in repository at '([^'\n]*)'")


def git_refusal(start: str | os.PathLike[str]) -> str | None:
    """The repository (its path, as git names it) that git refuses to work in from the folder ``start`` because
    another user owns it, or ``None``: git works there, ``start`` is outside any repository, or git cannot run.
    Runs one ``git rev-parse`` with inherited ``GIT_*`` variables cleared; its error output is read, bounded."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--git-dir"],
            cwd=start,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode == 0:
        return None
    found = _DUBIOUS.search(proc.stderr[:8192])
    if found is None:
        return None
    return os.fsdecode(found.group(1)) or str(Path(start))


def refused_words(repository: str) -> tuple[str, str]:
    """``(problem, what to do)`` when git refuses ``repository`` (:func:`git_refusal`): what memzoi then loses, as
    outside git, and git's own fix. ``repository`` is shown as given (callers pass it through their path display)."""
    return (
        f"git refuses the repository at {repository}: it belongs to another user (git: detected dubious "
        "ownership), so records cannot be reviewed through git, and attested records are refused "
        "(review-visibility)",
        f"if you trust the repository, run `git config --global --add safe.directory {shlex.quote(repository)}` "
        "(or run memzoi as the repository's owner)",
    )


def outside_review(refused: bool) -> str:
    """The ``review_visibility`` finding's message for an attested record outside a git worktree, or in a
    repository git refuses (``refused``: :func:`git_refusal`), with what to do about each."""
    if refused:
        where = (
            "is in a repository git refuses to work in (it belongs to another user; git: detected dubious ownership)"
        )
        fix = "trust the repository (`git config --global --add safe.directory PATH`: `memzoi doctor` names it)"
    else:
        where, fix = "is not in a git worktree", "move the project into a git repository"
    return (
        f"this record carries a materialization attestation but {where}, so its review cannot be verified; Memzoi "
        f"refuses it (review-visibility): {fix}, or remove the attestation"
    )


__all__ = ["git_refusal", "outside_review", "refused_words"]
