"""The lane rules of retention facts (Memzoi ``evaluate_retention``, reference §6) and retention facts read without
the validation models (:func:`plain_facts`), so that whether a search hit is a current assertion
(:mod:`memzoi.judge.retention`) loads no pydantic for the facts Memzoi writes. :mod:`memzoi.models.common` re-exports
:func:`validate_retention`; its ``RetentionFacts`` model stays what a record's frontmatter is validated by.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.clock import parse_rfc3339
from ..read.text import rust_trim

#: The fields of ``RetentionFacts`` (:class:`memzoi.models.common.RetentionFacts`; a test holds them equal).
RETENTION_FIELDS = (
    "occurred_at",
    "started_at",
    "last_continued_at",
    "closed_at",
    "explicit_expires_at",
    "episodic_extension",
)
#: Those of them that are timestamps.
TIMESTAMP_FIELDS = RETENTION_FIELDS[:5]


class Facts(Protocol):
    """What the lane rules read of retention facts: ``RetentionFacts`` or :class:`PlainFacts`."""

    @property
    def occurred_at(self) -> str | None: ...
    @property
    def started_at(self) -> str | None: ...
    @property
    def last_continued_at(self) -> str | None: ...
    @property
    def closed_at(self) -> str | None: ...
    @property
    def explicit_expires_at(self) -> str | None: ...
    @property
    def episodic_extension(self) -> Any: ...


@dataclass(frozen=True)
class PlainFacts:
    """Retention facts that hold only RFC 3339 timestamps, as the ``RetentionFacts`` model would have accepted them
    (:func:`plain_facts`)."""

    occurred_at: str | None = None
    started_at: str | None = None
    last_continued_at: str | None = None
    closed_at: str | None = None
    explicit_expires_at: str | None = None
    episodic_extension: None = None


def plain_facts(value: Mapping[str, Any]) -> PlainFacts | None:
    """``value`` as :class:`PlainFacts` when the model would accept it as it is: only timestamp fields, each
    ``None`` or a ``str`` that is an RFC 3339 timestamp with a timezone once trimmed (the model's ``Timestamp``);
    ``None`` otherwise (the caller then validates with the model, which names what is wrong)."""
    for key, v in value.items():
        if v is None and key in RETENTION_FIELDS:
            continue
        if key not in TIMESTAMP_FIELDS or type(v) is not str or parse_rfc3339(rust_trim(v)) is None:
            return None
    return PlainFacts(**value)


def validate_retention(lane: str, facts: Facts) -> list[tuple[str, str]]:
    """Lane rules for retention facts (``evaluate_retention``, reference §6).

    Returns ``(field, message)`` pairs for every rule broken; empty when the facts fit the lane.
    """
    out: list[tuple[str, str]] = []
    present = {k for k in RETENTION_FIELDS if getattr(facts, k) is not None}
    session_fields = {"started_at", "last_continued_at", "closed_at"}
    if facts.episodic_extension is not None:
        out.append(
            (
                "episodic_extension",
                "episodic_extension is not supported until an owner-authorized "
                "extension event can be verified; remove it",
            )
        )
    if lane == "session":
        if "started_at" not in present:
            out.append(("", "session memories need retention.started_at"))
        if "occurred_at" in present:
            out.append(("occurred_at", "occurred_at is not allowed for the session lane"))
        start = parse_rfc3339(facts.started_at or "")
        cont = parse_rfc3339(facts.last_continued_at or "")
        closed = parse_rfc3339(facts.closed_at or "")
        if start and cont and not (start <= cont and (cont - start).total_seconds() < 7 * 86400):
            out.append(
                ("last_continued_at", "last_continued_at must be at or after started_at and less than 7 days after it")
            )
        if start and closed and closed < start:
            out.append(("closed_at", "closed_at must be at or after started_at"))
    elif lane == "episodic":
        if "occurred_at" not in present:
            out.append(("", "episodic memories need retention.occurred_at"))
        for f in sorted(present & session_fields):
            out.append((f, f"{f} is only allowed for the session lane"))
    elif lane in ("semantic", "procedural"):
        for f in sorted(present & (session_fields | {"occurred_at"})):
            out.append((f, f"{f} is not allowed for the {lane} lane (durable lanes take only explicit_expires_at)"))
    return out


__all__ = ["RETENTION_FIELDS", "TIMESTAMP_FIELDS", "Facts", "PlainFacts", "plain_facts", "validate_retention"]
