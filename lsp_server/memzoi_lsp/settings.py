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

These add, per user, to the project's ``[rules]`` in ``.memzoi/config.toml`` (:mod:`memzoi.judge.rules`): a severity
here wins over the project's for that code, and disabled codes are added to the project's. Codes that SPEC §4
makes unsuppressible (Memzoi's write-safety codes and the git-plane gate) can be neither disabled nor
downgraded; such entries are dropped with a warning.

The settings are checked by plain functions, not a validation model: ``initialize`` parses its
``initializationOptions`` before it answers, and a model library would be imported on that path (issue 29,
start-up). The per-code rules (:func:`memzoi.judge.rules.rule_problem`) are loaded only when a setting names codes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memzoi.judge.rules import Rules

SECTION = "memzoi"
SEVERITY_NAMES = ("error", "warning", "information", "hint")
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class Settings:
    """Validated server settings (see the module docstring for the keys)."""

    severity: dict[str, str] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    debounce_ms: int = 200
    log_level: str = "info"
    log_to_client: bool = True
    show_document_timeout_ms: int = 10_000

    def over(self, project: Rules) -> Rules:
        """The project's rules with these settings on top (see the module docstring)."""
        if not (self.severity or self.disabled):
            return project
        return project.overlay(self.severity, self.disabled)


def wire_name(name: str) -> str:
    """The camelCase key of field ``name`` on the wire (``debounce_ms`` → ``debounceMs``)."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def wire_names() -> list[str]:
    """Every settings key as clients send it, in field order (what the editors' configuration must offer)."""
    return [wire_name(f.name) for f in fields(Settings)]


def _int_in(low: int, high: int) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # a client's JSON number written as 200.0
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}")
        return value

    return check


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value not in choices:
            raise ValueError("must be one of " + ", ".join(f"'{c}'" for c in choices))
        return value

    return check


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _severity_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError("must be an object of code → severity")
    bad = sorted(k for k, v in value.items() if v not in SEVERITY_NAMES)
    if bad:
        raise ValueError(f"the severity of {', '.join(bad)} must be one of " + ", ".join(SEVERITY_NAMES))
    return dict(value)


def _code_set(value: Any) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise ValueError("must be a list of codes")
    if not all(isinstance(code, str) for code in value):
        raise ValueError("must be a list of codes (strings)")
    return frozenset(value)


#: Each field's check: returns the value to keep, or raises ``ValueError`` saying what it must be.
_CHECKS: dict[str, Callable[[Any], Any]] = {
    "severity": _severity_map,
    "disabled": _code_set,
    "debounce_ms": _int_in(0, 10_000),
    "log_level": _one_of(LOG_LEVELS),
    "log_to_client": _boolean,
    "show_document_timeout_ms": _int_in(1, 600_000),
}


def _validated(merged: dict[str, Any], problems: list[str]) -> Settings:
    """``merged`` validated; an invalid key is reported in ``problems`` and takes its default. Keys are read in
    camelCase or snake_case; unknown keys are ignored."""
    values: dict[str, Any] = {}
    for name, check in _CHECKS.items():
        wire = wire_name(name)
        key = wire if wire in merged else name if name in merged else None
        if key is None:
            continue
        try:
            values[name] = check(merged[key])
        except ValueError as err:
            problems.append(f"setting `{wire}`: {err}; using the default")
    return Settings(**values)


def _screened(settings: Settings, problems: list[str]) -> Settings:
    """``settings`` without the codes that are unknown or unsuppressible (:func:`memzoi.judge.rules.rule_problem`)."""
    if not (settings.severity or settings.disabled):
        return settings
    from memzoi.judge.rules import rule_problem  # noqa: PLC0415 lazy: start-up

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
    return replace(settings, severity=severity, disabled=frozenset(disabled))


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
    return _screened(_validated(merged, problems), problems), problems
