"""Create a pending tombstone proposal packet for a record, as one ledgered change (see :mod:`.supersede`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..judge.policy import FIELD_LIMIT
from ..ledger import ChangeResult, Refusal, run_change
from ..safety.controls import control_spans
from .common import record_ref
from .propose import screen_actor, screen_text
from .rejections import query_index
from .supersede import plan_packet


def propose_tombstone(
    project_root: str | os.PathLike[str],
    record: str,
    *,
    reason: str,
    actor: str,
    source: str = "cli",
    previewed: str | None = None,
) -> ChangeResult:
    """Create a pending packet proposing to tombstone ``record`` (id or path) for ``reason``.

    Raises :class:`~memzoi.ledger.Refusal` when the record is missing, inactive or invalid, the reason is empty,
    or the record changed since the preview ``previewed`` was shown (``preview_stale``).
    """
    return run_change(
        project_root,
        lambda root: plan_packet(root, record, action="tombstone", title=None, body=None, reason=reason, actor=actor),
        actor=actor,
        source=source,
        previewed=previewed,
    )


def _pending_tombstone(root: Path, record_id: str) -> str | None:
    """The id of a pending tombstone packet of ``record_id``, else ``None`` (from the workspace index)."""
    rows = query_index(
        root,
        "SELECT coalesce(file_id, id, path), targets FROM proposals WHERE role = 'pending' AND action = 'tombstone'",
        (),
    )
    for ident, targets in rows:
        try:
            if record_id in json.loads(targets or "[]"):
                return str(ident)
        except ValueError:
            continue
    return None


def propose_agent_tombstone(
    project_root: str | os.PathLike[str], record: str, *, reason: str, actor: str, source: str = "mcp"
) -> ChangeResult:
    """An agent's proposal to retire the active record ``record`` (an id) for ``reason``: the packet
    :func:`propose_tombstone` writes (``tombstone-<record>``, the body ``Tombstone `<id>`: <reason>``), after the
    checks every agent proposal gets: a one-line reason without control characters, within Memzoi's field limit,
    that no content detector flags, from a client name no detector flags, and no pending tombstone of the same
    record. Raises :class:`Refusal` (``reason_required``, ``invalid_value``, ``control_character``,
    ``candidate_too_large``, ``target_missing``, ``duplicate_content``) or :class:`~.propose.Blocked`."""
    root = Path(project_root).resolve()
    reason = (reason or "").strip()
    if not reason:
        raise Refusal("reason_required", "a tombstone needs the reason the record is wrong or obsolete")
    if "\n" in reason:
        raise Refusal("invalid_value", "the reason must be a single line")
    for name, value in (("reason", reason), ("target", record)):
        if control_spans(value, breaks=False):
            raise Refusal("control_character", f"{name} holds a control character (U+0000-U+001F); remove it")
    if len(reason.encode("utf-8", "surrogatepass")) > FIELD_LIMIT:
        raise Refusal("candidate_too_large", f"the reason is over Memzoi's limit of {FIELD_LIMIT} bytes per field")
    screen_actor(actor)
    screen_text(reason, "the reason")
    record_id = record_ref(root, record, what="`target`")
    pending = _pending_tombstone(root, record_id)
    if pending:
        raise Refusal(
            "duplicate_content",
            f"a tombstone of `{record_id}` is already pending as `{pending}`, "
            "awaiting human review; nothing was written",
        )
    return propose_tombstone(root, record_id, reason=reason, actor=actor, source=source)
