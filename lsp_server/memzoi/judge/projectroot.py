"""Where a project's root is (Memzoi reference §7.2), with nothing but :mod:`os`: ``memzoi search`` asks this
before the interpreter has imported anything else, to start listing the project's files at once
(:func:`memzoi.cli.main.list_ahead`). :func:`memzoi.judge.workspace.find_project_root` and the command line's
``--root`` (:func:`memzoi.cli._common.project_root`) are this rule too.
"""

from __future__ import annotations

import os

#: The folder of a project's git-plane files and settings.
MEMZOI_DIR = ".memzoi"


def discover(start: str | os.PathLike[str]) -> str:
    """The project root for ``start`` (a file or folder; symlinks resolved), as an absolute path: the nearest
    ancestor holding ``.memzoi/records/`` or ``.memzoi/config.toml``; else the nearest holding ``.git``; else
    ``start``'s folder. Never walks down. Raises ``OSError`` where the current folder is gone (a relative ``start``)."""
    here = os.path.realpath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    chain = [here]
    while (up := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(up)
    for d in chain:
        if marks_project(d):
            return d
    for d in chain:
        if os.path.exists(os.path.join(d, ".git")):
            return d
    return here


def marks_project(folder: str) -> bool:
    """Whether ``folder`` holds ``.memzoi/records/`` or ``.memzoi/config.toml``: what makes it a project root."""
    m = os.path.join(folder, MEMZOI_DIR)
    return os.path.isdir(os.path.join(m, "records")) or os.path.isfile(os.path.join(m, "config.toml"))


def enclosing_project(folder: str | os.PathLike[str]) -> str | None:
    """The nearest project root strictly above ``folder`` (symlinks resolved; absolute), or ``None``. A project
    made in ``folder`` would hide that one from every command run below ``folder``, since :func:`discover` takes
    the nearest root."""
    here = os.path.realpath(folder)
    while (up := os.path.dirname(here)) != here:
        if marks_project(up):
            return up
        here = up
    return None


def root_of(option: str | None) -> str:
    """The project root a command works on: ``option`` (its ``--root``) with symlinks resolved, else
    :func:`discover` from the current folder. Raises ``OSError`` where the current folder is gone."""
    return os.path.realpath(option) if option else discover(os.getcwd())
