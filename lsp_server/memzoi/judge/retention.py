"""Retention evaluation and the "current assertion" predicate (Memzoi ``retention.rs``, reference §6).

The lane rules for which facts are allowed live in :func:`memzoi.judge.retention_rules.validate_retention` (reported as
``invalid_retention`` by :mod:`memzoi.judge.validate`); this module evaluates valid facts at a clock:

* **session**: boundary = min(last activity + 24 h ``session_inactivity_lease``, started + 7 d
  ``session_maximum_age``, ``closed_at`` ``session_closed``, ``explicit_expires_at`` ``explicit_expiry``);
* **episodic**: min(occurred + 30 d ``episodic_ordinary_window``, explicit expiry);
* **semantic / procedural**: the explicit expiry, else no boundary (``no_age_limit``).

The boundary is inclusive: at ``evaluated_at >= boundary`` the record is ``query_only`` (excluded from normal
recall, still readable by explicit queries). A record is a *current assertion* when its status is ``active`` and
its retention is ``current``. Clocks are always passed in, so tests fix them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

# Re-exported (also imported from here).
from ..base.clock import parse_rfc3339, utc_now as utc_now
from ..base.findings import Finding, finding
from .retention_rules import Facts, plain_facts, validate_retention

if TYPE_CHECKING:
    from ..models.common import RetentionFacts
    from ..read.document import Document

# The validation models (pydantic) and the YAML reader are imported where facts must be validated by the model or
# a document is read: facts holding only timestamps are read without them (:func:`memzoi.judge.retention_rules.plain_facts`),
# so a search that only asks whether its hits are current loads neither.

SESSION_LEASE = timedelta(hours=24)
SESSION_MAX_AGE = timedelta(days=7)
EPISODIC_WINDOW = timedelta(days=30)

#: Human explanations of Memzoi's boundary reasons (used in messages and hover).
REASONS = {
    "session_inactivity_lease": "24 hours after the session's last activity (last_continued_at or started_at)",
    "session_maximum_age": "7 days after the session started",
    "session_closed": "the session was closed (closed_at)",
    "explicit_expiry": "the explicit expiry (explicit_expires_at)",
    "episodic_ordinary_window": "30 days after the episode occurred (occurred_at)",
    "no_age_limit": "durable lane without an explicit expiry",
}


class InvalidRetention(ValueError):
    """Retention facts that break the lane rules; ``violations`` are ``(field, message)`` pairs (field may be
    ``""`` for the block). Memzoi refuses such a record (``record <id> has invalid retention facts``)."""

    def __init__(self, violations: list[tuple[str, str]]):
        super().__init__("; ".join(m for _, m in violations))
        self.violations = violations


@dataclass(frozen=True)
class RetentionDecision:
    """Memzoi's ``RetentionDecision``: ``state`` is ``current`` or ``query_only``; ``boundary`` the effective
    boundary formatted as UTC RFC 3339 (``None`` for ``no_age_limit``); ``reason`` one of :data:`REASONS`."""

    state: str
    boundary: str | None
    reason: str

    @property
    def is_current(self) -> bool:
        """True while the record is inside its recall window."""
        return self.state == "current"


@dataclass(frozen=True)
class CurrentAssertion:
    """Memzoi's ``evaluate_current_assertion`` for a repository record.

    ``exclusions`` are dicts tagged by ``kind`` (``lifecycle_status`` with ``status``; ``retention`` with
    ``reason`` and ``boundary``); the record is current when there are none.
    """

    is_current: bool
    retention: RetentionDecision | None
    exclusions: list[dict[str, Any]] = field(default_factory=list)


def format_instant(value: datetime) -> str:
    """UTC RFC 3339 with ``Z`` and fractional seconds only when non-zero (as Memzoi's ``time`` crate prints)."""
    v = value.astimezone(UTC)
    base = v.strftime("%Y-%m-%dT%H:%M:%S")
    if v.microsecond:
        base += "." + f"{v.microsecond:06d}".rstrip("0")
    return base + "Z"


def _facts(value: RetentionFacts | Mapping[str, Any]) -> Facts:
    if isinstance(value, Mapping):
        plain = plain_facts(value)  # what the model would accept as it is (a test holds the decisions equal)
        if plain is not None:
            return plain
    from pydantic import ValidationError  # noqa: PLC0415 lazy: start-up

    from ..models.common import RetentionFacts  # noqa: PLC0415 lazy: start-up

    if isinstance(value, RetentionFacts):
        return value
    try:
        return RetentionFacts.model_validate(dict(value))
    except ValidationError as err:
        raise InvalidRetention(
            [
                (name, f"{name}: {e['msg']}")
                for e in err.errors(include_url=False)
                for name in [".".join(map(str, e["loc"]))]
            ]
        ) from None


def retention_boundary(lane: str, facts: RetentionFacts | Mapping[str, Any]) -> tuple[datetime, str] | None:
    """The effective boundary of retention facts for ``lane`` and the reason that set it (one of :data:`REASONS`),
    or ``None`` when nothing limits the record (``no_age_limit``). It does not depend on any clock, so it can be
    computed once and compared with ``now`` later (the verdict cache does). Raises :class:`InvalidRetention` as
    :func:`evaluate_retention` does. Ties between candidate boundaries keep the first in the order lease, maximum
    age, closed, explicit expiry."""
    f = _facts(facts)
    violations = validate_retention(lane, f)
    if lane not in ("session", "episodic", "semantic", "procedural"):
        violations.append(("", f"unknown memory lane `{lane}`"))
    if violations:
        raise InvalidRetention(violations)

    def at(value: str | None) -> datetime | None:
        return parse_rfc3339(value.strip()) if value else None

    candidates: list[tuple[datetime, str]] = []
    if lane == "session":
        started = at(f.started_at)
        assert started is not None  # validate_retention requires it
        last = at(f.last_continued_at) or started
        candidates.append((last + SESSION_LEASE, "session_inactivity_lease"))
        candidates.append((started + SESSION_MAX_AGE, "session_maximum_age"))
        closed = at(f.closed_at)
        if closed is not None:
            candidates.append((closed, "session_closed"))
    elif lane == "episodic":
        occurred = at(f.occurred_at)
        assert occurred is not None
        candidates.append((occurred + EPISODIC_WINDOW, "episodic_ordinary_window"))
    explicit = at(f.explicit_expires_at)
    if explicit is not None:
        candidates.append((explicit, "explicit_expiry"))
    if not candidates:
        return None
    boundary, reason = candidates[0]
    for when, why in candidates[1:]:
        if when < boundary:
            boundary, reason = when, why
    return boundary, reason


def evaluate_retention(
    lane: str, facts: RetentionFacts | Mapping[str, Any], evaluated_at: datetime
) -> RetentionDecision:
    """Evaluate retention facts for ``lane`` at ``evaluated_at`` (timezone-aware).

    Raises :class:`InvalidRetention` when the facts break the lane rules or a timestamp is not RFC 3339 with a
    timezone (never a third state, as in Memzoi). The boundary is :func:`retention_boundary`'s.
    """
    found = retention_boundary(lane, facts)
    if found is None:
        return RetentionDecision("current", None, "no_age_limit")
    boundary, reason = found
    state = "query_only" if evaluated_at >= boundary else "current"
    return RetentionDecision(state, format_instant(boundary), reason)


def current_assertion(
    status: str, lane: str, facts: RetentionFacts | Mapping[str, Any], evaluated_at: datetime
) -> CurrentAssertion:
    """Whether a repository record is a current assertion at ``evaluated_at`` (``evaluate_current_assertion``).

    Invalid retention facts give ``retention=None`` and a ``retention`` exclusion with reason
    ``invalid_retention`` rather than raising, so hover can always show an answer.
    """
    exclusions: list[dict[str, Any]] = []
    if status != "active":
        exclusions.append({"kind": "lifecycle_status", "status": status})
    try:
        decision: RetentionDecision | None = evaluate_retention(lane, facts, evaluated_at)
    except InvalidRetention:
        decision = None
        exclusions.append({"kind": "retention", "reason": "invalid_retention", "boundary": None})
    if decision is not None and not decision.is_current:
        exclusions.append({"kind": "retention", "reason": decision.reason, "boundary": decision.boundary})
    return CurrentAssertion(not exclusions, decision, exclusions)


@dataclass(frozen=True, slots=True)
class RetentionMark:
    """Where an active record's recall window ends, as a clock-free fact (:func:`retention_mark`): the boundary
    instant (timezone-aware), the reason (one of :data:`REASONS`) and the code-point span of the ``retention``
    key, where ``retention_query_only`` sits. :func:`mark_findings` turns it into findings at a given clock."""

    boundary: datetime
    reason: str
    span: tuple[int, int]


def retention_mark(doc: Document) -> RetentionMark | None:
    """The :class:`RetentionMark` of an active record whose lane and retention validate and whose facts set a
    boundary; ``None`` otherwise (not active, no boundary, invalid facts: those are ``invalid_retention`` from
    schema validation already)."""
    data = doc.data or {}
    lane, status, retention = data.get("lane"), data.get("status"), data.get("retention")
    if status != "active" or not isinstance(lane, str) or not isinstance(retention, Mapping):
        return None
    try:
        found = retention_boundary(lane, retention)
    except InvalidRetention:
        return None
    if found is None:
        return None
    key, _ = _locate()(doc.yaml_root, ("retention",))
    span = (key.start, key.end) if key is not None else (0, min(3, len(doc.text)))
    return RetentionMark(found[0], found[1], span)


@cache
def _locate() -> Callable[..., Any]:
    """:func:`memzoi.read.yaml12.locate`, imported at the first record with a retention boundary and kept: an import
    statement costs 1.5–2 µs at every call, and a check asks it of every such record."""
    from ..read.yaml12 import locate  # noqa: PLC0415 lazy: start-up

    return locate


def mark_findings(mark: RetentionMark | None, evaluated_at: datetime) -> list[Finding]:
    """``retention_query_only`` (information) when ``evaluated_at`` is at or past ``mark``'s boundary (the
    boundary is inclusive), else nothing. The message names the boundary and the reason."""
    if mark is None or evaluated_at < mark.boundary:
        return []
    boundary = format_instant(mark.boundary)
    return [
        finding(
            "retention_query_only",
            f"past its retention boundary {boundary} ({mark.reason}: {REASONS[mark.reason]}); the "
            "record is excluded from normal recall and answers only explicit queries. Renew it with a successor "
            "record, or tombstone it when it is no longer true",
            mark.span[0],
            mark.span[1],
            boundary=boundary,
            reason=mark.reason,
        )
    ]


def retention_findings(doc: Document, evaluated_at: datetime) -> list[Finding]:
    """``retention_query_only`` (information) for an active record past its boundary at ``evaluated_at``.

    Only records whose lane and retention validate are evaluated (invalid facts are already ``invalid_retention``
    from schema validation). The finding sits on the ``retention`` key and names the boundary and the reason.
    """
    return mark_findings(retention_mark(doc), evaluated_at)


__all__ = [
    "EPISODIC_WINDOW",
    "REASONS",
    "SESSION_LEASE",
    "SESSION_MAX_AGE",
    "CurrentAssertion",
    "InvalidRetention",
    "RetentionDecision",
    "RetentionMark",
    "current_assertion",
    "evaluate_retention",
    "mark_findings",
    "retention_boundary",
    "format_instant",
    "retention_findings",
    "retention_mark",
    "utc_now",
]
