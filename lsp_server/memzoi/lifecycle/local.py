"""Private local records (Memzoi's ``local`` destination) and routing a pending proposal to local memory.

Local records live only in the runtime plane: rows of the ledger database, never files under ``.memzoi/``.
Each one is written by a ledgered change and is visible exactly while that change is ``applied`` (undoing the
change hides it again), so adding a local record and routing a proposal are at-most-once like every other write.
Reading them (``list_local``, ``get_local``, ``search_local``) is :mod:`memzoi.ledger.local_records`, which
needs none of the lifecycle.

Routing a pending proposal (``route-local``) is one change: its title and body become a private local record,
and the packet is resolved as rejected with the reason ``routed to local memory`` (archived as Memzoi's redacted
hash receipt when it is not repo-safe, so its content never reaches git). Secrets are never stored, not even
locally: a packet classified ``secret`` or carrying a credential or personal-identifier finding
(:data:`~memzoi.lifecycle.readiness.CREDENTIAL_CODES`) is refused. An e-mail address or phone number in prose
(``private_personal_data``) is accepted: Memzoi keeps that class out of the git plane and routes it here.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, NotRequired, TypedDict, get_args

from ..judge import analysis
from ..judge.revision import duplicate_key
from ..ledger import ChangePlan, ChangeResult, Refusal, now_utc, run_change
from ..ledger.local_records import VISIBLE, list_local
from ..models.common import Lane, MemoryType
from ..read.render import render_record
from .common import concept_slug, load_pending_packet, packet_rel
from .readiness import (
    CREDENTIAL_CODES as CREDENTIAL_CODES,  # also imported from here
    never_stored,
    readiness,
)
from .reject import rejection_files

ROUTED_REASON = "routed to local memory"
_TYPES: tuple[str, ...] = get_args(MemoryType)
_LANES: tuple[str, ...] = get_args(Lane)


def _fresh_id(conn: sqlite3.Connection, base: str) -> str:
    base = base or "local-memory"
    taken = {r[0] for r in conn.execute(VISIBLE.replace("SELECT l.*", "SELECT l.id"))}
    n = 1
    while True:
        cand = base if n == 1 else f"{base}-{n}"
        if cand not in taken:
            return cand
        n += 1


class LocalRecordValues(TypedDict):
    """The values of one new ``local_record`` row (the ledger's table of private local records); ``id`` is the
    wanted id, made unique when the row is inserted, and the lists are stored as JSON."""

    id: str
    type: str
    lane: str
    title: str
    body: str
    sensitivity: str
    content_class: str
    tags: NotRequired[list[str] | None]
    applies_to: NotRequired[list[str]]
    source_kind: NotRequired[str | None]
    source_ref: NotRequired[str | None]
    proposal_id: NotRequired[str | None]


def _insert(values: LocalRecordValues) -> Callable[[sqlite3.Connection, str], None]:
    def effect(conn: sqlite3.Connection, change_id: str) -> None:
        rid = _fresh_id(conn, values["id"])
        conn.execute(
            "INSERT INTO local_record (id, change_id, type, lane, title, body, tags_json, applies_to_json, sensitivity,"
            " content_class, source_kind, source_ref, proposal_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rid,
                change_id,
                values["type"],
                values["lane"],
                values["title"],
                values["body"],
                json.dumps(values.get("tags") or []),
                json.dumps(values.get("applies_to") or []),
                values["sensitivity"],
                values["content_class"],
                values.get("source_kind"),
                values.get("source_ref"),
                values.get("proposal_id"),
                now_utc(),
            ),
        )

    return effect


def _check_local(title: str, body: str, type_: str, lane: str) -> None:
    if not title.strip():
        raise Refusal("invalid_value", "a local record needs a non-empty title")
    if not body.strip():
        raise Refusal("empty_body", "a local record needs a non-empty body")
    if type_ not in _TYPES:
        raise Refusal("invalid_value", f"type must be one of {', '.join(_TYPES)}")
    if lane not in _LANES:
        raise Refusal("invalid_value", f"lane must be one of {', '.join(_LANES)}")


def content_codes(title: str, body: str, *, among: frozenset[str]) -> list[str]:
    """Sorted codes in ``among`` that the content detectors report on ``title`` and ``body`` (rendered as a
    record so every analyser sees them)."""
    probe = render_record(
        {
            "id": "local-probe",
            "kind": "memory",
            "profile": "memzoi",
            "type": "fact",
            "lane": "semantic",
            "title": title.strip() or "untitled",
            "timestamp": "1970-01-01T00:00:00Z",
            "status": "active",
            "scope": "repo",
            "visibility": "repo",
            "content_class": "general_repo_knowledge",
            "confidence": 1.0,
            "retention": {},
            "origin": {"origin_key": "local-probe", "route": "local_memory"},
        },
        body or "-",
    )
    return sorted({f.code for f in analysis.analyze_text(probe, None).findings if f.code in among})


def _check_no_credentials(title: str, body: str) -> None:
    codes = content_codes(title, body, among=CREDENTIAL_CODES)
    if codes:
        raise Refusal(
            codes[0],
            never_stored("the content", codes, "remove it and retry"),
        )


def add_local(
    project_root: str | os.PathLike[str],
    *,
    title: str,
    body: str,
    type: str = "fact",
    lane: str = "semantic",
    tags: list[str] | None = None,
    actor: str,
    source: str = "cli",
    sensitivity: str = "local-only",
    content_class: str = "local_only_state",
) -> ChangeResult:
    """Store a private local record as one ledgered change with no file. Raises :class:`Refusal` on invalid
    values or credential findings."""
    _check_local(title, body, type, lane)
    _check_no_credentials(title, body)
    values: LocalRecordValues = {
        "id": concept_slug(title),
        "type": type,
        "lane": lane,
        "title": title.strip(),
        "body": body.strip(),
        "tags": tags,
        "sensitivity": sensitivity,
        "content_class": content_class,
        "source_kind": "cli",
    }

    def plan(root: Path) -> ChangePlan:
        _refuse_duplicate(root, values["title"], values["body"])  # under the lifecycle lock: no race with another add
        return ChangePlan(
            "local_add",
            [],
            summary=f"add local record {values['id']}",
            details={"local_record": values["id"]},
            db_effects=_insert(values),
        )

    return run_change(project_root, plan, actor=actor, source=source)


def _refuse_duplicate(root: Path, title: str, body: str) -> None:
    """Refuse a local record whose title and content (:func:`~memzoi.judge.revision.duplicate_key`: line endings and
    trailing whitespace do not count) equal a visible one's, naming it: adding the same memory twice would
    otherwise make ``<id>-2``."""
    key = duplicate_key(body)
    for rec in list_local(root):
        if rec.title.strip() == title and duplicate_key(rec.body) == key:
            raise Refusal(
                "duplicate_content", f"local record `{rec.id}` already holds this title and content; nothing was added"
            )


def plan_route_local(root: Path, packet: str | os.PathLike[str], actor: str) -> ChangePlan:
    """Validate a pending packet for routing and compute the change (receipt or resolved packet + local row)."""
    rel = packet_rel(root, packet)
    loaded = load_pending_packet(root, rel)
    doc = loaded.analysis.document
    data = doc.data or {}
    raw_title = data.get("title")
    title = raw_title if isinstance(raw_title, str) else ""
    body = doc.body
    verdict = readiness(
        loaded.analysis.findings,
        sensitivity=data.get("sensitivity"),
        has_content=bool(title.strip() and body.strip()),  # else a route blocker: a title is present below
    )
    if verdict.route_blockers:
        first = verdict.route_blockers[0]
        raise Refusal(first.code, f"{rel}: {first.message}", rel)
    raw_type, raw_lane = data.get("type"), data.get("lane")
    type_ = raw_type if isinstance(raw_type, str) and raw_type in _TYPES else "fact"
    lane = raw_lane if isinstance(raw_lane, str) and raw_lane in _LANES else "semantic"
    tags = [t for t in data.get("tags") or [] if isinstance(t, str)] if isinstance(data.get("tags"), list) else []
    raw_scope = data.get("scope")
    scope: dict[str, Any] = raw_scope if isinstance(raw_scope, dict) else {}
    paths = [p for p in scope.get("paths") or [] if isinstance(p, str)] if isinstance(scope.get("paths"), list) else []
    files, details = rejection_files(root, rel, reason=ROUTED_REASON, actor=actor)
    values: LocalRecordValues = {
        "id": concept_slug(title) or "local-memory",
        "type": type_,
        "lane": lane,
        "title": title.strip(),
        "body": body,
        "tags": tags,
        "applies_to": paths,
        "sensitivity": str(data.get("sensitivity") or "unknown"),
        "content_class": str(data.get("content_class") or "unknown"),
        "source_kind": "proposal",
        "proposal_id": data.get("id") if isinstance(data.get("id"), str) else None,
    }
    details = {**details, "local_record": values["id"]}
    return ChangePlan(
        "route_local",
        files,
        reason=ROUTED_REASON,
        summary=f"route proposal {details['proposal_id']} to local memory",
        details=details,
        db_effects=_insert(values),
    )


def route_local(
    project_root: str | os.PathLike[str], packet: str | os.PathLike[str], *, actor: str, source: str = "cli"
) -> ChangeResult:
    """Route the pending packet ``packet`` to local memory as one ledgered change (see module docstring)."""
    return run_change(project_root, lambda root: plan_route_local(root, packet, actor), actor=actor, source=source)
