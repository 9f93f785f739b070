"""Findings for the project configuration ``.memzoi/config.toml`` itself: ``invalid_config`` on each setting that
does not validate (and on a syntax error), so ``memzoi check .memzoi/config.toml`` and the editor point at the key.

An invalid file is read as the defaults (:func:`memzoi.config.load_config`), which would otherwise be silent:
``[promotion] mode = "yolo"`` became ``review``. The finding is a warning, so checking the records of a project
whose configuration is broken still passes on their own merits (the command line also says which settings it
used); ``memzoi check`` given the file itself fails on it, and the proposals that depend on a broken section are
refused (:func:`memzoi.config.load_section`). Messages are pydantic's or TOML's and name the key, never the value.
"""

from __future__ import annotations

import re
import tomllib

from pydantic import ValidationError

from .config import MemzoiConfig
from .findings import Finding, finding
from .nesting import nesting_message

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_HEADER = re.compile(r"(?m)^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
_DEFAULTS = "memzoi reads the whole file as the defaults until it is fixed"


def config_findings(text: str) -> list[Finding]:
    """``invalid_config`` findings of the configuration ``text`` (empty when it validates)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = _AT.search(str(err))
        start = _line_start(text, int(m.group(1))) if m else 0
        return [finding("invalid_config", f"invalid TOML ({err}); fix the syntax: {_DEFAULTS}", start,
                        _line_end(text, start))]
    except RecursionError:
        return [finding("invalid_config", f"a value is {nesting_message()}: {_DEFAULTS}", 0, _line_end(text, 0))]
    try:
        MemzoiConfig.model_validate(raw)
    except ValidationError as err:
        out = []
        for e in err.errors(include_url=False, include_input=False):
            loc = [str(p) for p in e["loc"]]
            start, end = _locate(text, loc)
            out.append(finding("invalid_config", f"`{'.'.join(loc)}`: {e['msg']}; {_DEFAULTS}", start, end,
                               key=".".join(loc)))
        return out
    return []


def _line_start(text: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return len(text)
        pos = nxt + 1
    return pos


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _locate(text: str, loc: list[str]) -> tuple[int, int]:
    """The span of the line that sets ``loc`` (``[section]`` then ``key =``, or a dotted ``section.key =``), else
    of the section's header, else of the first line."""
    if not loc:
        return 0, _line_end(text, 0)
    section, key = loc[0], (loc[1] if len(loc) > 1 else None)
    headers = list(_HEADER.finditer(text))
    for i, h in enumerate(headers):
        if h.group(1) != section:
            continue
        body_end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        if key is not None:
            m = re.compile(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=").search(text, h.end(), body_end)
            if m:
                start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
                return start, _line_end(text, start)
        return h.start(), h.end()
    m = re.compile(rf"(?m)^[ \t]*{re.escape(section)}(?:[ \t]*\.[ \t]*{re.escape(key or '')})?[ \t]*=").search(text)
    if m:
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        return start, _line_end(text, start)
    return 0, _line_end(text, 0)
