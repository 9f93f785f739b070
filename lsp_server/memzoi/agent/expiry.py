"""``memzoi expiry RECORD`` and MCP ``inspect_memory_expiry``: why a repository record is (or is not) eligible
for normal reads at an instant (Memzoi's ``ExpiryDiagnostic``, ``expiry.rs@164dcd6b``, reference §6).

The diagnostic is ``{record, evaluated_at, retention, current_assertion, exclusions, excluded_from_normal_reads,
reason}``: ``record`` in Memzoi's runtime record keys, ``retention`` the ``RetentionDecision`` (``state``,
``effective_boundary``, ``reason``), ``current_assertion`` a boolean, ``exclusions`` tagged by ``kind``
(:func:`memzoi.judge.retention.current_assertion`), and ``reason`` Memzoi's sentence ("included in ordinary reads: …" or
"excluded from ordinary reads by current-assertion exclusions: …"). Retention evaluation is not a lifecycle write
(Memzoi: "Memzoi leaves the record … unchanged during recall"): this only reads, through the workspace index.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ..judge.retention import current_assertion, format_instant
from ..ledger import Refusal
from .bounds import LEGACY, upgrade_hint
from .recall import Reader


def _loads(value: str | None) -> Any:
    return json.loads(value) if value else None


def record_json(row: dict[str, Any]) -> dict[str, Any]:
    """An index ``records`` row in Memzoi's runtime record keys (reference §8: ``id, record_id, type, lane,
    destination, scope_kind, visibility, status, title, body, source_kind, source_ref, proposal_id, created_at,
    updated_at, retention, origin, lineage``) plus ``path``, ``provenance: git`` and ``applies_to``."""
    return {
        "id": row["id"],
        "record_id": row["id"],
        "type": row["type"],
        "lane": row["lane"],
        "destination": "repo",
        "provenance": "git",
        "scope_kind": row["scope_kind"],
        "visibility": row["visibility"],
        "status": row["status"],
        "title": row["title"],
        "body": row["body"],
        "source_kind": row["source_kind"],
        "source_ref": row["source_ref"],
        "proposal_id": row["proposal_id"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "retention": _loads(row["retention_json"]) or {},
        "origin": _loads(row["origin_json"]),
        "lineage": _loads(row["lineage_json"]),
        "path": row["path"],
        "applies_to": _loads(row["applies_to"]) or [],
    }


def diagnose(row: dict[str, Any], evaluated_at: datetime) -> dict[str, Any]:
    """The ``ExpiryDiagnostic`` of an index ``records`` row at ``evaluated_at`` (timezone-aware). Raises
    :class:`Refusal` (``invalid_retention``: "record <id> has invalid retention facts", Memzoi's error) when the
    record's retention facts break its lane's rules: invalid facts never produce a third state."""
    at = format_instant(evaluated_at)
    record = record_json(row)
    decision = current_assertion(row["status"] or "", row["lane"] or "", record["retention"], evaluated_at)
    if decision.retention is None:
        raise Refusal(
            "invalid_retention",
            f"record {row['id']} has invalid retention facts ({row['path']}); fix "
            "its `retention` block (`memzoi check` names the fact), then ask again",
        )
    retention = {
        "state": decision.retention.state,
        "effective_boundary": decision.retention.boundary,
        "reason": decision.retention.reason,
    }
    exclusions = [
        {k: v for k, v in e.items() if not (k == "boundary" and e["kind"] != "retention")} for e in decision.exclusions
    ]
    if decision.is_current:
        reason = (
            f"included in ordinary reads: retention is {decision.retention.state} at {at} and no "
            "current-assertion exclusion applies"
        )
    else:
        reason = "excluded from ordinary reads by current-assertion exclusions: " + json.dumps(
            exclusions, separators=(",", ":")
        )
    return {
        "record": record,
        "evaluated_at": at,
        "retention": retention,
        "current_assertion": decision.is_current,
        "exclusions": exclusions,
        "excluded_from_normal_reads": not decision.is_current,
        "reason": reason,
    }


def inspect_expiry(root: Path, record_id: str, evaluated_at: datetime | None = None) -> dict[str, Any]:
    """The ``ExpiryDiagnostic`` of repository record ``record_id`` in the project at ``root`` at ``evaluated_at``
    (default: now). Raises :class:`Refusal` ``not_found`` for an unknown id (private runtime rows are not
    repository records: Memzoi's command is repository-only) and ``invalid_retention`` (:func:`diagnose`; for a
    legacy record, saying to upgrade it)."""
    with Reader(root) as r:
        row = r.index.record(record_id.strip())
        if row is None:
            raise Refusal(
                "not_found",
                f"no repository record `{record_id.strip()}`; list them with "
                "`memzoi search` (expiry explains repository records only)",
            )
        try:
            return diagnose(dict(row), evaluated_at or r.now)
        except Refusal as err:
            if err.code == "invalid_retention" and _legacy(r, row["path"]):
                # `memzoi check` names no retention fact of a legacy file, only legacy_profile: the fix is the upgrade
                raise Refusal(
                    "invalid_retention",
                    f"record {row['id']} is in an old Memzoi profile ({LEGACY}), whose retention block current Memzoi "
                    f"does not read; {upgrade_hint([LEGACY], row['path'])}, then ask again",
                ) from None
            raise


def _legacy(r: Reader, path: str) -> bool:
    """Whether the stored findings of ``path`` name ``legacy_profile``."""
    row = r.db.execute("SELECT findings FROM files WHERE path = ?", (path,)).fetchone()
    return bool(row and row[0]) and any(f["code"] == LEGACY for f in json.loads(row[0]))
