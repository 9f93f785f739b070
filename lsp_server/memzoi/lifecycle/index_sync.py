"""The project store's search index kept current by the ledgered changes themselves.

Every git-plane write goes through :func:`memzoi.ledger.run_change` or :func:`memzoi.ledger.undo_change`; after the
files are committed, the ledger calls its commit hook (:func:`memzoi.ledger.set_commit_hook`; the ledger sits below
the stores, so it does not name the index itself). The composition roots install :func:`sync_index` as that hook
with :func:`install`, explicitly: the command line for every command that makes changes (``memzoi.cli.main``), the
MCP server before its first proposal, the language server once it is initialized. Then the files the change touched are re-indexed (:meth:`memzoi.stores.index.Index.update_paths`), so
``memzoi doctor`` does not report ``repo_index is stale`` after ``apply``, ``supersede``, ``tombstone`` or ``undo``
and the next search needs no refresh. The index is disposable (SPEC §8): a store never built is left alone (the
first search or ``memzoi rebuild`` builds it), and a failure here never fails the change; the index then stays
stale and the next search or ``memzoi rebuild`` refreshes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ..base.runtime_errors import RuntimeStateError
from ..ledger import set_commit_hook
from ..stores.index import Index
from ..stores.store import store_path

#: The folders of ``.memzoi`` the index holds (Memzoi's walk of records and packets, :mod:`memzoi.project.crossfile`).
INDEXED = (".memzoi/records/", ".memzoi/proposals/")


def indexed_paths(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (relative to ``root``, ``/``-separated, as the ledger stores them) that the index holds
    or would hold: records and packets below ``.memzoi``, present or removed; hidden files and Memzoi's
    ``index.md``/``log.md`` are not indexed."""
    out = []
    for rel in paths:
        name = rel.rsplit("/", 1)[-1]
        if rel.startswith(INDEXED) and not name.startswith(".") and name not in ("index.md", "log.md"):
            out.append(rel)
    return out


def sync_index(root: Path, paths: Iterable[str]) -> bool:
    """Re-index ``paths`` (the files a committed change wrote or removed) in ``root``'s project store when its
    index has been built. Returns whether the index was updated; ``False`` when there was nothing to do, no
    built index, or the store could not be opened or written (never raises for those: the change is already
    committed, and a stale index is only reported by ``memzoi doctor`` and refreshed by the next search)."""
    wanted = indexed_paths(root, paths)
    if not wanted or not store_path(root).is_file():
        return False
    try:
        with Index(root, workers=1) as index:
            if not index.exists:  # never built, or of another version/stamp: the next search rebuilds it
                return False
            index.update_paths(wanted)
    except (RuntimeStateError, sqlite3.Error, OSError):
        return False
    return True


def install() -> None:
    """Make :func:`sync_index` the ledger's commit hook (:func:`memzoi.ledger.set_commit_hook`), so every ledgered
    change and undo of this process leaves the project store's index current. Idempotent; called by the composition
    roots (the CLI, the language server, the MCP server), never on import."""
    set_commit_hook(sync_index)
