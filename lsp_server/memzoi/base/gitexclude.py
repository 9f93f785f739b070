"""Keeping files memzoi creates beside tracked files out of ``git status``: a pattern in the repository's
``info/exclude`` (git's own per-clone ignore file, never committed; ``gitignore(5)``).

Used for two kinds of file that must sit beside a file of the worktree yet never enter the repository:

- the lock companion Zuno's writers take beside a resident file (``<name>.zuno-write-lock``,
  :func:`memzoi.resident.store.write_lock`): it must stay where Zuno locks it too (issue 28);
- the temporary file every atomic write of a project makes beside its target (``.<name>.<12 hex>.tmp``,
  :func:`memzoi.base.fsio.temp_name`, :func:`hide_temporaries`): a process killed mid-change leaves it until the
  next reconciliation, and a commit made meanwhile without the hook (``git add -A && git commit --no-verify``)
  must not take half-written memory into the repository.

The exclude file is rewritten whole (a temporary copy in its own folder renamed over it, keeping its mode and
owner: :func:`memzoi.base.fsio.atomic_write`) under the OS lock of the file, so git never reads a torn file and two
memzoi processes adding patterns at once keep both. Any failure (no repository, git not runnable, a read-only
``.git``) only means the pattern is not in place: the caller's write goes on.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .newfolders import make_folders
from .runtime import git_env

#: A comment written above the patterns memzoi adds, so the user knows where they came from.
COMMENT = "# added by memzoi: lock files of Zuno's resident-memory writers"
#: The gitignore pattern of :func:`memzoi.base.fsio.temp_name`'s names, exactly: a leading dot, the target's
#: name, a dot, twelve lowercase hex digits (``secrets.token_hex(6)``) and ``.tmp``. No slash, so it holds in every
#: folder of the worktree (records and proposals under any ``.memzoi/``, resident files, instruction files).
TEMP_PATTERN = ".*." + "[0-9a-f]" * 12 + ".tmp"
#: The comment above :data:`TEMP_PATTERN`.
TEMP_COMMENT = "# added by memzoi: temporary files of its atomic writes (.<name>.<12 hex digits>.tmp)"
_GIT_TIMEOUT = 10
#: How long an exclude file held by another memzoi process is waited for (seconds; it is held for a rewrite).
_LOCK_WAIT_S = 2.0


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


def exclude(folder: Path, pattern: str, comment: str = COMMENT, *, target: Path | None = None) -> bool:
    """Make git ignore files matching ``pattern`` (a gitignore pattern, e.g. ``*.zuno-write-lock``) in the
    repository holding ``folder``, by adding it under ``comment`` to ``info/exclude`` unless a line already holds
    it (``target``: that file, when the caller knows it). Returns whether the pattern is in place (``False``: no
    repository, or the file could not be read, locked or written; nothing else is affected, so callers go on).
    The exclude file is never written through a symlink, and keeps its mode and owner (:func:`_add`)."""
    if target is None:
        target = exclude_path(folder)
    if target is None:
        return False
    try:
        return _add(target, pattern, comment)
    except OSError:
        return False


def _add(target: Path, pattern: str, comment: str) -> bool:
    """Add ``pattern`` to the exclude file ``target`` (created, mode 0644 less the umask, when absent) holding its
    OS lock: the lock is taken on the file, then checked to still be the file at ``target`` (a rewrite by another
    process renames a new file there), so every memzoi writer reads the last version before adding to it."""
    from .fsio import atomic_write  # noqa: PLC0415 lazy: start-up
    from .lock import try_lock  # noqa: PLC0415 lazy: start-up

    make_folders(target.parent)  # ``info/`` never wider than the git folder above it
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        fd = os.open(target, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            try:
                locked = try_lock(fd)
            except OSError:  # a file system that cannot lock: the rewrite is still atomic
                locked = True
            if locked and os.path.samestat(os.fstat(fd), os.lstat(target)):
                existing = _read(fd)
                if pattern in (line.strip() for line in existing.decode("utf-8", "replace").splitlines()):
                    return True
                sep = b"\n" if existing and not existing.endswith(b"\n") else b""
                atomic_write(target, existing + sep + f"{comment}\n{pattern}\n".encode())
                return True
        finally:
            os.close(fd)  # the lock goes with it
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)  # another memzoi process holds it for a rewrite: a moment


def _read(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


#: Folders whose repository's exclude file is known (``None``: in no repository), and the state (:func:`_stamp`)
#: of each exclude file last seen holding :data:`TEMP_PATTERN`: a process asks git once per repository, and reads
#: the file again only when it changed.
_repository_of: dict[Path, Path | None] = {}
_hidden: dict[Path, tuple[int, int, int]] = {}


def hide_temporaries(folder: Path) -> bool:
    """Make sure the repository holding ``folder`` ignores the temporary files of memzoi's atomic writes
    (:data:`TEMP_PATTERN` in its ``info/exclude``, added once) before one is created in ``folder``. Called by every
    write of a project file (:func:`memzoi.base.fsutil.swap_file`, resident writes, ``init``). Returns whether the
    pattern is in place; ``False`` (outside git, git not runnable, a read-only ``.git`` or exclude file) changes
    nothing else: the write goes on and its temporary file is visible to git as before, until reconciliation or
    the write itself removes it. Never raises."""
    try:
        target = _repository(Path(os.path.abspath(folder)))
        if target is None:
            return False
        seen = _stamp(target)
        if seen is not None and _hidden.get(target) == seen:
            return True
        if not exclude(folder, TEMP_PATTERN, TEMP_COMMENT, target=target):
            return False
        stamp = _stamp(target)
        if stamp is not None:
            _hidden[target] = stamp
        return True
    except OSError:
        return False


def _repository(folder: Path) -> Path | None:
    """The exclude file of ``folder``'s repository, from :data:`_repository_of` when ``folder`` or a folder above
    it with no ``.git`` in between was asked before (git finds a repository by going up to the first ``.git``),
    else from git. A folder known to be in no repository is asked again once a ``.git`` appears above it."""
    probe = folder
    while True:
        if probe in _repository_of:
            known = _repository_of[probe]
            if known is not None or not any(os.path.lexists(p / ".git") for p in (probe, *probe.parents)):
                return known
            break
        if os.path.lexists(probe / ".git") or probe.parent == probe:
            break
        probe = probe.parent
    if not folder.is_dir():
        return None
    found = exclude_path(folder)
    if found is not None:  # one spelling per file, whichever folder asked (its own name is not resolved)
        found = Path(os.path.realpath(found.parent)) / found.name
    _repository_of[folder] = found
    if not os.path.lexists(folder / ".git"):
        for above in folder.parents:  # the folders up to the first ``.git`` are in the same repository
            _repository_of[above] = found
            if os.path.lexists(above / ".git"):
                break
    return found


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


__all__ = ["COMMENT", "TEMP_COMMENT", "TEMP_PATTERN", "exclude", "exclude_path", "hide_temporaries"]
