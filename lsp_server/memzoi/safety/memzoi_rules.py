"""Memzoi's write-safety detectors, applied exactly: the floor under every other detector.

Memzoi refuses a file when any of its detectors matches anywhere in its bytes (read-side admission scans the whole
file as one rendered projection), so every match is an error with Memzoi's reason code, whose span is the matched
text (leading whitespace that ``^\\s*`` took in is left out of the span). The other detectors may add findings
beside these; they never remove one (see :func:`memzoi.safety.scan.collect_hits`). The rules' text is in
:mod:`.memzoi_source`; ``credentialed_url`` and ``bounded_entropy`` are in :mod:`.memzoi_url` and
:mod:`.memzoi_entropy`.

Cheap gates (substrings every match must contain, where they must stand) decide whether and where a regex runs;
the gates are skipped when the text holds a character that case-insensitive matching folds onto an ASCII letter
(``ſ``, ``K``, ``İ``, ``ı``), so they never change the result (``tests/safety/test_fast_paths.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Hit
from .context import Ctx
from .memzoi_entropy import entropy_hits
from .memzoi_linear import LINEAR, matches as linear_matches
from .memzoi_source import MEMZOI_PATTERNS, WHITE_SPACE, rust_to_python
from .memzoi_url import url_hits
from .prefilter import register


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled Memzoi detector and how it is looked for. ``mode`` is ``anchored`` when every match starts
    with one of the lower-case ``stems`` (the regex is tried only where one occurs in the lower-cased text);
    ``prefix`` likewise, but the stems other than ``xox`` are first looked for in the long runs only (their
    matches are 20+ character runs); ``scheme`` when every match is a stem followed by ``://`` (tried only where
    a ``://`` follows one); ``long`` when every match is a 16+ character run without whitespace (the regex runs on
    the long runs, and only when a stem occurs in one); ``assign`` when every match has a stem followed by
    ``[A-Z0-9_]*\\s*=`` (the regex runs on the whole text when such a stem occurs); or ``gated`` (the regex runs
    on the whole text when a stem occurs in it). In a non-ASCII text, stems are first looked for in its
    lower-cased UTF-8 bytes (faster than a search of the string)."""

    detector: str
    code: str
    regex: re.Pattern[str]
    stems: tuple[str, ...]
    mode: str

    @property
    def stems_b(self) -> tuple[bytes, ...]:
        return _STEM_BYTES[self.detector]


_PLANS: dict[str, tuple[str, tuple[str, ...]]] = {
    "private_key": ("anchored", ("-----begin ",)),
    "authorization_header": ("gated", ("authorization",)),
    # every alternative but xox…- (15 characters at least) is a 20+ character run without whitespace
    "known_credential_prefix": (
        "prefix",
        (
            "akia",
            "asia",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "sk_live_",
            "sk_test_",
            "npm_",
            "aiza",
            "xox",
        ),
    ),
    "jwt": ("long", ("eyj",)),
    "cookie_or_session": ("anchored", ("cookie", "session", "csrf", "auth")),  # set-cookie: found from cookie
    "connection_string": (
        "scheme",
        ("postgresql", "postgres", "mysql", "mongodb+srv", "mongodb", "redis", "amqps", "amqp", "mssql"),
    ),
    "environment_secret": ("assign", ("secret", "token", "password", "passwd", "api_key", "private_key", "access_key")),
    "cloud_service_account": ("anchored", ('"type"', '"private_key_id"', "accountkey=", "sharedaccesssignature")),
}
RULES: tuple[Rule, ...] = tuple(
    Rule(name, code, re.compile(rust_to_python(src)), _PLANS[name][1], _PLANS[name][0])
    for name, code, src in MEMZOI_PATTERNS
)
#: the prefilter's name of each rule's pattern (:mod:`.prefilter`)
_GATES = {rule.detector: register(f"memzoi.{rule.detector}", rule.regex) for rule in RULES}
_STEM_BYTES = {name: tuple(st.encode() for st in plan[1]) for name, plan in _PLANS.items()}
_WS_CHARS = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    map(chr, range(0x2000, 0x200B))
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
#: characters that case-insensitive matching folds onto an ASCII letter (Rust: ſ and K; Python also İ and ı)
_ODD_CASE = re.compile("[\u017f\u212a\u0130\u0131]")
_LEADING_WS = re.compile(f"[{WHITE_SPACE}]*")

_LABELS = {
    "private_key": "private key header",
    "authorization_header": "authorization header",
    "jwt": "JSON Web Token",
    "cookie_or_session": "cookie or session value",
    "connection_string": "database connection string",
    "environment_secret": "environment secret assignment",
    "cloud_service_account": "cloud service-account credential",
}
_PREFIX_LABELS = (
    ("akia", "AWS access key id"),
    ("asia", "AWS temporary access key id"),
    ("github_pat_", "GitHub token"),
    ("gh", "GitHub token"),
    ("xox", "Slack token"),
    ("sk_", "Stripe key"),
    ("npm_", "npm token"),
    ("aiza", "Google API key"),
)


def _label(detector: str, matched: str) -> str:
    if detector == "known_credential_prefix":
        low = matched.lower()
        kind = next((label for prefix, label in _PREFIX_LABELS if low.startswith(prefix)), "known credential prefix")
    else:
        kind = _LABELS[detector]
    return f"{kind} (Memzoi rule `{detector}`)"


def memzoi_hits(ctx: Ctx) -> list[Hit]:
    """Every match of Memzoi's write-safety detectors in ``ctx.text`` as an error hit (``memzoi`` set to the
    detector name): the pattern detectors, ``credentialed_url`` and ``bounded_entropy``."""
    text = ctx.text
    plain = needs_plain_search(text)
    out: list[Hit] = []
    for rule in _rules_that_may_match(ctx):
        for m in pattern_matches(rule, ctx, plain):
            start = m.start()
            if rule.detector in ("authorization_header", "environment_secret"):
                ws = _LEADING_WS.match(text, start, m.end())
                assert ws is not None  # ``[...]*`` matches the empty string: the match never fails
                start = ws.end()
            out.append(
                Hit(rule.code, start, m.end(), _label(rule.detector, m.group(0)), m.group(0), memzoi=rule.detector)
            )
    if "://" in text:
        out += url_hits(text)
    out += entropy_hits(ctx)
    return out


#: the rules whose pattern may match, per answer of the prefilter (the texts of a run give a few distinct ones)
_MAY_MATCH: dict[frozenset[str], tuple[Rule, ...]] = {}


def _rules_that_may_match(ctx: Ctx) -> tuple[Rule, ...]:
    """The rules, in :data:`RULES` order, whose pattern may match ``ctx.text`` (:meth:`Ctx.may
    <memzoi.safety.context.Ctx.may>` of each), looked up once per distinct prefilter answer rather than asked
    rule by rule: without the prefilter, every rule."""
    possible = ctx.possible
    if possible is None:
        return RULES
    rules = _MAY_MATCH.get(possible)
    if rules is None:
        if len(_MAY_MATCH) >= 256:
            _MAY_MATCH.clear()  # bounded; recomputing one costs a microsecond
        rules = _MAY_MATCH[possible] = tuple(rule for rule in RULES if _GATES[rule.detector] in possible)
    return rules


def needs_plain_search(text: str) -> bool:
    """True when the cheap gates of :func:`pattern_matches` could miss a match: the text holds a character that
    case-insensitive matching folds onto an ASCII letter (``ſ``, the Kelvin sign, ``İ``, ``ı``), which the lower-cased
    stems and name scans do not see. Such texts are searched the plain way."""
    return not text.isascii() and _ODD_CASE.search(text) is not None


def pattern_matches(rule: Rule, ctx: Ctx, plain: bool = False) -> list[re.Match[str]]:
    """``list(rule.regex.finditer(ctx.text))``, computed the cheap way ``rule.mode`` allows (``plain``: the
    plain search)."""
    text, low = ctx.text, ctx.low
    if plain:
        return _search(rule, text)
    if rule.mode == "scheme":
        return _scheme_matches(rule.stems, rule.regex, text, low)
    if rule.mode == "assign":
        return _search(rule, text) if _assigned(rule.stems, low) else []
    if rule.mode in ("long", "prefix") and not (rule.mode == "prefix" and "xox" in low):
        # every match is a 16+ character run: its stem is in the long runs
        long_low = _long_low(ctx)
        stems = [st for st in rule.stems if st in long_low]
        if not stems:
            return []
        if rule.mode == "long":
            # a match lies inside one run, and the pattern has no look-around: searching each run finds it
            return [m for base, run in ctx.longs for m in _search(rule, text, base, base + len(run))]
    else:
        if text.isascii():  # a search of an ASCII string is as fast as one of bytes
            stems = [st for st in rule.stems if st in low]
        else:
            low_bytes = ctx.low_bytes
            stems = [st for st, b in zip(rule.stems, rule.stems_b) if b in low_bytes]
        if not stems:
            return []
        if rule.mode == "gated":
            return _search(rule, text)
    positions: set[int] = set()
    for stem in stems:
        i = low.find(stem)
        while i >= 0:
            positions.add(i)
            if stem == "cookie" and i >= 4 and low.startswith("set-", i - 4):
                positions.add(i - 4)
            i = low.find(stem, i + 1)
    return _match_at(rule.regex, text, sorted(positions))


def _search(rule: Rule, text: str, pos: int = 0, endpos: int | None = None) -> list[re.Match[str]]:
    """``list(rule.regex.finditer(text, pos, endpos))``; in linear time for the rules whose Python regex would
    backtrack super-linearly on pathological text (:mod:`.memzoi_linear`)."""
    if rule.detector in LINEAR:
        return linear_matches(rule.detector, rule.regex, text, pos, endpos)
    return list(rule.regex.finditer(text, pos, len(text) if endpos is None else endpos))


def _assigned(stems: tuple[str, ...], low: str) -> bool:
    """True when a name holding one of ``stems`` precedes an ``=`` (``NAME\\s*=``): what every match of an
    ``assign`` rule has. Looked for from each ``=`` backwards, as a text has few of them."""
    i = low.find("=")
    while i >= 0:
        j = i
        while j > 0 and low[j - 1] in _WS_CHARS:
            j -= 1
        k = j
        while k > 0 and (low[k - 1] in _NAME_CHARS):
            k -= 1
        if k < j and any(st in low[k:j] for st in stems):
            return True
        i = low.find("=", i + 1)
    return False


def _long_low(ctx: Ctx) -> str:
    """The lower-cased long runs, computed once per text."""
    cached = ctx.__dict__.get("_long_low")
    if cached is None:
        cached = ctx.__dict__["_long_low"] = ctx.long_text.lower()
    return cached


def _match_at(regex: re.Pattern[str], text: str, positions: list[int]) -> list[re.Match[str]]:
    """``finditer`` restricted to ``positions`` (ascending): the same matches when every match starts at one of
    them and the pattern has no look-behind."""
    out: list[re.Match[str]] = []
    reach = 0
    for i in positions:
        if i >= reach and (m := regex.match(text, i)) is not None:
            out.append(m)
            reach = max(m.end(), i + 1)
    return out


def _scheme_matches(schemes: tuple[str, ...], regex: re.Pattern[str], text: str, low: str) -> list[re.Match[str]]:
    # a match is a scheme right before "://": the longest scheme ending there starts the leftmost match
    positions = []
    i = text.find("://")
    while i >= 0:
        for scheme in schemes:  # longest first where one scheme extends another
            if low.endswith(scheme, 0, i):
                positions.append(i - len(scheme))
                break
        i = text.find("://", i + 3)
    return _match_at(regex, text, positions)
