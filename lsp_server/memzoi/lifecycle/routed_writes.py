"""The writes of an apply that routes reviewed candidates (``memzoi import apply``, ``memzoi capture apply``;
Memzoi's import and capture apply results): each candidate goes to a pending proposal packet (``repo``, written as a
file of the change), a private local record (``local``) or a session checkpoint (``session``), both rows written by
the change's database effects, and each write is reported as one ``writes`` entry of the apply result.

Also the outcome of an apply with nothing to write: recorded under its operation id without a ledgered change.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..ledger import Ledger, now_utc
from . import checkpoints as cps, operations as ops
from .common import concept_slug


@dataclass(frozen=True)
class RoutedWrite:
    """One candidate to write. ``ref`` names it in its ``writes`` entry (``{"index": n}`` for an import,
    ``{"candidate_id": id}`` for a capture); ``destination`` is ``repo``, ``local`` or ``session``. A ``repo``
    write carries the packet's ``proposal_id`` and ``path`` (the packet is a file of the change); ``salt`` makes the
    checkpoint id of a ``session`` write unique; ``source_kind``/``source_ref`` are the local row's origin."""

    ref: dict[str, Any]
    destination: str
    title: str
    body: str
    type: str
    lane: str
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    sensitivity: str = "internal"
    source_kind: str = ""
    source_ref: str | None = None
    salt: str = ""
    proposal_id: str | None = None
    path: str | None = None


def write_routed(
    conn: sqlite3.Connection, change_id: str, routed: list[RoutedWrite], at: datetime
) -> list[dict[str, Any]]:
    """Write the runtime rows of ``routed`` in ``conn`` (the change ``change_id``'s database effects; ``at`` is the
    checkpoints' creation instant) and return the ``writes`` entries, in order: ``{"kind": "proposal_file", **ref,
    "proposal_id", "path"}`` or ``{"kind": "runtime_record", **ref, "record_id", "destination"}``. A local record's id
    is the title's concept slug, numbered when taken (``local-memory`` for a title without one)."""
    from .session_end import _fresh_local_id  # noqa: PLC0415 lazy: start-up

    taken: set[str] = set()
    writes: list[dict[str, Any]] = []
    for w in routed:
        if w.destination == "repo":
            writes.append({"kind": "proposal_file", **w.ref, "proposal_id": w.proposal_id, "path": w.path})
            continue
        if w.destination == "local":
            rid = _fresh_local_id(conn, concept_slug(w.title) or "local-memory", taken)
            _insert_local(conn, change_id, rid, w)
        else:  # every other runtime destination is the session plane
            values = cps.new_values(w.title, w.title, w.body, "note", at, salt=w.salt)
            cps.insert(conn, change_id, values)
            rid = values["id"]
        destination = "local" if w.destination == "local" else "session"
        writes.append({"kind": "runtime_record", **w.ref, "record_id": rid, "destination": destination})
    return writes


def _insert_local(conn: sqlite3.Connection, change_id: str, rid: str, w: RoutedWrite) -> None:
    conn.execute(
        "INSERT INTO local_record (id, change_id, type, lane, title, body, tags_json, applies_to_json, sensitivity,"
        " content_class, source_kind, source_ref, proposal_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            rid,
            change_id,
            w.type,
            w.lane,
            w.title,
            w.body,
            json.dumps(w.tags),
            json.dumps(w.paths),
            w.sensitivity,
            "unknown",
            w.source_kind,
            w.source_ref,
            None,
            now_utc(),
        ),
    )


def record_without_change(
    ledger: Ledger, operation_id: str, operation: str, fingerprint: str, out: dict[str, Any]
) -> dict[str, Any]:
    """Record ``out`` (an apply result with no writes) under ``operation_id`` in one transaction, or return the
    outcome already recorded for it (a replay, :mod:`.operations`). Raises ``operation_id_conflict`` as
    :func:`memzoi.lifecycle.operations.recorded` does."""
    with ledger.connect() as conn, ledger.transaction(conn):
        replay = ops.recorded(conn, operation_id, operation, fingerprint)
        if replay is not None:
            return replay
        ops.record(conn, operation_id, operation, fingerprint, out)
    return out
