"""Private local records (Memzoi's ``local`` destination) as the ledger holds them: the read side (:func:`list_local`,
:func:`get_local`, :func:`search_local`). Writing them, and what a local record may hold, is
:mod:`memzoi.lifecycle.local`; reading them needs none of the lifecycle, so ``search_memory`` (a session's first
MCP call) and ``get_memory`` read them without importing it (about 18 ms of CPU at the first call, issue 29).

A local record is a row of the ledger database, visible exactly while the change that wrote it is ``applied``.
Nothing here creates a ledger: a project without one has no local records.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .reading import read_ledger
from .store import Ledger


@dataclass
class LocalRecord:
    """A private local record: runtime plane only."""

    id: str
    type: str
    lane: str
    title: str
    body: str
    tags: list[str]
    applies_to: list[str]
    sensitivity: str
    content_class: str
    source_kind: str | None
    source_ref: str | None
    proposal_id: str | None
    created_at: str
    change_id: str

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON (``destination: local``)."""
        return {"destination": "local", **self.__dict__}


#: Local records whose change is applied: undoing (or failing) the change hides the record.
VISIBLE = "SELECT l.* FROM local_record l JOIN change c ON c.id = l.change_id WHERE c.status = 'applied'"


def _row(r: sqlite3.Row) -> LocalRecord:
    return LocalRecord(
        id=r["id"],
        type=r["type"],
        lane=r["lane"],
        title=r["title"],
        body=r["body"],
        tags=json.loads(r["tags_json"]),
        applies_to=json.loads(r["applies_to_json"]),
        sensitivity=r["sensitivity"],
        content_class=r["content_class"],
        source_kind=r["source_kind"],
        source_ref=r["source_ref"],
        proposal_id=r["proposal_id"],
        created_at=r["created_at"],
        change_id=r["change_id"],
    )


def _ledger(project_root: str | os.PathLike[str]) -> Ledger | None:
    ledger = Ledger.for_project(Path(project_root).resolve(), create=False)
    return ledger if ledger.exists else None


def list_local(project_root: str | os.PathLike[str]) -> list[LocalRecord]:
    """Visible local records, newest first."""
    ledger = _ledger(project_root)
    if ledger is None:
        return []
    return read_ledger(ledger, lambda conn: [_row(r) for r in conn.execute(VISIBLE + " ORDER BY l.rowid DESC")])


def get_local(project_root: str | os.PathLike[str], record_id: str) -> LocalRecord | None:
    """One visible local record by id, or ``None``."""
    ledger = _ledger(project_root)
    if ledger is None:
        return None

    def one(conn: sqlite3.Connection) -> LocalRecord | None:
        r = conn.execute(VISIBLE + " AND l.id = ? ORDER BY l.rowid DESC LIMIT 1", (record_id,)).fetchone()
        return None if r is None else _row(r)

    return read_ledger(ledger, one)


def search_local(project_root: str | os.PathLike[str], query: str, *, limit: int = 50) -> list[LocalRecord]:
    """Visible local records whose title, body or tags contain every word of ``query`` (case-insensitive),
    titles matches first."""
    words = [w.lower() for w in query.split() if w.strip()]
    records = list_local(project_root)
    hits = []
    for rec in records:
        hay = f"{rec.title}\n{rec.body}\n{' '.join(rec.tags)}".lower()
        if words and all(w in hay for w in words):
            score = sum(w in rec.title.lower() for w in words)
            hits.append((-score, rec))
    hits.sort(key=lambda h: h[0])
    return [r for _, r in hits[:limit]]


__all__ = ["VISIBLE", "LocalRecord", "get_local", "list_local", "search_local"]
