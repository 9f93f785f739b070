"""The model of ``.memzoi/config.toml`` (:class:`MemzoiConfig`): the sections this project reads, each key with its
type, default and description (the description is the settings documentation and the JSON Schema). Memzoi's own
``[project] id`` (reference §3.2) and this project's ``[safety]``, ``[promotion]``, ``[resident]``, ``[mcp]`` and
``[rules]``. Reading the file, its problems and the cache: :mod:`memzoi.judge.config`.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..base.promotion import PromotionSection
from .rules import Rules, RulesSection

_FINGERPRINT = re.compile(r"^(?:blake3:)?([0-9a-f]{64})$")


class ProjectSection(BaseModel):
    """``[project]``: Memzoi's project identity."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = Field(
        None,
        description="Project id. A memory with `scope: project` reaches the git plane only when its scope id "
        "equals this value (Memzoi's git-plane gate).",
    )

    @field_validator("id")
    @classmethod
    def _non_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("project id must be a non-empty string")
        return value


class SafetySection(BaseModel):
    """``[safety]``: reviewer decisions about content-detector findings."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    accepted_fingerprints: list[str] = Field(
        default_factory=list,
        description="Fingerprints (64 lower-case hex, optionally prefixed `blake3:`) of `high_entropy_value` "
        "findings of this project's own detectors accepted as not secret. A match of Memzoi's write-safety "
        "rules (its entropy rule included), a credential or a gate finding cannot be accepted.",
    )

    unsigned_jwt: Literal["error", "warning", "information", "hint"] = Field(
        "warning",
        description="Severity of an unsigned JSON Web Token (`alg: none`, empty signature) outside an example "
        "fence; inside a fenced example it is at most `information`. Signed tokens are always errors.",
    )

    @field_validator("accepted_fingerprints")
    @classmethod
    def _fingerprints(cls, values: list[str]) -> list[str]:
        out = []
        for v in values:
            m = _FINGERPRINT.match(v.strip().lower())
            if not m:
                raise ValueError("each accepted fingerprint must be 64 hex characters (as printed by memzoi check)")
            out.append(m.group(1))
        return out


class ResidentSection(BaseModel):
    """``[resident]``: where Zuno's two resident memory files are and their caps (Zuno reference §2)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    global_path: str | None = Field(
        None,
        description="The global resident file (absolute, or starting with `~/`), a file named `MEMORY.md`. Default: "
        "`$ZUNO_CONFIG_DIR/memory/MEMORY.md`, else `~/.config/zuno/memory/MEMORY.md`. Only in the user's own "
        "`$ZUNO_CONFIG_DIR/memzoi.toml`: a repository's `.memzoi/config.toml` cannot set it (ignored, reported).",
    )
    project_path: str = Field(
        ".zuno/RULES.md",
        description="The project resident file, relative to the project root and inside it; a `.md` file.",
    )
    global_char_limit: int = Field(
        2200,
        gt=0,
        description="Cap of the global file in characters (code points). "
        "Only in the user's own `$ZUNO_CONFIG_DIR/memzoi.toml`, like `global_path`.",
    )
    project_char_limit: int = Field(3000, gt=0, description="Cap of the project file in characters (code points).")

    @field_validator("global_path")
    @classmethod
    def _global(cls, value: str | None) -> str | None:
        if value is None:
            return None
        v = value.strip()
        # A repository's configuration must not aim the user's global memory at another file of their home (an
        # agent's instructions file, say): only the folder of MEMORY.md can change.
        if not (v.startswith("/") or v.startswith("~/")) or not (v == "/MEMORY.md" or v.endswith("/MEMORY.md")):
            raise ValueError("global_path must be an absolute path (or start with `~/`) to a file named MEMORY.md")
        return v

    @field_validator("project_path")
    @classmethod
    def _project(cls, value: str) -> str:
        parts = value.strip().replace("\\", "/").split("/")
        if (
            not value.strip()
            or value.strip().startswith("/")
            or any(p in ("", ".", "..") for p in parts)
            or not parts[-1].endswith(".md")
        ):
            raise ValueError(
                "project_path must be a relative path inside the project to a `.md` file, such as `.zuno/RULES.md`"
            )
        return "/".join(parts)


class McpSection(BaseModel):
    """``[mcp]``: limits of the agent channel (``memzoi-mcp``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    proposals_per_minute: int = Field(
        20,
        ge=0,
        le=10_000,
        description="Proposals one `memzoi-mcp` process accepts in any 60-second window; more are refused with "
        "`rate_limited` (0 refuses every proposal); refused proposals count too. `--proposals-per-minute` "
        "overrides it.",
    )
    max_body_bytes: int = Field(
        32 * 1024,
        ge=1,
        le=512 * 1024,
        description="The largest body (UTF-8 bytes) an agent may propose with `propose_memory`; a larger one is "
        "refused with `candidate_too_large`. At most Memzoi's own limit of 512 KiB per field.",
    )


class MemzoiConfig(BaseModel):
    """The parts of ``.memzoi/config.toml`` this project reads."""

    model_config = ConfigDict(extra="ignore", frozen=True, title="Memzoi project configuration")

    project: ProjectSection = Field(default_factory=ProjectSection, description="Project identity.")
    safety: SafetySection = Field(default_factory=SafetySection, description="Content-detector decisions.")
    promotion: PromotionSection = Field(
        default_factory=PromotionSection,
        description="When a valid runtime-plane candidate (local record, resident-memory entry) is applied "
        "without a human decision (Zuno's promotion policy).",
    )
    resident: ResidentSection = Field(
        default_factory=ResidentSection,
        description="Locations and caps of Zuno's resident memory files.",
    )
    mcp: McpSection = Field(default_factory=McpSection, description="Limits of the agent channel (`memzoi-mcp`).")
    rules: RulesSection = Field(
        default_factory=RulesSection,
        description="Severity per diagnostic code, disabled codes and ignored files, for `memzoi check`, the "
        "pre-commit hook, the language server and the MCP server. A code Memzoi refuses a file for (its "
        "write-safety, reason and admission codes, the framing and schema errors that make a record one Memzoi "
        "cannot type, `typed-record`, and the git-plane gate codes) cannot be disabled, downgraded or ignored.",
    )

    @property
    def project_id(self) -> str | None:
        """The configured project id, trimmed, or ``None``."""
        return self.project.id.strip() if self.project.id else None

    @cached_property
    def effective_rules(self) -> Rules:
        """The ``[rules]`` section compiled for :meth:`memzoi.judge.rules.Rules.apply`."""
        return Rules.from_section(self.rules)

    @property
    def accepted(self) -> frozenset[str]:
        """Accepted fingerprints as bare lower-case hex."""
        return frozenset(self.safety.accepted_fingerprints)


DEFAULT_CONFIG = MemzoiConfig()
