"""The inputs of git's ignore answers outside the worktree: the configuration files that can set
``core.excludesFile`` and the excludes file itself (the user's global ignore rules).

Admission asks ``git check-ignore`` (:mod:`memzoi.project.admission`), which honours, besides every
``.gitignore`` and ``info/exclude``, the file named by ``core.excludesFile``, by default
``$XDG_CONFIG_HOME/git/ignore`` (``$HOME/.config/git/ignore`` when ``XDG_CONFIG_HOME`` is unset or empty; git's
``gitignore(5)`` and ``git-config(1)``, ``core.excludesFile``). A stored verdict whose inputs leave these out is
served stale when the user adds a global rule: the untracked file it ignores must then show
``ignored_untracked``. Git's child processes run without inherited ``GIT_*`` variables
(:func:`memzoi.base.runtime.git_env`), so only ``HOME`` and ``XDG_CONFIG_HOME`` name the global files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The system-wide configuration file of a git built with the usual prefix (``git config --system``).
SYSTEM_CONFIG = Path("/etc/gitconfig")
_SECTION = re.compile(rb"^\s*\[\s*([A-Za-z0-9.-]+)")
_KEY = re.compile(rb"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _xdg_git(name: str) -> Path | None:
    """``$XDG_CONFIG_HOME/git/<name>``, or ``$HOME/.config/git/<name>`` as git falls back; ``None`` without both."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "git" / name
    home = os.environ.get("HOME")
    return Path(home) / ".config" / "git" / name if home else None


def config_files(gitdir: Path, common: Path) -> list[Path]:
    """The configuration files git reads for the worktree whose git directory is ``gitdir`` (``common``: its
    common directory), lowest precedence first: system, XDG global, ``~/.gitconfig``, the repository's
    ``config`` and the worktree's ``config.worktree``."""
    home = os.environ.get("HOME")
    out = [SYSTEM_CONFIG, _xdg_git("config"), Path(home) / ".gitconfig" if home else None]
    return [p for p in (*out, common / "config", gitdir / "config.worktree") if p is not None]


def small_file(path: Path) -> bytes:
    """A small file's bytes (a ref, ``HEAD``, an ignore or configuration file; at most 1 MiB), or an ``absent`` /
    ``unreadable`` marker: one of git's inputs as a hash takes it."""
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20)
    except FileNotFoundError:
        return b"\0absent"
    except OSError:
        return b"\0unreadable"


def excludes_file(configs: list[tuple[Path, bytes]], top: Path) -> Path | None:
    """The excludes file the ``configs`` (path, bytes; lowest precedence first) name in their ``[core]`` section's
    last ``excludesFile``, ``~`` expanded and a relative path taken from the worktree's ``top``; git's default
    (:func:`_xdg_git`) when none does. ``[include]`` files are not followed."""
    named: bytes | None = None
    for _, data in configs:
        section = b""
        for line in data.splitlines():
            head = _SECTION.match(line)
            if head:
                section = head.group(1).lower()
                continue
            key = _KEY.match(line) if section == b"core" else None
            if key:
                named = key.group(1).split(b" #")[0].split(b" ;")[0].strip().strip(b'"')
    if not named:
        return _xdg_git("ignore")
    path = Path(os.path.expanduser(os.fsdecode(named)))
    return path if path.is_absolute() else top / path


def excludes_inputs(top: Path, gitdir: Path, common: Path) -> bytes:
    """The bytes of every configuration file of :func:`config_files` and of the excludes file they name
    (:func:`excludes_file`), each marked absent or unreadable when so: a change of any of them may change what
    ``git check-ignore`` answers for the worktree at ``top``. Never raises."""
    configs = [(p, small_file(p)) for p in config_files(gitdir, common)]
    out = [os.fsencode(p) + b"\0" + data for p, data in configs]
    named = excludes_file(configs, top)
    if named is not None:
        out.append(b"excludes\0" + os.fsencode(named) + b"\0" + small_file(named))
    return b"\0\0".join(out)


__all__ = ["SYSTEM_CONFIG", "config_files", "excludes_file", "excludes_inputs", "small_file"]
