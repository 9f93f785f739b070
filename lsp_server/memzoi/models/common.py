"""Field types and blocks shared by records and proposal packets (Memzoi current profile).

Each constrained type raises ``PydanticCustomError`` whose *type* is the diagnostic code (``invalid_value``,
``invalid_timestamp``, ``invalid_identifier``, ``unsafe_path``, ``invalid_origin``, ``invalid_retention``), so
:mod:`memzoi.judge.validate` maps a validation error straight to a finding. Sources: reference ``memzoi-format.md``
§1.2, §1.4, §2.2, §3.1 and §6 (``okf.rs``, ``origin.rs``, ``retention.rs`` of Zokiio/Memzoi).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

# Re-exported (also imported from here): the instants and the lane rules are read without these models too.
from ..base.clock import parse_rfc3339 as parse_rfc3339
from ..base.memorykinds import Lane as Lane, MemoryType as MemoryType
from ..judge.retention_rules import validate_retention as validate_retention
from ..read.text import rust_trim
from ..read.yaml12 import PlainScalar

ScopeKind = Literal["personal", "repo", "project", "team", "org", "agent", "imported_untrusted"]
Visibility = Literal["public", "private", "repo", "team", "org"]
RecordStatus = Literal["proposed", "active", "rejected", "superseded", "expired", "tombstoned", "redacted"]
ContentClassName = Literal[
    "general_repo_knowledge",
    "raw_transcript",
    "private_personal_data",
    "screen_or_activity_history",
    "private_endpoint",
    "undisclosed_vulnerability",
    "unminimized_private_evidence",
    "temporary_task_state",
    "local_only_state",
    "unknown",
]
SensitivityName = Literal[
    "repo-safe",
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
]
OriginRoute = Literal[
    "capture",
    "import",
    "session_end",
    "local_memory",
    "checkpoint_create",
    "checkpoint_continue",
    "checkpoint_close",
    "checkpoint_successor",
    "repository_proposal",
    "repository_materialization",
    "owner_command",
]

_IDENT_SEGMENT = r"[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?"
_CONCEPT_SEGMENT = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
# A whole id in one match: `/`-separated segments. Each segment may end with one "\n", as a per-segment
# `^...$` match has always allowed (`$` matches before a final line break); callers strip ids first anyway.
_IDENTIFIER = re.compile(f"{_IDENT_SEGMENT}\n?(?:/{_IDENT_SEGMENT}\n?)*")
_CONCEPT_ID = re.compile(f"{_CONCEPT_SEGMENT}\n?(?:/{_CONCEPT_SEGMENT}\n?)*")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _err(code: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(code, message)


def is_identifier(value: str) -> bool:
    """Memzoi's ``validate_proposal_identifier``: ``/``-separated segments of ``[a-z0-9_-]`` that start and end
    alphanumeric (reference §1.2)."""
    return _IDENTIFIER.fullmatch(value) is not None


def is_concept_id(value: str) -> bool:
    """Memzoi's ``validate_concept_id`` for record paths: segments of ``[a-z0-9-]``, alphanumeric at both ends."""
    return _CONCEPT_ID.fullmatch(value) is not None


def parse_instant(value: str) -> datetime | None:
    """RFC 3339, or ``YYYY-MM-DD`` read as UTC midnight (Memzoi's apply-time comparison rule, reference §2.5)."""
    dt = parse_rfc3339(value)
    if dt is not None:
        return dt
    if _DATE.match(value):
        try:
            return datetime.fromisoformat(value + "T00:00:00+00:00")
        except ValueError:
            return None
    return None


# --- constrained scalar types -------------------------------------------------------------------------------
# Framing already trimmed the strings Memzoi trims (memzoi.read.trimming); these trim as Rust's str::trim does, never
# more (Python's str.strip would also drop \x1c-\x1f, which Memzoi keeps and refuses).


def _text(value: str) -> str:
    if not rust_trim(value):
        raise _err("invalid_value", "must be a non-empty string")
    return value


def _identifier(value: str) -> str:
    v = rust_trim(value)
    if not is_identifier(v):
        raise _err(
            "invalid_identifier",
            "not a valid identifier: use `/`-separated segments of lower-case letters, digits, `-` and `_` that "
            "start and end with a letter or digit",
        )
    return v


def _rfc3339(value: str) -> str:
    if parse_rfc3339(rust_trim(value)) is None:
        raise _err(
            "invalid_timestamp",
            "not an RFC 3339 timestamp with a timezone, e.g. 2026-07-06T00:00:00Z",
        )
    return value


def _instant(value: str) -> str:
    if parse_instant(rust_trim(value)) is None:
        raise _err(
            "invalid_timestamp",
            "not a timestamp: use RFC 3339 with a timezone (2026-07-06T00:00:00Z) or a date (2026-07-06)",
        )
    return value


def _number(value: Any) -> Any:
    # YAML 1.2: only a plain scalar that resolves to int/float is a number. Quoted "1" and labels are not.
    if isinstance(value, PlainScalar):
        resolved = value.resolved
        if isinstance(resolved, (int, float)) and not isinstance(resolved, bool):
            return float(resolved)
        if value in ("confirmed", "likely", "uncertain"):
            raise _err(
                "invalid_value",
                f"the label `{value}` is a legacy form; use a number between 0 and 1 "
                "(confirmed = 1, likely = 0.75, uncertain = 0.4)",
            )
        raise _err("invalid_value", "must be a number between 0 and 1")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise _err("invalid_value", "must be an unquoted number between 0 and 1")


def _unit_interval(value: float) -> float:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise _err("invalid_value", "confidence must be between 0.0 and 1.0")
    return value


def _relative_path(value: str) -> str:
    v = rust_trim(value)
    if not v:
        raise _err("unsafe_path", "path must be non-empty")
    parts = v.replace("\\", "/").split("/")
    if v.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", v) or any(p in ("..", ".") for p in parts):
        raise _err(
            "unsafe_path",
            "must be a repository-relative path without `..`, `.` or a root or drive prefix",
        )
    return v


def _kebab_to_snake(value: Any) -> Any:
    return value.replace("-", "_") if isinstance(value, str) else value


NonEmptyStr = Annotated[str, AfterValidator(_text)]
Identifier = Annotated[str, AfterValidator(_identifier)]
Timestamp = Annotated[str, AfterValidator(_rfc3339), Field(json_schema_extra={"format": "date-time"})]
Instant = Annotated[str, AfterValidator(_instant)]
Confidence = Annotated[float, BeforeValidator(_number), AfterValidator(_unit_interval), Field(ge=0.0, le=1.0)]
RelativePath = Annotated[str, AfterValidator(_relative_path)]
ContentClass = Annotated[ContentClassName, BeforeValidator(_kebab_to_snake)]


class Strict(BaseModel):
    """Base for frontmatter blocks: unknown keys are errors (serde ``deny_unknown_fields``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EpisodicExtension(Strict):
    """``retention.episodic_extension`` (currently rejected by Memzoi; kept so the schema names it)."""

    until: Timestamp
    authorization_event_id: NonEmptyStr


class RetentionFacts(Strict):
    """Retention facts (``RetentionFacts``, reference §6). Which facts are allowed depends on the lane."""

    occurred_at: Timestamp | None = Field(None, description="When an episodic memory happened (RFC 3339).")
    started_at: Timestamp | None = Field(None, description="Start of a session memory (RFC 3339).")
    last_continued_at: Timestamp | None = Field(None, description="Last continuation of a session (RFC 3339).")
    closed_at: Timestamp | None = Field(None, description="When a session was closed (RFC 3339).")
    explicit_expires_at: Timestamp | None = Field(None, description="Explicit expiry instant (RFC 3339).")
    episodic_extension: EpisodicExtension | None = Field(
        None, description="Owner-authorized episodic extension (not accepted by the current profile)."
    )


def _origin_key(value: str) -> str:
    if not value.strip() or value.strip() == "owner-command:":
        raise _err("invalid_origin", "origin.origin_key must be a non-empty key such as `repository-record:<id>`")
    return value


class Origin(Strict):
    """``origin`` block (``origin.rs``): where the memory came from."""

    origin_key: Annotated[str, AfterValidator(_origin_key)] = Field(
        description="Stable origin key, e.g. `repository-record:<id>` or `repository-proposal:<id>`."
    )
    route: OriginRoute = Field(description="Route by which the memory was created.")


class Lineage(Strict):
    """``lineage`` block: renewal or session-successor link to a predecessor record."""

    kind: Literal["renewal", "session_successor"] = Field(description="Lineage relationship.")
    predecessor_id: NonEmptyStr = Field(description="Id of the predecessor record.")
