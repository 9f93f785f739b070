"""Rule settings: severity per code, disabled codes and ignored paths, from ``[rules]`` in ``.memzoi/config.toml``.

One configuration for every consumer: ``memzoi check`` (and so the pre-commit hook), the language server (which
lets editor settings add to it per user) and the MCP server. Example:

```toml
[rules]
severity = { legacy_profile = "error", duplicate_content = "information" }
disabled = ["retention_query_only"]
ignore = ["records/archive/**"]   # relative to the .memzoi folder
```

The unsuppressible codes (:data:`memzoi.base.findings.UNSUPPRESSIBLE`: every code for what Memzoi refuses,
:data:`memzoi.base.findings.MEMZOI_REFUSED`, such as ``credential_token``, ``invalid_encoding``, ``canonical_path``,
``ignored_untracked`` and the framing/schema errors of :data:`memzoi.base.findings.UNTYPED` (``invalid_value``,
``unknown_key`` …: Memzoi refuses such a record as ``typed-record``); the git-plane gate; and ``invalid_config``) can be
neither disabled nor given another severity, and a file matched by ``ignore`` still reports them: an ignored path
silences everything that may be silenced, never a secret, a gate or the configuration's own error. Only
``severity``, ``disabled`` and ``ignore`` are settings; :func:`screen_rules` takes out any other key and any entry
that is not valid, one by one, so the valid entries beside it still apply.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..base.findings import (
    ADMISSION_REFUSALS,
    CODES,
    MEMZOI_REASON_CODES,
    MEMZOI_REFUSED,
    UNSUPPRESSIBLE,
    Finding,
    Severity,
)

SeverityName = Literal["error", "warning", "information", "hint"]


def rule_problem(code: str, *, disabling: bool, level: str | None = None) -> str | None:
    """Why ``code`` cannot be disabled (``disabling``) or set to ``level``; ``None`` when it can.

    The one home of the unsuppressible-code rule (SPEC §4) for the project file and the editor settings.
    """
    if code not in CODES:
        return f"`{code}` is not a diagnostic code (see `memzoi explain`)"
    if code in UNSUPPRESSIBLE:
        if code in MEMZOI_REFUSED:
            reason = ADMISSION_REFUSALS.get(code) or (code if code in MEMZOI_REASON_CODES else "typed-record")
            cannot = ": it cannot type the record" if reason == "typed-record" else ""
            why = f"Memzoi refuses a file for it as `{reason}`{cannot}; no setting hides what Memzoi refuses"
        elif code == "invalid_config":
            why = "the configuration's own errors are never suppressed"
        else:
            why = "git-plane gate findings are never suppressed"
        if disabling:
            return f"`{code}` cannot be disabled ({why})"
        if level is not None and Severity[level.upper()] != CODES[code][0]:
            return f"`{code}` cannot be downgraded ({why})"
    return None


def ignore_problem(pattern: object) -> str | None:
    """Why ``pattern`` is no valid ``ignore`` entry; ``None`` when it is one."""
    if not isinstance(pattern, str):
        return "each ignore pattern must be a string"
    if not pattern.strip() or pattern.startswith("/") or ".." in pattern.split("/"):
        return f"ignore pattern {pattern!r} must be a non-empty path inside the .memzoi folder"
    return None


#: The settings of ``[rules]``.
RULE_KEYS = ("severity", "disabled", "ignore")
_LEVELS = ("error", "warning", "information", "hint")


def screen_rules(raw: object) -> tuple[object, list[tuple[tuple[str, ...], str]]]:
    """``[rules]`` as read from TOML, with every entry that is not valid taken out, and the problems: ``(location,
    message)`` pairs, the location below ``rules`` (``("disabled", "private_key")`` for an entry of a list,
    ``("disable",)`` for a key). A bad entry costs only itself: the valid ones next to it still apply (the caller
    says so). A section that is no table is returned as it is, for the model to refuse."""
    if not isinstance(raw, dict):
        return raw, []
    problems: list[tuple[tuple[str, ...], str]] = []
    clean: dict[str, object] = {}
    for key, value in raw.items():
        if key not in RULE_KEYS:
            near = difflib.get_close_matches(key, RULE_KEYS, 1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            problems.append(
                ((key,), f"not a [rules] setting{hint}; the settings are `severity`, `disabled` and `ignore`")
            )
        elif key == "severity":
            if not isinstance(value, dict):
                problems.append(((key,), '`severity` must be a table of `code = "error|warning|information|hint"`'))
                continue
            good = {}
            for code, level in value.items():
                problem = (
                    f"`{level}` is not a severity; use one of {', '.join(_LEVELS)}"
                    if level not in _LEVELS
                    else rule_problem(code, disabling=False, level=level)
                )
                if problem:
                    problems.append(((key, code), problem))
                else:
                    good[code] = level
            clean[key] = good
        else:
            if not isinstance(value, list):
                problems.append(((key,), f"`{key}` must be a list of strings"))
                continue
            good_items = []
            for item in value:
                if key == "disabled":
                    problem = (
                        rule_problem(item, disabling=True)
                        if isinstance(item, str)
                        else "each disabled code must be a string"
                    )
                else:
                    problem = ignore_problem(item)
                if problem:
                    problems.append(((key, str(item)), problem))
                else:
                    good_items.append(item)
            clean[key] = good_items
    return clean, problems


class RulesSection(BaseModel):
    """``[rules]``: how findings are graded and which are shown."""

    # our own section: a misspelt setting (`disable`, `severities`) is an error, never silently ignored
    model_config = ConfigDict(extra="forbid", frozen=True)

    severity: dict[str, SeverityName] = Field(
        default_factory=dict,
        description="Severity per diagnostic code (`error`, `warning`, `information` or `hint`). `memzoi check` "
        "fails on errors (or on what `--fail-on` names). A code Memzoi refuses a file for keeps its severity: its "
        "write-safety, reason and admission codes, and every framing or schema error (`invalid_value`, `unknown_key`, "
        "`missing_key`, `yaml_syntax` …: Memzoi cannot type such a record and refuses it as `typed-record`).",
    )
    disabled: list[str] = Field(
        default_factory=list,
        description="Diagnostic codes never reported. A code Memzoi refuses a file for (a framing or schema error "
        "among them: `typed-record`) cannot be disabled.",
    )
    ignore: list[str] = Field(
        default_factory=list,
        description="Glob patterns, relative to the `.memzoi` folder (`*` within one folder, `**` across "
        "folders), of files whose findings are not reported, except the codes Memzoi refuses a file for (framing and "
        "schema errors among them) and git-plane gate findings.",
    )

    @field_validator("severity")
    @classmethod
    def _severity(cls, value: dict[str, str]) -> dict[str, str]:
        for code, level in value.items():
            problem = rule_problem(code, disabling=False, level=level)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("disabled")
    @classmethod
    def _disabled(cls, value: list[str]) -> list[str]:
        for code in value:
            problem = rule_problem(code, disabling=True)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("ignore")
    @classmethod
    def _ignore(cls, value: list[str]) -> list[str]:
        for pattern in value:
            problem = ignore_problem(pattern)
            if problem:
                raise ValueError(problem)
        return value


def _glob(pattern: str) -> re.Pattern[str]:
    """A ``/``-separated glob as a regular expression: ``**/`` any folders, ``*`` and ``?`` within a name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"(?:/.*)?\Z")  # a folder pattern covers what is below it


@dataclass(frozen=True)
class Rules:
    """Effective rule settings: ``severity`` overrides, ``disabled`` codes and compiled ``ignore`` patterns."""

    severity: Mapping[str, Severity]
    disabled: frozenset[str]
    ignore: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def from_section(cls, section: RulesSection) -> Rules:
        """The rules of a validated ``[rules]`` section."""
        return cls(
            {c: Severity[l.upper()] for c, l in section.severity.items()},
            frozenset(section.disabled),
            tuple(_glob(p.strip().strip("/")) for p in section.ignore),
        )

    def overlay(self, severity: Mapping[str, str], disabled: Iterable[str]) -> Rules:
        """These rules with per-user additions (editor settings) on top; entries that :func:`rule_problem`
        refuses are skipped (the settings layer reports them)."""
        sev = dict(self.severity)
        for code, level in severity.items():
            if rule_problem(code, disabling=False, level=level) is None:
                sev[code] = Severity[level.upper()]
        off = {c for c in disabled if rule_problem(c, disabling=True) is None}
        return Rules(sev, self.disabled | off, self.ignore)

    def severity_of(self, code: str, default: Severity) -> Severity | None:
        """The severity to report for ``code`` (``None``: disabled)."""
        if code in self.disabled:
            return None
        return self.severity.get(code, default)

    def ignored(self, rel: str | None) -> bool:
        """Whether the file at ``rel`` (``/``-separated, relative to the ``.memzoi`` folder) is ignored."""
        return rel is not None and any(p.match(rel) for p in self.ignore)

    def apply(self, findings: Iterable[Finding], rel: str | None = None) -> list[Finding]:
        """``findings`` with severities applied and disabled codes dropped; in an ignored file only the
        unsuppressible codes remain."""
        ignored = self.ignored(rel)
        out = []
        for f in findings:
            if ignored and f.code not in UNSUPPRESSIBLE:
                continue
            level = self.severity_of(f.code, f.severity)
            if level is None:
                continue
            out.append(f if level == f.severity else replace(f, severity=level))
        return out

    @property
    def is_default(self) -> bool:
        """True when nothing is configured (callers skip :meth:`apply`)."""
        return not (self.severity or self.disabled or self.ignore)


DEFAULT_RULES = Rules({}, frozenset())
