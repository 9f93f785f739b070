"""The structured input of ``memzoi session-end``: ``{task, candidates[]}`` YAML (Memzoi's lifecycle document,
"Explicit session-end routing"), read strictly and classified before anything is written.

Shape (the seed's example, plus the fields every destination's write needs)::

    task: "Implement auth middleware"
    candidates:
      - destination: repo            # repo | local | session | discard | needs_review (required)
        type: decision               # Memzoi's memory types (required for repo, local, session)
        lane: semantic               # Memzoi's lanes (required for repo, local, session)
        title: Protected routes validate sessions server-side
        body: Protected routes must validate sessions server-side.
        sensitivity: repo-safe       # omitted = unknown
        content_class: general_repo_knowledge   # optional, see below
        tags: [auth]                 # optional
        applies_to: [src/auth/**]    # optional, repository-relative paths
        source_ref: ADR-12           # optional
        confidence: 0.9              # optional, [0, 1]; default 1

Rules: unknown keys are refused (Memzoi's inputs are ``deny_unknown_fields``); ``session`` candidates must be
``type: episode`` and ``lane: session``; an omitted ``sensitivity`` is ``unknown``. A ``repo`` candidate is
repo-safe only with ``sensitivity: repo-safe`` and ``content_class`` ``general_repo_knowledge`` (the Git-plane
gate, reference §3.2). An omitted ``content_class`` on a repo candidate is read as ``general_repo_knowledge``: the
seed's example omits it and routes to a pending packet, and Memzoi's exact default there is not in the reference
(this project's choice; an explicit other class is blocked).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args

from ..base.findings import Severity
from ..ledger import Refusal
from ..models.common import Lane, MemoryType
from ..read.yaml12 import load
from ..read.yaml_tree import to_python

DESTINATIONS = ("repo", "local", "session", "discard", "needs_review")
WRITING = ("repo", "local", "session")
_TYPES: tuple[str, ...] = get_args(MemoryType)
_LANES: tuple[str, ...] = get_args(Lane)
_KEYS = {
    "destination",
    "type",
    "lane",
    "title",
    "body",
    "sensitivity",
    "content_class",
    "tags",
    "applies_to",
    "source_ref",
    "confidence",
}
_TOP = {"task", "candidates"}
CODE = "invalid_session_end"


@dataclass(frozen=True)
class Candidate:
    """One routed candidate; ``index`` is its position in ``candidates``."""

    index: int
    destination: str
    type: str = ""
    lane: str = ""
    title: str = ""
    body: str = ""
    sensitivity: str = "unknown"
    content_class: str | None = None
    tags: list[str] = field(default_factory=list)
    applies_to: list[str] = field(default_factory=list)
    source_ref: str | None = None
    confidence: float = 1.0

    def classification(self) -> dict[str, Any]:
        """``{"index", "destination", "sensitivity", "content_class"}``: what a blocked report may carry (never the
        title, body or any other content)."""
        return {
            "index": self.index,
            "destination": self.destination,
            "sensitivity": self.sensitivity,
            "content_class": self.content_class or "unknown",
        }


@dataclass(frozen=True)
class SessionEnd:
    """The parsed input: ``task`` and its candidates in order."""

    task: str
    candidates: list[Candidate]


def _fail(where: str, what: str) -> Refusal:
    return Refusal(
        CODE,
        f"{where}: {what}; nothing was written. The input is YAML `{{task, candidates[]}}` (see docs/runtime-plane.md)",
    )


def encodable(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (no lone surrogate, e.g. from a YAML ``\\uD800`` escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked(value: str, where: str, name: str) -> str:
    if not encodable(value):
        raise _fail(
            where,
            f"{name} holds a lone surrogate (a `\\u` escape such as `\\uD800`), which cannot be "
            "stored as UTF-8; remove it",
        )
    return value


def _strings(value: Any, where: str, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, f"{name} must be a list of non-empty strings")
    return [_checked(v.strip(), where, name) for v in value]


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(where, f"{key} must be a string")
    return _checked(value, where, key)


def _candidate(i: int, item: Any, where: str) -> Candidate:
    at = f"{where}: candidates[{i}]"
    if not isinstance(item, dict):
        raise _fail(at, "each candidate must be a mapping")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise _fail(at, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}")
    dest = item.get("destination")
    if dest not in DESTINATIONS:
        raise _fail(at, f"destination must be one of {', '.join(DESTINATIONS)}")
    conf = item.get("confidence", 1.0)
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not math.isfinite(conf) or not 0 <= conf <= 1:
        raise _fail(at, "confidence must be a number from 0 to 1")
    sens = item.get("sensitivity")
    cls = item.get("content_class")
    for key, value in (("sensitivity", sens), ("content_class", cls)):
        if value is not None and not isinstance(value, str):
            raise _fail(at, f"{key} must be a string")
        if value is not None:
            _checked(value, at, key)
    cand = Candidate(
        index=i,
        destination=dest,
        type=_text(item, "type", at),
        lane=_text(item, "lane", at),
        title=_text(item, "title", at),
        body=_text(item, "body", at),
        sensitivity=(sens or "unknown").strip() or "unknown",
        content_class=cls.strip().replace("-", "_") if isinstance(cls, str) and cls.strip() else None,
        tags=_strings(item.get("tags"), at, "tags"),
        applies_to=_strings(item.get("applies_to"), at, "applies_to"),
        source_ref=_text(item, "source_ref", at) or None,
        confidence=float(conf),
    )
    if dest in WRITING:
        _check_writing(cand, at)
    return cand


def _check_writing(c: Candidate, at: str) -> None:
    if not c.title.strip() or "\n" in c.title.strip():
        raise _fail(at, "title must be one non-empty line")
    if not c.body.strip():
        raise _fail(at, "body must not be empty")
    if c.type not in _TYPES:
        raise _fail(at, f"type must be one of {', '.join(_TYPES)}")
    if c.lane not in _LANES:
        raise _fail(at, f"lane must be one of {', '.join(_LANES)}")
    if c.destination == "session" and (c.type, c.lane) != ("episode", "session"):
        raise _fail(at, "a session candidate becomes a checkpoint and must be `type: episode` with `lane: session`")


def yaml_document(text: str, fail: Callable[[str], Refusal]) -> Any:
    """``text`` (YAML 1.2, the project's strict loader) as Python data; raises ``fail("not valid YAML (codes)")``
    when it does not load (the finding codes only, never the text)."""

    def line_of(offset: int) -> tuple[int, int]:
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        return start, len(text) if end < 0 else end

    result = load(text, 0, len(text), line_of)
    bad = [f for f in result.findings if f.severity == Severity.ERROR]
    if result.root is None or bad:
        codes = sorted({f.code for f in (bad or result.findings)}) or ["yaml_syntax"]
        raise fail(f"not valid YAML ({', '.join(codes)})")
    return to_python(result.root)


def parse_session_end(text: str, where: str) -> SessionEnd:
    """Parse ``text`` (YAML 1.2) as a session-end input named ``where`` in messages. Raises :class:`Refusal`
    (``invalid_session_end``) naming the field, never echoing values."""
    doc = yaml_document(text, lambda what: _fail(where, what))
    if not isinstance(doc, dict):
        raise _fail(where, "the document must be a mapping with `task` and `candidates`")
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise _fail(where, f"unknown top-level field(s) {', '.join(unknown)}; allowed: task, candidates")
    task = doc.get("task")
    if not isinstance(task, str) or not task.strip():
        raise _fail(where, "`task` must be a non-empty string")
    _checked(task, where, "task")
    items = doc.get("candidates")
    if not isinstance(items, list):
        raise _fail(where, "`candidates` must be a list")
    return SessionEnd(task.strip(), [_candidate(i, item, where) for i, item in enumerate(items)])
