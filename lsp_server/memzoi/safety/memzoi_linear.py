"""Linear-time searches for the Memzoi rules whose Python translation backtracks super-linearly.

Rust's ``regex`` never backtracks; Python's ``re`` does, and three of Memzoi's patterns then take quadratic time
on pathological text (measured: 20,000 blank lines before a ``TOKEN=`` took 51 s):

* ``authorization_header`` and ``environment_secret`` start with ``(?m)^\\s*``: every line start inside one long
  run of white space rescans the rest of the run (``\\s`` takes line breaks);
* ``environment_secret``'s name ``[A-Z][A-Z0-9_]*(?:SECRET|…)[A-Z0-9_]*`` tries every stem occurrence of a long
  name before it fails on a missing ``=``;
* ``jwt``'s ``eyJ[…]{8,}\\.…`` rescans a long run of token characters from every ``eyJ`` in it.

The searches below give exactly ``list(rule.regex.finditer(text))`` (the same spans and the same match objects:
each match is the translated regex's own match at the start found here) while trying each start position in
bounded time. They rest on these facts, checked against the plain search in ``tests/safety/test_fast_paths.py``:

* after ``^\\s*`` every alternative needs a character that is not white space, so ``\\s*`` takes the whole run
  and a match from any line start inside one run continues at the same position: one test per run;
* a quantified class followed by something the class cannot match never gives back a character (possessive
  quantifiers say the same, without the retries);
* a name that ends before ``\\s*=`` is the whole run of name characters, so it matches when that run holds a stem
  after its first letter (a look-ahead finds one in one pass);
* every ``eyJ`` inside one run of token characters ends its first segment where the run ends, so when the first
  of them fails, all of them do.
"""

from __future__ import annotations

import re

from .memzoi_source import WHITE_SPACE, rust_to_python

_STEMS = "SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY"
#: What must follow ``^\s*`` at the end of the white-space run for a match to exist (equivalent rewrites).
_REST = {
    "authorization_header": re.compile(rust_to_python(r"(?i)(?:proxy-)?authorization\s*+:\s*+(?:bearer|basic)\s++\S")),
    "environment_secret": re.compile(
        rust_to_python(rf"(?i)(?:export\s++)?(?:(?:{_STEMS})|[A-Z](?=[A-Z0-9_]*?(?:{_STEMS}))[A-Z0-9_]*+)\s*+=\s*+\S")
    ),
}
_WS_RUN = re.compile(f"[{WHITE_SPACE}]*+")
_JWT_TEST = re.compile(r"eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8}")
_JWT_RUN = re.compile(r"[A-Za-z0-9_-]*+")

#: The detectors this module searches for.
LINEAR = frozenset({*_REST, "jwt"})


def matches(
    detector: str, regex: re.Pattern[str], text: str, pos: int = 0, endpos: int | None = None
) -> list[re.Match[str]]:
    """``list(regex.finditer(text, pos, endpos))`` for ``detector`` (one of :data:`LINEAR`), in linear time."""
    end = len(text) if endpos is None else endpos
    if detector == "jwt":
        return _jwt(regex, text, pos, end)
    return _line_start(_REST[detector], regex, text, pos, end)


def _line_start(rest: re.Pattern[str], regex: re.Pattern[str], text: str, pos: int, end: int) -> list[re.Match[str]]:
    out: list[re.Match[str]] = []
    line = _line_at_or_after(text, pos, end)
    while line is not None:
        ws = _WS_RUN.match(text, line, end)
        assert ws is not None  # ``[...]*+`` matches the empty string: the match never fails
        run_end = ws.end()
        m = regex.match(text, line, end) if rest.match(text, run_end, end) is not None else None
        if m is not None:  # always when ``rest`` matched, by the facts above; the search stays exact regardless
            out.append(m)
            line = _line_at_or_after(text, m.end(), end)
        else:  # every line start up to run_end continues at run_end, which just failed
            line = _line_at_or_after(text, run_end + 1, end) if run_end < end else None
    return out


def _line_at_or_after(text: str, i: int, end: int) -> int | None:
    """The first position ``>= i`` where ``(?m)^`` matches, or ``None`` past ``end``."""
    if i > end:
        return None
    if i == 0 or text[i - 1] == "\n":
        return i
    j = text.find("\n", i, end)
    return None if j < 0 else j + 1


def _jwt(regex: re.Pattern[str], text: str, pos: int, end: int) -> list[re.Match[str]]:
    out: list[re.Match[str]] = []
    i = text.find("eyJ", pos, end)
    while i >= 0:
        if _JWT_TEST.match(text, i, end) is not None and (m := regex.match(text, i, end)) is not None:
            out.append(m)
            i = text.find("eyJ", m.end(), end)
        else:
            # every later eyJ of this run of token characters fails the same way
            run = _JWT_RUN.match(text, i, end)
            assert run is not None  # ``[...]*+`` matches the empty string: the match never fails
            i = text.find("eyJ", run.end(), end)
    return out
