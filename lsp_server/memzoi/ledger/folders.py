"""The folders a change creates, and taking them away again when the change is undone or rolled back.

A change that creates a file in a missing folder (the first apply makes ``proposals/resolved/applied/``, the
first reject ``resolved/rejected/``, a materialization its record's sub-folder) creates that folder, never wider
than the folder above it (:func:`memzoi.base.newfolders.make_folders`). Which folders those are is recorded with the
change (table ``change_folder``, schema 8), in the same transaction as its snapshots, before anything is written.
Whenever the change's files are back at their before bytes (a failed or drifted apply rolled back, an undo, a
recovery restoring the before bytes, a reconciliation finding an interrupted change at its before bytes), those
folders are removed again, deepest first, each only while it is empty: a folder holding anything else (a file
another change or a person put there) stays, and so does every folder the change found in place. A change
recorded by an earlier schema has no folder rows; its undo leaves the folders it made, as before.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .model import FileChange


def new_folders(root: Path, files: list[FileChange], *, forward: bool) -> list[Path]:
    """The folders writing ``files`` (forward: from before to after; else back) would create inside ``root``:
    the missing parents of the files it creates (e.g. ``proposals/resolved/rejected/``), deepest first."""
    out: set[Path] = set()
    for f in files:
        src, dst = (f.before, f.after) if forward else (f.after, f.before)
        if src is not None or dst is None:
            continue
        d = (root / f.path).parent
        while d != root and root in d.parents and not os.path.lexists(d):
            out.add(d)
            d = d.parent
    return sorted(out, key=lambda p: len(p.parts), reverse=True)


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` in the order given (deepest first), each only while it is an empty folder: anything
    another process put there meanwhile keeps its folder, and a symlink or a file is never touched."""
    for d in folders:
        try:
            if not d.is_symlink():
                os.rmdir(d)
        except OSError:
            pass


def record(conn: sqlite3.Connection, root: Path, change_id: str, folders: list[Path]) -> None:
    """Keep ``folders`` (absolute, inside ``root``) as the folders change ``change_id`` creates, as
    ``/``-separated paths relative to ``root``; run inside the transaction that records the change."""
    conn.executemany(
        "INSERT INTO change_folder (change_id, path) VALUES (?, ?)",
        [(change_id, d.relative_to(root).as_posix()) for d in folders],
    )


def recorded(conn: sqlite3.Connection, root: Path, change_id: str) -> list[Path]:
    """The folders change ``change_id`` recorded as created (absolute, deepest first; ``[]`` for a change recorded
    before schema 8). A stored path that leaves ``root`` is dropped, so a tampered row removes nothing outside."""
    rows = conn.execute("SELECT path FROM change_folder WHERE change_id = ?", (change_id,)).fetchall()
    out = []
    for (rel,) in rows:
        d = root.joinpath(*str(rel).split("/"))
        if ".." not in Path(rel).parts and root in d.parents:
            out.append(d)
    return sorted(out, key=lambda p: len(p.parts), reverse=True)


def remove_recorded(conn: sqlite3.Connection, root: Path, change_id: str) -> None:
    """Remove the folders change ``change_id`` created that are empty now (:func:`remove_empty`): its files are
    back at their before bytes."""
    remove_empty(recorded(conn, root, change_id))
