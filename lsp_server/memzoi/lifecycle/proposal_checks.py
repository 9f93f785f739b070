"""Checks of an agent's proposed memory that need more than a value test: control characters in its text fields,
the retention facts its lane needs, the agent channel's size cap, and the readable packet id.

* **Control characters.** No text field may hold a C0 control character (U+0000–U+001F), except tab and line
  breaks in the body (:mod:`memzoi.safety.controls`; git shows a file with U+0000 as binary, so a reviewer would
  see nothing): ``control_character`` refusal naming the field, never the text.
* **Retention per lane** (Memzoi ``retention.rs``, reference §6): a ``session`` memory needs ``started_at``, an
  ``episodic`` one ``occurred_at``; semantic and procedural memories take neither. Memzoi's creation defaults
  (``retention_facts_for_creation``) fill a missing one with the creation time; a fact given for a lane that
  forbids it, or a value that is not RFC 3339 with a timezone, is refused (``invalid_value``) naming the rule.
* **Size cap** for agents: ``[mcp] max_body_bytes`` of ``.memzoi/config.toml`` (default 32 KiB) bounds the body's
  UTF-8 bytes, below Memzoi's own candidate limit.
* **Readable ids**: ``mcp-<slug of the title>``, and ``-2``, ``-3`` … only when a pending or resolved packet
  already holds that id (Memzoi's ``validate_proposal_identifier``: ``[a-z0-9_-]`` segments that start and end
  alphanumeric). Memzoi's path scan (``bounded_entropy``, reference §3.3) reads ``proposals/pending/<id>`` as one
  token and can flag a slug with digits; such an id, or its resolved path, is never used: the digits are dropped,
  and a needed suffix is spelled with letters (``-b``, ``-c`` …).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..judge.legacy import concept_slug, creation_retention
from ..judge.pathsafety import bears_secret, shown_id
from ..ledger import Refusal
from ..models.common import parse_rfc3339
from ..safety.controls import control_spans
from .common import identity_token
from .layout import APPLIED, PENDING, REJECTED

#: A :class:`~memzoi.lifecycle.propose.Draft` (not imported: that module imports this one).
Draft = Any

#: Default of ``[mcp] max_body_bytes``: the largest body an agent may propose, in UTF-8 bytes.
DEFAULT_MAX_BODY_BYTES = 32 * 1024
_SLUG_MAX = 60
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def check_controls(draft: Draft) -> None:
    """Refuse a C0 control character in any text field of ``draft`` (tab and line breaks allowed in the body
    only). Raises :class:`Refusal` ``control_character`` naming the field."""
    fields: list[tuple[str, str | None, bool]] = [
        ("title", draft.title, False),
        ("body", draft.body, True),
        ("reason", draft.reason, False),
        ("source_ref", draft.source_ref, False),
        ("supersedes", draft.supersedes, False),
        ("occurred_at", draft.occurred_at, False),
        ("started_at", draft.started_at, False),
        *((f"tags[{i}]", t, False) for i, t in enumerate(draft.tags)),
        *((f"applies_to[{i}]", p, False) for i, p in enumerate(draft.applies_to)),
    ]
    for name, value, breaks in fields:
        if value and control_spans(value, breaks=breaks):
            allowed = "only tab and line breaks are allowed there" if breaks else "it must be plain one-line text"
            raise Refusal(
                "control_character",
                f"{name} holds a control character (U+0000-U+001F; {allowed}): git "
                "would show the packet as binary and a reviewer would see nothing of it; remove it and "
                "propose again",
            )


def check_retention(draft: Draft) -> None:
    """Refuse retention facts the lane forbids or that are not RFC 3339 timestamps with a timezone (Memzoi's lane
    rules, reference §6). Raises :class:`Refusal` ``invalid_value``."""
    allowed = {"session": "started_at", "episodic": "occurred_at"}.get(draft.lane)
    for name in ("occurred_at", "started_at"):
        value = getattr(draft, name)
        if value is None:
            continue
        if name != allowed:
            lanes = "the session lane" if name == "started_at" else "the episodic lane"
            raise Refusal(
                "invalid_value",
                f"{name} is only for {lanes} (Memzoi's retention rules); leave it out for a {draft.lane} memory",
            )
        if parse_rfc3339(value.strip()) is None:
            raise Refusal(
                "invalid_value", f"{name} must be an RFC 3339 timestamp with a timezone, such as 2026-07-01T12:00:00Z"
            )


def retention_for(draft: Draft, now: str, target: dict[str, Any] | None = None) -> dict[str, str]:
    """The packet's ``retention`` facts: the fact ``draft`` gives for its lane, else the superseded record's fact of
    the same name, else Memzoi's creation default (``now``, an RFC 3339 instant). ``{}`` for durable lanes."""
    facts = creation_retention(draft.lane, now)
    kept = (target or {}).get("retention") or {}
    for name in facts:
        given, kept_fact = getattr(draft, name), kept.get(name)
        facts[name] = given.strip() if given else kept_fact if isinstance(kept_fact, str) else now
    return facts


def check_agent_size(draft: Draft, limit: int) -> None:
    """Refuse a body over ``limit`` UTF-8 bytes (``[mcp] max_body_bytes``). Raises :class:`Refusal`
    ``candidate_too_large`` giving both sizes."""
    size = len(draft.body.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise Refusal(
            "candidate_too_large",
            f"the body is {size} bytes; this project accepts at most {limit} bytes "
            "per agent proposal (`[mcp] max_body_bytes` in .memzoi/config.toml): keep only the durable "
            "fact, or split it into separate memories",
        )


def _fits(ident: str) -> bool:
    """Whether ``ident`` is shown as it is and none of its packet paths is flagged by Memzoi's path scan."""
    return shown_id(ident) == ident and not any(bears_secret(f"{f}/{ident}.md") for f in (PENDING, APPLIED, REJECTED))


def base_id(title: str) -> str:
    """``mcp-<slug>``: Memzoi's concept slug of ``title`` cut to a word boundary (``mcp-memory`` when nothing is
    left), without its digits when the id would be flagged (see the module docstring)."""
    slug = concept_slug(title)
    if len(slug) > _SLUG_MAX:
        slug = slug[:_SLUG_MAX].rsplit("-", 1)[0] if "-" in slug[:_SLUG_MAX] else slug[:_SLUG_MAX]
    ident = f"mcp-{slug.strip('-') or 'memory'}"
    if not _fits(ident):
        words = [w for w in "".join(c for c in ident if not c.isdigit()).split("-") if w]
        ident = "-".join(words) if len(words) > 1 else "mcp-memory"
    return ident


def _suffix(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n - 1, len(_LETTERS))
        out = _LETTERS[r] + out
    return out


def readable_id(root: Path, title: str, taken: set[str]) -> str:
    """The first free id for ``title``: :func:`base_id`, then ``-2``, ``-3`` … (``-b``, ``-c`` … where digits
    would be flagged). Free: no pending packet file, and neither the id nor its identity token in ``taken`` (the
    resolved identities, :func:`~.common.resolved_identities`: Memzoi's identity matching)."""
    base = base_id(title)
    n = 1
    while True:
        for ident in (base,) if n == 1 else (f"{base}-{n}", f"{base}-{_suffix(n)}"):
            if (
                ident not in taken
                and identity_token(ident) not in taken
                and _fits(ident)
                and not (root / PENDING / f"{ident}.md").exists()
            ):
                return ident
        n += 1
