"""Agent proposals: a memory proposed by an agent becomes a pending packet (``repo``) for human review.

This is the only mutation an agent has (Zuno: "memory_propose is the only model-visible mutation entry point";
Memzoi: agents may read and propose, humans approve, approval is not application). A ``repo`` proposal is one
ledgered change that creates ``.memzoi/proposals/pending/<id>.md`` in Memzoi's current packet format
(reference §2.2, ``render_okf_create_proposal_markdown``): ``create``, or ``supersede`` of one active record.

Before anything is written or stored (not even a ledger row):

* values are checked (non-empty title, body and one-line reason; Memzoi's type and lane; confidence in [0, 1]);
* sizes are checked at Memzoi's candidate limit (reference §3.2: any field over 512 KiB, all over 2 MiB:
  ``candidate_too_large``);
* the packet is rendered and analysed exactly as ``memzoi check`` would analyse the file: the git-plane gate and
  every content detector run, and any blocking finding (:func:`~memzoi.lifecycle.common.errors`) refuses it with
  :class:`Blocked`, whose message lists reason codes only, never the matched text;
* a body whose trimmed text equals an active record's, a pending packet's or a rejected packet's (Memzoi's
  duplicate check compares trimmed-body BLAKE3 values) is refused with ``duplicate_content`` naming the existing
  id, with advice that fits it and, for a rejected one, the earlier decision (:mod:`.rejections`).

Control characters, retention facts per lane and the packet id (``mcp-<title slug>``, with a short suffix only
when that id is taken) are :mod:`memzoi.lifecycle.proposal_checks`'s.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from pydantic import ValidationError

from ..base.findings import CODES
from ..judge import analysis
from ..judge.policy import AGGREGATE_LIMIT, FIELD_LIMIT
from ..ledger import ChangePlan, ChangeRecord, ChangeResult, FileChange, Refusal, history, now_utc, run_change
from ..models.common import Lane, MemoryType, RelativePath
from ..read.render import description_of, render_packet
from ..safety import MAX_SCAN_BYTES, collect_hits, scan_complete
from .common import PENDING, errors, resolved_identities, verified
from .proposal_checks import base_id, check_controls, check_retention, readable_id, retention_for
from .proposal_target import check_record_free, load_proposal_target
from .readiness import title_too_long
from .rejections import duplicate_of

if TYPE_CHECKING:
    from pydantic import TypeAdapter

#: The ledger operation of a proposal made by an agent.
OPERATION = "propose"
_TYPES: tuple[str, ...] = get_args(MemoryType)
_LANES: tuple[str, ...] = get_args(Lane)


class Blocked(Refusal):
    """The gate or a content detector blocks the candidate. ``codes`` are the sorted reason codes; the message
    names only codes and never the matched text."""

    def __init__(self, codes: list[str], what: str = "the proposal") -> None:
        super().__init__("blocked", f"{what} is blocked by {', '.join(codes)}; nothing was written. {_advice(codes)}")
        self.codes = codes

    def to_json(self) -> dict[str, Any]:
        """``{"error": {"code": "blocked", "message", "reasons": [codes]}}``."""
        out = super().to_json()
        out["error"]["reasons"] = self.codes
        return out


def _advice(codes: list[str]) -> str:
    """What to do about the blocking ``codes``: the advice of each kind present (content, gate, file format)."""
    groups = {CODES.get(c, (None, "schema"))[1] for c in codes}
    out = []
    if "detector" in groups:
        out.append("Secrets, personal data, instruction-like text and invisible characters must go")
    if "gate" in groups:
        out.append("the git-plane gate refuses what must not be committed (private, temporary or oversized content)")
    if groups - {"detector", "gate"}:
        out.append("the packet would not be a valid Memzoi file (a field value breaks Memzoi's rules)")
    return "; ".join(out) + ". docs/diagnostics.md explains every code; fix what each names and propose again"


@dataclass(frozen=True)
class Draft:
    """A proposed memory as an agent states it. ``confidence`` is a number in [0, 1]; ``supersedes`` is the id of
    an active record the new one replaces (``None`` for a new memory); ``occurred_at`` (episodic lane) and
    ``started_at`` (session lane) are Memzoi's retention facts, RFC 3339 (default: the creation time)."""

    title: str
    body: str
    type: str
    lane: str
    reason: str
    confidence: float
    tags: list[str] = field(default_factory=list)
    applies_to: list[str] = field(default_factory=list)
    source_ref: str | None = None
    supersedes: str | None = None
    occurred_at: str | None = None
    started_at: str | None = None


def check_values(draft: Draft) -> None:
    """Value checks shared by every destination. Raises :class:`Refusal` (``invalid_value``, ``empty_body``,
    ``reason_required``, ``control_character``, ``unsafe_path``, ``candidate_too_large``)."""
    if not draft.title.strip():
        raise Refusal("invalid_value", "the title must not be empty")
    if "\n" in draft.title.strip():
        raise Refusal("invalid_value", "the title must be a single line")
    if not draft.body.strip():
        raise Refusal("empty_body", "the body must not be empty")
    if not draft.reason.strip():
        raise Refusal("reason_required", "give the reason this should be remembered")
    if "\n" in draft.reason.strip():
        raise Refusal("invalid_value", "the reason must be a single line")
    if draft.type not in _TYPES:
        raise Refusal("invalid_value", f"type must be one of {', '.join(_TYPES)}")
    if draft.lane not in _LANES:
        raise Refusal("invalid_value", f"lane must be one of {', '.join(_LANES)}")
    if not (
        isinstance(draft.confidence, (int, float))
        and math.isfinite(draft.confidence)
        and 0.0 <= draft.confidence <= 1.0
    ):
        raise Refusal("invalid_value", "confidence must be a number from 0 to 1")
    check_controls(draft)
    check_retention(draft)
    for i, path in enumerate(draft.applies_to):
        if _bad_path(path):  # Memzoi's rule for applies_to and scope.paths (message without the value)
            raise Refusal(
                "unsafe_path",
                f"applies_to[{i}] must be a repository-relative path without `..`, `.` or "
                "a root or drive prefix (`dir/**` for a subtree)",
            )
    check_size(draft)


@functools.cache
def _path_adapter() -> TypeAdapter[str]:  # of RelativePath, an Annotated str
    from pydantic import TypeAdapter  # noqa: PLC0415 lazy: start-up - pydantic loads its type_adapter on first use

    return TypeAdapter(RelativePath)


def _bad_path(path: str) -> bool:
    try:
        _path_adapter().validate_python(path)
    except ValidationError:
        return True
    return False


def screen_actor(actor: str) -> None:
    """Refuse an actor (an MCP client's self-declared name) that any content detector flags: it is stored with
    what it proposes, in the packet, the ledger or the local candidate. Raises :class:`Blocked` naming codes only."""
    screen_text(actor, "the client name")


def screen_text(text: str, what: str) -> None:
    """Refuse ``text`` (``what`` names it in the message) that any content detector flags. Raises
    :class:`Blocked` naming codes only."""
    codes = sorted({h.code for h in collect_hits(text) if CODES.get(h.code, (None, ""))[1] == "detector"})
    if codes:
        raise Blocked(codes, what)


def check_size(draft: Draft) -> None:
    """Memzoi's candidate limit (reference §3.2): any field over 512 KiB of UTF-8, or all together over 2 MiB,
    gives ``candidate_too_large``."""
    fields = [
        draft.title,
        draft.body,
        draft.reason,
        draft.source_ref or "",
        draft.supersedes or "",
        *draft.tags,
        *draft.applies_to,
    ]
    sizes = [len(f.encode("utf-8", "surrogatepass")) for f in fields]
    if max(sizes) > FIELD_LIMIT or sum(sizes) > AGGREGATE_LIMIT:
        raise Refusal(
            "candidate_too_large",
            f"the proposal is {sum(sizes)} bytes (largest field {max(sizes)}); "
            f"Memzoi's limit is {FIELD_LIMIT} bytes per field and {AGGREGATE_LIMIT} in all: keep only "
            "the durable fact",
        )


def proposal_id(draft: Draft) -> str:
    """The id ``draft`` gets when it is free: ``mcp-<slug of the title>`` (:func:`~.proposal_checks.base_id`)."""
    return base_id(draft.title)


def _source(ref: str) -> dict[str, str]:
    return {"url": ref} if "://" in ref else {"ref": ref}


def packet_data(draft: Draft, packet_id: str, *, actor: str, now: str, target: dict[str, Any] | None) -> dict[str, Any]:
    """The packet frontmatter (reference §2.2 order is applied by the renderer). ``target`` is the superseded
    record's data, whose scope the packet keeps."""
    proposal: dict[str, Any] = {
        "action": "supersede" if draft.supersedes else "create",
        "proposed_by": actor,
        "proposed_at": now,
        "reason": draft.reason.strip(),
        "confidence": format(float(draft.confidence), "g"),
    }
    scope: dict[str, Any] = {"kind": target["scope"] if target else "repo"}
    if target and target.get("scope_id"):
        scope["id"] = target["scope_id"]
    if draft.applies_to:
        scope["paths"] = [p.strip() for p in draft.applies_to]
    return {
        "id": packet_id,
        "kind": "proposal",
        "profile": "memzoi",
        "type": draft.type,
        "lane": draft.lane,
        "title": draft.title.strip(),
        "description": description_of(draft.body),
        "status": "proposed",
        "proposal": proposal,
        "scope": scope,
        "tags": [t.strip() for t in draft.tags] or None,
        "timestamp": now,
        "created_by": actor,
        "sources": [_source(draft.source_ref.strip())] if draft.source_ref else None,
        "supersedes": [draft.supersedes] if draft.supersedes else [],
        "sensitivity": "repo-safe",
        "content_class": "general_repo_knowledge",
        "retention": retention_for(draft, now, target),
        "origin": {"origin_key": f"repository-proposal:{packet_id}", "route": "repository_proposal"},
    }


def check_scannable(text: str, what: str = "the proposal") -> None:
    """Refuse ``text`` (a would-be file or stored text) that the content detectors cannot check whole: above
    :data:`memzoi.safety.MAX_SCAN_BYTES` only Memzoi's rules run, and a missing finding of ours would be read as
    clean. Raises :class:`Refusal` ``candidate_too_large`` (the limit is Memzoi's for one file)."""
    if not scan_complete(text):
        size = len(text.encode("utf-8", "surrogatepass"))
        raise Refusal(
            "candidate_too_large",
            f"{what} would be {size} bytes, over the {MAX_SCAN_BYTES}-byte limit "
            "of one file (Memzoi's, and the most the content detectors check whole); nothing was written. "
            "Keep only the durable fact",
        )


def screen(root: Path, rel: str, text: str) -> None:
    """Run the gate and every content detector over the would-be file ``text`` at ``rel`` (the same analysis as
    ``memzoi check``). Raises :class:`Refusal` (``candidate_too_large``, :func:`check_scannable`) or
    :class:`Blocked` listing every blocking code."""
    check_scannable(text, "the packet")
    codes = sorted({f.code for f in errors(analysis.analyze_text(text, root / rel))})
    if codes:
        raise Blocked(codes)


def find_duplicate(root: Path, body: str) -> str | None:
    """The id (or path) of an active record, pending packet or rejected packet whose trimmed body equals
    ``body``'s, else ``None`` (:func:`~.rejections.duplicate_of`)."""
    dup = duplicate_of(root, body)
    return dup.extra["existing"] if dup else None


def plan_propose(root: Path, draft: Draft, *, actor: str) -> ChangePlan:
    """Validate ``draft`` and compute the new pending packet. Raises :class:`Refusal` or :class:`Blocked`."""
    check_values(draft)
    check_title_fits(draft.title)
    now = now_utc(precise=False)
    target = None
    if draft.supersedes:
        target = load_proposal_target(root, draft.supersedes).data
    base = proposal_id(draft)
    data = packet_data(draft, base, actor=actor, now=now, target=target)
    body = draft.body.strip()
    rel = f"{PENDING}/{base}.md"
    screen(root, rel, render_packet(data, body))  # before any read of the index or the ledger
    duplicate = duplicate_of(root, body)
    if duplicate:
        raise duplicate
    check_record_free(root, draft.title, target_id=draft.supersedes)
    packet_id = readable_id(root, draft.title, resolved_identities(root))
    if packet_id != base:
        data = packet_data(draft, packet_id, actor=actor, now=now, target=target)
        rel = f"{PENDING}/{packet_id}.md"
    text = verified(root, rel, render_packet(data, body), data, body)
    details = {"proposal_id": packet_id, "proposal_path": rel, "client": actor}
    if draft.supersedes:
        details["record_id"] = draft.supersedes
    return ChangePlan(
        OPERATION,
        [FileChange(rel, None, text)],
        reason=draft.reason.strip(),
        summary=f"propose {data['proposal']['action']} {packet_id}",
        details=details,
    )


def check_title_fits(title: str) -> None:
    """Refuse (``title_too_long``) a repository proposal whose record file name could never be written: its
    pending packet would show as applicable and then fail, and a pending packet's title cannot be changed."""
    blocker = title_too_long(title.strip(), pending=False)
    if blocker is not None:
        raise Refusal(blocker.code, blocker.message)


def propose_packet(
    project_root: str | os.PathLike[str], draft: Draft, *, actor: str, source: str = "mcp"
) -> ChangeResult:
    """Create the pending packet for ``draft`` as one ledgered change (see module docstring). The gate and
    detectors run before the lock is taken, so a blocked candidate leaves no trace at all; they run again on the
    final bytes under the lock. Raises :class:`Refusal` / :class:`Blocked` with nothing written."""
    root = Path(project_root).resolve()
    check_values(draft)
    check_title_fits(draft.title)
    screen_actor(actor)
    probe = packet_data(draft, proposal_id(draft), actor=actor, now=now_utc(precise=False), target=None)
    screen(root, f"{PENDING}/{probe['id']}.md", render_packet(probe, draft.body.strip()))
    return run_change(root, lambda r: plan_propose(r, draft, actor=actor), actor=actor, source=source)


def mcp_provenance(change: ChangeRecord | None) -> str | None:
    """``proposed by <client> via MCP at <time>: <reason>`` when ``change`` is the MCP proposal that created a
    packet, else ``None`` (shown by the editor's hover)."""
    if change is None or change.source != "mcp" or change.operation != OPERATION:
        return None
    when = change.applied_at or change.created_at
    text = f"proposed by {change.actor} via MCP at {when}"
    return f"{text}; reason: {change.reason}" if change.reason else text


def proposal_origin(project_root: str | os.PathLike[str], proposal_id: str) -> dict[str, Any] | None:
    """What the ledger knows of how the pending packet ``proposal_id`` came to be, or ``None`` when it has no
    record of it (another clone made it, or a human wrote the file): ``{"proposed_via": source, "proposed_by":
    actor, "proposed_at", "reason", "change_id", "statement"}`` of the change that created
    ``.memzoi/proposals/pending/<id>.md``; ``statement`` is ``proposed by <client> via MCP at <time>: …`` for an
    MCP proposal. Read-only; these are ledger facts, not fields of the record (Memzoi writes none of them)."""
    created = [
        c
        for c in history(project_root, f"{PENDING}/{proposal_id}.md")
        if any(f.path == f"{PENDING}/{proposal_id}.md" and f.before is None for f in c.files)
    ]
    if not created:
        return None
    change = created[-1]  # newest first: the oldest creation is the proposal
    when = change.applied_at or change.created_at
    return {
        "proposed_via": change.source,
        "proposed_by": change.actor,
        "proposed_at": when,
        "reason": change.reason,
        "change_id": change.id,
        "operation": change.operation,
        "statement": mcp_provenance(change) or f"proposed by {change.actor} via {change.source} at {when}",
    }
