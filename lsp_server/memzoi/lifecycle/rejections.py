"""What a proposer must know before proposing again: the same content already active, pending or rejected.

Memzoi's duplicate check compares trimmed-body BLAKE3 values (``content_hash``, reference §1.3, the
``duplicate_content_hash`` issue of its proposal inbox); this module applies it to agent proposals against the
workspace index:

* an **active record** with the body: refused, and the advice is to propose a supersede of that record;
* a **pending packet** with the body: refused, and the advice is to wait for the human decision (an agent cannot
  change a pending packet; a supersede can only target an active record);
* a **rejected packet** with the body (``.memzoi/proposals/resolved/rejected/``, repo-safe packets keep their
  content there, Memzoi ``reject.rs``): refused with the earlier decision (``rejected``: id, reason, who and when),
  so the same content does not come back as ``…-2`` for a reviewer to reject twice. A redacted hash receipt
  keeps no content, so it matches nothing.

:func:`rejected_packets` lists the rejected packets with their content fingerprint and reason, for
``list_pending(include_resolved=True)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..judge import analysis
from ..judge.revision import content_hash
from ..ledger import Refusal
from ..safety.redact import scrub
from .common import REJECTED
from .reject import RECEIPT_TITLE


class Duplicate(Refusal):
    """``duplicate_content``: the body is already ``existing`` (an id). ``extra`` holds the structured facts a tool
    result carries (``existing``, ``existing_kind`` and, for a rejected packet, ``rejected``)."""

    def __init__(self, message: str, extra: dict[str, Any]) -> None:
        super().__init__("duplicate_content", message)
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        """``{"error": {"code": "duplicate_content", "message", "existing", …}}``."""
        out = super().to_json()
        out["error"].update(self.extra)
        return out


def query_index(root: Path, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` over the workspace index of ``root``, refreshed first (only changed files are re-read;
    an outdated schema is rebuilt). Raises :class:`Refusal` ``index_unavailable``."""
    from ..stores.index import Index, IndexUnavailable  # noqa: PLC0415 lazy: start-up

    try:
        with Index(root, workers=1) as index:
            if index.schema_problem:
                index.rebuild()
            else:
                index.refresh()
            return index.db.execute(sql, params).fetchall()
    except IndexUnavailable as err:
        raise Refusal("index_unavailable", f"cannot check for duplicates: {err}") from None


def _resolution(root: Path, rel: str) -> dict[str, Any]:
    """The ``resolution`` block of the resolved packet at ``rel`` (``{}`` when it cannot be read)."""
    try:
        data = analysis.analyze_path(root / rel).document.data
    except OSError:
        return {}

    block = data.get("resolution") if isinstance(data, dict) else None
    # a human wrote the reason; it is shown to agents, so whatever a detector flags in it is scrubbed
    return {k: scrub(v) for k, v in block.items() if isinstance(v, str)} if isinstance(block, dict) else {}


def _rejected_entry(root: Path, row: tuple[Any, ...]) -> dict[str, Any]:
    path, ident, title, action, fingerprint = row
    res = _resolution(root, path)
    receipt = title == RECEIPT_TITLE  # Memzoi's redacted hash receipt: its body is not the proposal's content
    return {
        "id": ident,
        "path": path,
        "title": title,
        "action": action,
        "fingerprint": None if receipt else fingerprint,
        "redacted": receipt,
        "reason": res.get("reason"),
        "resolved_by": res.get("resolved_by"),
        "resolved_at": res.get("resolved_at"),
    }


def rejected_packets(root: Path) -> list[dict[str, Any]]:
    """The rejected packets, newest decision first: ``{id, path, title, action, fingerprint (the trimmed body's
    BLAKE3, Memzoi's content hash; ``None`` for a redacted hash receipt, ``redacted: true``), reason, resolved_by,
    resolved_at}``. Titles come from the index (scrubbed of
    anything a detector flags). Raises :class:`Refusal` ``index_unavailable``."""
    rows = query_index(
        root,
        "SELECT path, coalesce(file_id, id, path), title, action, content_hash FROM proposals "
        "WHERE role = 'rejected' ORDER BY path",
        (),
    )
    out = [_rejected_entry(root, r) for r in rows if r[0].startswith(REJECTED + "/")]
    return sorted(out, key=lambda e: e["resolved_at"] or "", reverse=True)


def duplicate_of(root: Path, body: str) -> Duplicate | None:
    """The refusal for a proposal of ``body`` when an active record, a pending packet or a rejected packet holds
    the same trimmed body (see the module docstring), else ``None``. Raises :class:`Refusal` ``index_unavailable``."""
    wanted = content_hash(body)
    rows = query_index(
        root,
        "SELECT 'record', coalesce(id, path), path FROM records WHERE content_hash = ? AND status = 'active' "
        "UNION ALL SELECT role, coalesce(file_id, id, path), path FROM proposals WHERE content_hash = ? "
        "AND role IN ('pending', 'rejected')",
        (wanted, wanted),
    )
    order = {"record": 0, "pending": 1, "rejected": 2}
    if not rows:
        return None
    kind, ident, path = min(rows, key=lambda r: order.get(r[0], 3))
    extra: dict[str, Any] = {"existing": ident, "existing_kind": kind, "fingerprint": wanted}
    if kind == "record":
        return Duplicate(
            f"the same body is already the active record `{ident}`; nothing was written. If it needs "
            f"to change, propose a supersede of it (action `supersede`, target `{ident}`) or a "
            "tombstone",
            extra,
        )
    if kind == "pending":
        return Duplicate(
            f"the same body is already the pending proposal `{ident}`, awaiting human review; nothing "
            "was written. Agents cannot change a pending proposal: wait for the decision "
            "(list_pending shows it), then propose a supersede of the record it becomes",
            extra,
        )
    rejected = _rejected_entry(root, (path, ident, None, None, wanted))
    for key in ("title", "action", "redacted"):
        rejected.pop(key)
    extra["rejected"] = rejected
    why = f": {rejected['reason']}" if rejected.get("reason") else ""
    who = f" by {rejected['resolved_by']}" if rejected.get("resolved_by") else ""
    return Duplicate(
        f"the same body was proposed as `{ident}` and rejected{who}{why}; nothing was written. Do not "
        "propose it again unless what you propose answers that reason (then it is different content)",
        extra,
    )
