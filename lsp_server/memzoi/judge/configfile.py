"""The project configuration file as checked content: its problems placed in the text, and its rule names.

``.memzoi/config.toml`` is committed with the records, so it is scanned for secrets like any stray file
(:func:`memzoi.judge.analysis.scan_only`); this module adds what is particular to it:

* :func:`config_findings`: one ``invalid_config`` error per problem :func:`memzoi.judge.config.parse_config` found,
  spanning the setting (the key, the list item or the inline-table entry) or the position tomllib named. An
  invalid configuration fails ``memzoi check`` like any error, in every output format;
* :func:`rule_name_spans`: where ``[rules]`` names diagnostic codes (``session_token = "error"``,
  ``disabled = ["session_token"]``). Those names are this project's vocabulary, not secrets, but
  ``session_token = "error"`` has the shape Memzoi's ``environment_secret`` rule refuses; the scan of this file
  (our own addition: Memzoi never scans it) drops detector findings inside these spans only.

TOML is located line by line (tables, dotted and quoted keys, one level of inline tables, multi-line arrays):
enough to place a finding; the values themselves come from tomllib.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass

from ..base.findings import CODES, Finding, finding
from .config import ConfigProblem, parse_config
from .configplain import CONFIG_NAME
from .workspace import MEMZOI_DIR

_KEY_PART = r'(?:"[^"\n]*"|\'[^\'\n]*\'|[A-Za-z0-9_-]+)'
_DOTTED = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
_HEADER = re.compile(rf"^[ \t]*\[\[?[ \t]*({_DOTTED})[ \t]*\]\]?[ \t]*(?:#.*)?$", re.M)
_ENTRY = re.compile(rf"^[ \t]*({_DOTTED})[ \t]*=[ \t]*", re.M)
_INLINE = re.compile(rf"({_KEY_PART})[ \t]*=[ \t]*")
_PART = re.compile(_KEY_PART)
_LEVEL = r'(?:"(?:error|warning|information|hint)"|\'(?:error|warning|information|hint)\')'


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip("\"'") for p in _PART.findall(dotted))


@dataclass(frozen=True, slots=True)
class _Entry:
    """A ``key = value`` statement: its full key path, the key's span and the value's region (up to the next
    statement or table, which covers a multi-line array)."""

    path: tuple[str, ...]
    key_start: int
    key_end: int
    value_start: int
    region_end: int


def _entries(text: str) -> tuple[list[_Entry], dict[tuple[str, ...], tuple[int, int]]]:
    """Every statement of ``text`` (inline-table members as statements of their own) and the span of each table
    header."""
    marks: list[tuple[int, str, re.Match[str]]] = [(m.start(), "h", m) for m in _HEADER.finditer(text)]
    marks += [(m.start(), "e", m) for m in _ENTRY.finditer(text)]
    marks.sort(key=lambda t: t[0])
    headers: dict[tuple[str, ...], tuple[int, int]] = {}
    out: list[_Entry] = []
    table: tuple[str, ...] = ()
    for i, (_pos, kind, m) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        if kind == "h":
            table = _parts(m.group(1))
            headers.setdefault(table, (m.start(1), m.end(1)))
            continue
        path = table + _parts(m.group(1))
        out.append(_Entry(path, m.start(1), m.end(1), m.end(), end))
        value = text[m.end() : end]
        if value.startswith("{"):  # an inline table: its members are statements too
            for inner in _INLINE.finditer(value, 1, value.find("}") if "}" in value else len(value)):
                s = m.end() + inner.start(1)
                out.append(_Entry(path + _parts(inner.group(1)), s, m.end() + inner.end(1), m.end() + inner.end(), end))
    return out, headers


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


#: What tomllib says, without a line, when a value (an array, an inline table, a multi-line string) opened
#: somewhere is never closed.
_AT_END = "(at end of document)"


def unclosed_line(text: str) -> int | None:
    """The 1-based line where the value that runs to the end of ``text`` starts: the line after the longest prefix
    of whole lines that is valid TOML (tomllib reports such an error only "at end of document"), or ``None`` when
    ``text`` has no such line. Used only for a file that fails to parse; a config file is small."""
    lines = text.splitlines(keepends=True)
    for n in range(len(lines) - 1, -1, -1):
        try:
            tomllib.loads("".join(lines[:n]))
        except (tomllib.TOMLDecodeError, RecursionError):
            continue
        return n + 1
    return None


def _position(text: str, problem: ConfigProblem) -> tuple[int | None, int | None]:
    """``(line, column)`` of a TOML syntax error: as tomllib named it, or for an error only "at end of document"
    the line where the unclosed value starts (:func:`unclosed_line`)."""
    if problem.line is None and not problem.loc and _AT_END in problem.message:
        return unclosed_line(text), 1
    return problem.line, problem.column


def locate(text: str, problem: ConfigProblem) -> tuple[int, int]:
    """The span of ``problem`` in the configuration ``text``: the named position (a TOML syntax error; for a value
    never closed, the line where it starts) to the end of its line; else the deepest statement its location names,
    narrowed to the named list item; else the table's header; else the start of the file."""
    line, column = _position(text, problem)
    if line is not None:
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        index = min(max(line, 1), len(starts)) - 1
        start = min(starts[index] + max((column or 1) - 1, 0), len(text))
        return start, max(start, _line_end(text, starts[index]))
    entries, headers = _entries(text)
    loc = problem.loc
    for depth in range(len(loc), 0, -1):
        found = [e for e in entries if e.path == loc[:depth]]
        if not found:
            continue
        e = found[0]
        if depth < len(loc):  # a list item (or a member the statement holds): its quoted text
            item = re.compile(rf"([\"']){re.escape(loc[depth])}\1")
            m = item.search(text, e.value_start, e.region_end)
            if m:
                return m.start(), m.end()
        return e.key_start, max(e.key_end, _line_end(text, e.value_start))
    for depth in range(len(loc), 0, -1):
        if loc[:depth] in headers:
            return headers[loc[:depth]]
    return 0, 0


def is_config_file(path: str | os.PathLike[str] | None) -> bool:
    """True for a project configuration: ``config.toml`` directly in a ``.memzoi`` folder."""
    if path is None:
        return False
    folder, name = os.path.split(os.path.abspath(path))
    return name == CONFIG_NAME and os.path.basename(folder) == MEMZOI_DIR


def config_findings(text: str) -> list[Finding]:
    """One ``invalid_config`` error per problem of the configuration ``text`` (see :func:`locate`)."""
    loaded = parse_config(text)
    out = []
    for problem in loaded.problems:
        start, end = locate(text, problem)
        message = problem.message
        if _position(text, problem)[0] != problem.line:  # placed on the line of a value never closed
            message = message.replace(_AT_END, "(the value starting here is never closed)")
        out.append(
            finding(
                "invalid_config",
                f"{message}; `memzoi check` fails until the configuration is valid",
                start,
                end,
                setting=".".join(problem.loc[:2]),
            )
        )  # a key path, never a value
    return out


def rule_name_spans(text: str) -> list[tuple[int, int]]:
    """Spans where ``[rules]`` names diagnostic codes: a ``code = "level"`` statement of ``rules.severity`` (a
    table, an inline table or a dotted key) and each quoted code of ``rules.disabled``. Only real code names with
    a severity word for a value count, so any other text of the section is scanned as usual."""
    if "rules" not in text:
        return []
    spans: list[tuple[int, int]] = []
    level = re.compile(_LEVEL)
    for e in _entries(text)[0]:
        if len(e.path) == 3 and e.path[:2] == ("rules", "severity") and e.path[2] in CODES:
            m = level.match(text, e.value_start)
            if m:
                spans.append((e.key_start, m.end()))
        elif e.path == ("rules", "disabled"):
            for m in re.finditer(r"\"([a-z0-9_]+)\"|'([a-z0-9_]+)'", text[e.value_start : e.region_end]):
                if (m.group(1) or m.group(2)) in CODES:
                    spans.append((e.value_start + m.start(), e.value_start + m.end()))
    return spans


def quiet_rule_names(text: str, found: list[Finding]) -> list[Finding]:
    """``found`` without the detector findings that lie inside a span of :func:`rule_name_spans`."""
    spans = rule_name_spans(text)
    if not spans:
        return found
    detectors = {c for c, (_, group) in CODES.items() if group == "detector"}
    return [f for f in found if f.code not in detectors or not any(s <= f.start and f.end <= e for s, e in spans)]


__all__ = ["config_findings", "is_config_file", "locate", "quiet_rule_names", "rule_name_spans", "unclosed_line"]
