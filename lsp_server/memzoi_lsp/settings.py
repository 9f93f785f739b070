"""Server settings: read from ``initializationOptions`` and ``workspace/configuration`` (section ``memzoi``),
validated once at that boundary, then used as plain attributes.

Keys (camelCase on the wire, snake_case here):

* ``severity``: ``{code: "error"|"warning"|"information"|"hint"}`` per-code overrides;
* ``disabled``: codes never published;
* ``debounceMs``: delay after the last keystroke before an open document is re-analysed (push mode);
* ``logLevel``: ``debug|info|warning|error``: the least severe log record sent to the client;
* ``logToClient``: send log records to the client as ``window/logMessage`` (default on; stderr gets only
  warnings and errors unless the server's ``--log-level`` asks for more).
* ``showDocumentTimeoutMs``: how long a command waits for the client to answer the ``window/showDocument`` it
  sends to open what it created (default 10 s); the change is already on disk, so the command answers anyway.

These add, per user, to the project's ``[rules]`` in ``.memzoi/config.toml`` (:mod:`memzoi.rules`): a severity
here wins over the project's for that code, and disabled codes are added to the project's. Codes that SPEC §4
makes unsuppressible (Memzoi's write-safety codes and the git-plane gate) can be neither disabled nor
downgraded; such entries are dropped with a warning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from memzoi.rules import Rules, rule_problem

SeverityName = Literal["error", "warning", "information", "hint"]
SECTION = "memzoi"


class Settings(BaseModel):
    """Validated server settings (see the module docstring for the keys)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True)

    severity: dict[str, SeverityName] = Field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    debounce_ms: int = Field(200, ge=0, le=10_000)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_to_client: bool = True
    show_document_timeout_ms: int = Field(10_000, ge=1, le=600_000)

    def over(self, project: Rules) -> Rules:
        """The project's rules with these settings on top (see the module docstring)."""
        if not (self.severity or self.disabled):
            return project
        return project.overlay(self.severity, self.disabled)


def _validated(merged: dict[str, Any], problems: list[str]) -> Settings:
    """``merged`` validated; an invalid key is reported in ``problems`` and takes its default."""
    try:
        return Settings.model_validate(merged)
    except ValidationError as err:
        errors = err.errors()
    bad = {str(e["loc"][0]) for e in errors if e["loc"]}
    for e in errors:
        loc = ".".join(str(p) for p in e["loc"])
        problems.append(f"setting `{loc}`: {e['msg']}; using the default")
    try:
        return Settings.model_validate({k: v for k, v in merged.items() if k not in bad})
    except ValidationError:
        return Settings()


def parse_settings(*sources: Any) -> tuple[Settings, list[str]]:
    """Merge raw settings dicts (later sources win, key by key) and validate them.

    Each source may be the settings mapping itself or a mapping with a ``memzoi`` key holding it; ``None`` and
    non-mappings are skipped. Returns the settings and human-readable problems (unknown codes, unsuppressible
    codes, invalid values). On an invalid value the defaults are used for that key and the problem is reported.
    """
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for src in sources:
        if isinstance(src, dict) and isinstance(src.get(SECTION), dict):
            src = src[SECTION]
        if isinstance(src, dict):
            merged.update(src)
        elif src is not None:
            problems.append(f"settings must be an object, got {type(src).__name__}; ignored")
    settings = _validated(merged, problems)
    severity = {}
    for code, level in settings.severity.items():
        problem = rule_problem(code, disabling=False, level=level)
        if problem:
            problems.append(f"setting `severity.{code}`: {problem}; ignored")
        else:
            severity[code] = level
    disabled = set()
    for code in sorted(settings.disabled):
        problem = rule_problem(code, disabling=True)
        if problem:
            problems.append(f"setting `disabled`: {problem}; ignored")
        else:
            disabled.add(code)
    return settings.model_copy(update={"severity": severity, "disabled": frozenset(disabled)}), problems
