"""The inputs of git's ignore answers outside the worktree: the configuration files that can set
``core.excludesFile`` and the excludes file itself (the user's global ignore rules).

Admission asks ``git check-ignore`` (:mod:`memzoi.project.admission`), which honours, besides every
``.gitignore`` and ``info/exclude``, the file named by ``core.excludesFile``, by default
``$XDG_CONFIG_HOME/git/ignore`` (``$HOME/.config/git/ignore`` when ``XDG_CONFIG_HOME`` is unset or empty; git's
``gitignore(5)`` and ``git-config(1)``, ``core.excludesFile``). A stored verdict whose inputs leave these out is
served stale when the user adds a global rule: the untracked file it ignores must then show
``ignored_untracked``. Git's child processes run without inherited ``GIT_*`` variables
(:func:`memzoi.base.runtime.git_env`), so only ``HOME`` and ``XDG_CONFIG_HOME`` name the global files. The files
those configurations include (``include.path``, ``includeIf.<condition>.path``) are inputs too, and may name the
excludes file (:func:`expand`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The system-wide configuration file of a git built with the usual prefix (``git config --system``).
SYSTEM_CONFIG = Path("/etc/gitconfig")
#: How deep git follows nested ``include.path`` (git's ``config.c``, ``MAX_INCLUDE_DEPTH``; git then stops with an
#: error, so a cycle is read this deep and no deeper).
MAX_INCLUDE_DEPTH = 10
_SECTION = re.compile(rb"^\s*\[\s*([A-Za-z0-9.-]+)")
# a whole header, ``[name]`` or ``[name "sub"]``, and what follows it on the line (git reads a key there too)
_HEADER = re.compile(rb'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\](.*)$')
_ENTRY = re.compile(rb"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")
_INCLUDES = (b"include", b"includeif")


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


def _value(raw: bytes) -> bytes:
    """A configuration value as written: its trailing comment and surrounding quotes taken off."""
    return raw.split(b" #")[0].split(b" ;")[0].strip().strip(b'"')


def _path(value: bytes, base: Path) -> Path:
    """A path value, ``~`` expanded and a relative one taken from ``base`` (git-config(1), ``pathname``)."""
    path = Path(os.path.expanduser(os.fsdecode(value)))
    return path if path.is_absolute() else base / path


def expand(configs: list[tuple[Path, bytes]]) -> tuple[list[tuple[Path, bytes]], list[tuple[bytes, bool]]]:
    """Follow the ``configs``' includes as git does (git-config(1), "Includes"): an ``include.path`` or
    ``includeIf.<condition>.path`` reads the named file in place, ``~`` expanded and a relative path taken from
    the folder of the file that names it, nested at most :data:`MAX_INCLUDE_DEPTH` deep; a missing file is skipped,
    as git skips it. A file included again (twice, or in a cycle) is read once and followed again only from nearer
    the top, so the work is bounded by the number of files. Returns the files read by includes, in first reading
    order (path and bytes, or :func:`small_file`'s marker), and every ``core.excludesFile`` value in reading order,
    each with whether :func:`excludes_files` must take every value as an input: it lies under an ``includeIf``,
    whose condition is not judged here (an empty value marks a file included again). Never raises."""
    read: dict[Path, bytes] = {}
    depths: dict[Path, int] = {}  # the least depth each file was read at: a file is read again only nearer the top
    files: list[tuple[Path, bytes]] = []
    named: list[tuple[bytes, bool]] = []

    def walk(path: Path, data: bytes, conditional: bool, depth: int) -> None:
        section = b""
        for line in data.splitlines():
            head = _HEADER.match(line) or _SECTION.match(line)
            if head:
                section = head.group(1).lower()
                line = head.group(2) if head.re is _HEADER else b""
            entry = _ENTRY.match(line)
            if not entry:
                continue
            key, value = entry.group(1).lower(), _value(entry.group(2))
            if section == b"core" and key == b"excludesfile":
                named.append((value, conditional))
            elif section in _INCLUDES and key == b"path" and value and depth < MAX_INCLUDE_DEPTH:
                target = _path(value, path.parent)
                if target in read:  # included twice or in a cycle: which value git reads last is not followed
                    named.append((b"", True))  # here, every value named is then an input (excludes_files)
                    if depths[target] <= depth + 1:
                        continue
                else:
                    read[target] = small_file(target)
                    files.append((target, read[target]))
                depths[target] = depth + 1
                if not read[target].startswith(b"\0"):  # a marker: absent or unreadable, nothing to follow
                    walk(target, read[target], conditional or section == b"includeif", depth + 1)

    for path, data in configs:
        walk(path, data, False, 0)
    return files, named


def excludes_files(named: list[tuple[bytes, bool]], top: Path) -> list[Path]:
    """The excludes files git may read, given the ``core.excludesFile`` values of :func:`expand` (lowest
    precedence first): the last value, ``~`` expanded and a relative path taken from the worktree's ``top``, or
    git's default (:func:`_xdg_git`) when there is none. Where any value lies under an ``includeIf`` (its condition,
    such as ``gitdir:`` or ``onbranch:``, decides which one git reads), every value named and the default: each of
    them is then an input."""
    default = _xdg_git("ignore")
    paths = [_path(value, top) for value, _ in named if value]
    if any(conditional for _, conditional in named):
        return list(dict.fromkeys([*paths, *([default] if default is not None else [])]))
    if paths:
        return paths[-1:]
    return [default] if default is not None else []


def excludes_inputs(top: Path, gitdir: Path, common: Path) -> bytes:
    """The bytes of every configuration file of :func:`config_files`, of the files they include (:func:`expand`)
    and of the excludes files they name (:func:`excludes_files`), each marked absent or unreadable when so: a change
    of any of them may change what ``git check-ignore`` answers for the worktree at ``top``. Never raises."""
    configs = [(p, small_file(p)) for p in config_files(gitdir, common)]
    included, named = expand(configs)
    out = [os.fsencode(p) + b"\0" + data for p, data in (*configs, *included)]
    for path in excludes_files(named, top):
        out.append(b"excludes\0" + os.fsencode(path) + b"\0" + small_file(path))
    return b"\0\0".join(out)


__all__ = [
    "MAX_INCLUDE_DEPTH",
    "SYSTEM_CONFIG",
    "config_files",
    "excludes_files",
    "excludes_inputs",
    "expand",
    "small_file",
]
