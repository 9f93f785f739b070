"""Keyed values: ``key: value`` / ``key = value`` / ``KEY=value`` pairs whose key names a secret or personal data.

One engine serves several detectors (Memzoi capture's credential- and PII-assignment rules, reference
``memzoi-format.md`` §3.4, and Memzoi's ``environment_secret`` and ``cookie_or_session`` write-safety
detectors, §3.3). The pattern is built per text from only the key stems whose gate words occur in it (a stem is
the key's last word: ``password``, ``token``, ``ssn`` …), and it is tried only where one of those stems occurs
(:func:`_matches`), so a record costs a few ``str.find`` calls. Each match is expanded backwards to the whole
key, which is then classified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .context import Ctx, gate_words

#: stem → words that must occur for the stem to be searched (any of them).
STEM_GATES: dict[str, tuple[bytes, ...]] = {
    "password": (b"password",),
    "passwd": (b"passwd",),
    "passphrase": (b"passphrase",),
    "pwd": (b"pwd",),
    "pass": (b"pass",),
    "secret": (b"secret",),
    "token": (b"token",),
    "apikey": (b"apikey",),
    "credential": (b"credential", b"credentials"),
    "auth": (b"auth",),
    "key": (b"key", b"api", b"private", b"signing", b"access", b"secret", b"encryption", b"master"),
    "session": (b"session", b"sessionid"),
    "sessid": (b"sessid", b"phpsessid"),
    "csrf": (b"csrf",),
    "xsrf": (b"xsrf",),
    "ssn": (b"ssn",),
    "security": (b"security",),
    "birth": (b"birth",),
    "birthdate": (b"birthdate",),
    "dob": (b"dob",),
    "address": (b"address",),
    "record": (b"medical",),
    "id": (b"patient", b"national", b"tax"),
    "passport": (b"passport",),
    "license": (b"license",),
    "licence": (b"licence",),
    "card": (b"card",),
    "account": (b"account",),
    "iban": (b"iban",),
    "phone": (b"phone",),
    "mobile": (b"mobile",),
    "personnummer": (b"personnummer",),
    "number": (
        b"passport",
        b"card",
        b"account",
        b"routing",
        b"phone",
        b"mobile",
        b"security",
        b"license",
        b"licence",
        b"record",
        b"national",
    ),
    "no": (b"passport",),
}
_ALL_GATES = gate_words(frozenset().union(*STEM_GATES.values()))
#: gate word → positions (in :data:`STEM_GATES` order) of the stems it opens
_STEMS_BY_WORD: dict[bytes, list[int]] = {}
for _i, _words in enumerate(STEM_GATES.values()):
    for _w in _words:
        _STEMS_BY_WORD.setdefault(_w, []).append(_i)
_STEMS = tuple(STEM_GATES)
_VALUE = r"(?P<v>\"[^\"\r\n]{0,300}\"|'[^'\r\n]{0,300}'|[^\s,;\"']{1,300})"
_KEYCHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_RUN = re.compile(r"[a-z0-9_.-]*")  # the key class of :func:`_pattern`


@dataclass(frozen=True, slots=True)
class Pair:
    """One keyed value: the whole key as written (lower-cased), its normalised form (``-``/``.`` → ``_``), the
    separator, the value span (quotes excluded) and whether the key starts its line (after ``export``/``set``,
    list and quote markers); ``line_end`` is the end of that line (line break excluded)."""

    key: str
    norm: str
    key_start: int
    sep: str
    start: int
    end: int
    line_start: bool
    line_end: int
    stem: str = ""


@lru_cache(maxsize=256)
def _pattern(stems: tuple[str, ...]) -> re.Pattern[str]:
    alt = "|".join(sorted(stems, key=len, reverse=True))
    return re.compile(rf"(?P<k>(?P<stem>{alt})[a-z0-9_.-]*)[\"']?[ \t]*(?P<s>:=|=>|:|=)[ \t]*{_VALUE}")


#: open gate words → (stems, pattern); texts of one repository repeat a few such sets
_STEMS_FOR: dict[frozenset[bytes], tuple[tuple[str, ...], re.Pattern[str]]] = {}


def _stems_for(open_words: frozenset[bytes]) -> tuple[tuple[str, ...], re.Pattern[str]]:
    """The stems whose gate has a word in ``open_words``, in :data:`STEM_GATES` order, and their pattern."""
    found = _STEMS_FOR.get(open_words)
    if found is None:
        stems = tuple(_STEMS[i] for i in sorted({i for w in open_words for i in _STEMS_BY_WORD[w]}))
        if len(_STEMS_FOR) >= 4096:
            _STEMS_FOR.clear()  # bounded; a recomputation costs a few microseconds
        found = _STEMS_FOR[open_words] = (stems, _pattern(stems))
    return found


def _matches(pattern: re.Pattern[str], low: str, stems: tuple[str, ...]) -> list[re.Match[str]]:
    """``list(pattern.finditer(low))``, computed by trying ``pattern.match`` only where a stem occurs.

    Every match of :func:`_pattern` begins with one of ``stems``, and the pattern has no look-behind or anchor,
    so a match at a position is the same whether the search arrived there by scanning or was started there;
    taking the stem positions in order and skipping those inside the previous match reproduces ``finditer``
    exactly, but for one thing: after a match with a quoted value, the positions inside the quotes are tried too
    (a quoted value is a YAML scalar, which Memzoi scans as a text of its own, and a scan of it alone finds the
    pairs inside: the file's scan must not hide them behind the outer pair, ``origin_key: "a TOKEN=…"``). On a typical record a stem occurs a few times, so a handful of ``str.find`` calls (C speed) replace
    a regex scan of every character.

    A failed attempt skips the rest of its run of key characters: a match starting anywhere in that run would
    take the same run as its key (the key class is greedy and no separator is a key character) and fail the same
    way after it. Without this, one long line such as ``apikeyapikey…`` cost a match attempt over the whole run
    at every stem, quadratic in the line's length.
    """
    positions: set[int] = set()
    for stem in stems:
        i = low.find(stem)
        while i >= 0:
            positions.add(i)
            i = low.find(stem, i + 1)
    out: list[re.Match[str]] = []
    reach = 0
    match = pattern.match
    for i in sorted(positions):
        if i < reach:
            continue
        m = match(low, i)
        if m is not None:
            out.append(m)
            # the pairs inside a quoted value are tried too (see above)
            reach = m.start("v") + 1 if low[m.start("v")] in "\"'" else m.end()
        else:
            run = _KEY_RUN.match(low, i)
            assert run is not None  # ``[...]*`` matches the empty string: the match never fails
            reach = run.end()
    return out


def pairs(ctx: Ctx, stems: tuple[str, ...] | None = None) -> list[Pair]:
    """Every keyed value of ``ctx`` whose key contains a stem whose gate words occur; computed once per text and
    shared by the credential and personal-data detectors (``stems`` is accepted for readability at call sites:
    callers classify by the whole key)."""
    cached = ctx.__dict__.get("_pairs")
    if cached is None:
        cached = ctx.__dict__["_pairs"] = _all_pairs(ctx)
    return cached  # callers classify by the whole key, so every pair is offered to every caller


def _all_pairs(ctx: Ctx) -> list[Pair]:
    # One pass for every detector that keys on names: the pattern holds only the stems whose words occur.
    open_words = ctx.words & _ALL_GATES
    if not open_words:
        return []
    present, pattern = _stems_for(open_words)
    text, low = ctx.text, ctx.low
    out: list[Pair] = []
    for m in _matches(pattern, low, present):
        ks = m.start("k")
        if ks > 0 and low[ks - 1] in _KEYCHARS:
            # The stem is inside a longer key: expand backwards to its start.
            j, stop = ks, max(0, ks - 64)  # keys are short; bounded so one huge line stays linear
            while j > stop and low[j - 1] in _KEYCHARS:
                j -= 1
            ks = j
        if m.group("s") == ":" and m.end("s") < len(low) and low[m.end("s")] == "/":
            continue  # a URL scheme, not a key
        key = low[ks : m.end("k")].strip(".-_")
        if not key or not key[0].isalpha():
            continue
        vs, ve = m.start("v"), m.end("v")
        if low[vs] == "#" and (m.group("s") != "=" or vs > m.end("s")):
            continue  # a comment, not a value (YAML `key: # …`, `KEY= # …`)
        if text[vs : vs + 1] in "\"'" and ve - vs >= 2:
            vs, ve = vs + 1, ve - 1
        window = max(0, ks - 24)  # only a short lead-in (indentation, `export `) can precede a line-start key
        nl = low.rfind("\n", window, ks)
        if nl < 0 and window > 0:
            line_start = False
        else:
            line_start = low[nl + 1 : ks].strip(" \t\"'>*-") in ("", "export", "set", "$env:")
        eol = low.find("\n", ve, ve + 256)
        out.append(
            Pair(
                key,
                re.sub(r"[-.]", "_", key),
                ks,
                m.group("s"),
                vs,
                ve,
                line_start,
                min(len(low), ve + 256) if eol < 0 else eol,
                m.group("stem"),
            )
        )
    return out
