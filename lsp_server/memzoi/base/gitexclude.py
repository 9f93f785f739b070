"""Keeping files memzoi creates beside tracked files out of ``git status``: a pattern in the repository's
``info/exclude`` (git's own per-clone ignore file, never committed; ``gitignore(5)``).

Used for the lock companion Zuno's writers take beside a resident file (``<name>.zuno-write-lock``,
:func:`memzoi.resident.store.write_lock`): it must stay beside the file, where Zuno locks it too, yet it must never
show as an untracked file of the repository (issue 28).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .newfolders import make_folders
from .runtime import git_env

#: A comment written above the patterns memzoi adds, so the user knows where they came from.
COMMENT = "# added by memzoi: lock files of Zuno's resident-memory writers"
_GIT_TIMEOUT = 10


def exclude_path(folder: Path) -> Path | None:
    """The ``info/exclude`` file of the git repository holding ``folder`` (the common directory's, shared by
    every worktree), or ``None`` when ``folder`` is in no repository or git cannot be run."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--git-path", "info/exclude"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    raw = out.stdout.decode("utf-8", "surrogateescape").strip()
    if not raw:
        return None
    path = Path(raw)
    return path if path.is_absolute() else folder / path


def exclude(folder: Path, pattern: str) -> bool:
    """Make git ignore files matching ``pattern`` (a gitignore pattern, e.g. ``*.zuno-write-lock``) in the
    repository holding ``folder``, by appending it to ``info/exclude`` unless a line already holds it. Returns
    whether the pattern is in place (``False``: no repository, or the file could not be read or written; nothing
    else is affected, so callers go on). The exclude file is opened without following a symlink."""
    target = exclude_path(folder)
    if target is None:
        return False
    try:
        existing = target.read_bytes().decode("utf-8", "replace") if target.exists() else ""
    except OSError:
        return False
    if pattern in (line.strip() for line in existing.splitlines()):
        return True
    text = ("\n" if existing and not existing.endswith("\n") else "") + f"{COMMENT}\n{pattern}\n"
    try:
        make_folders(target.parent)  # ``info/`` never wider than the git folder above it
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        return False
    return True
