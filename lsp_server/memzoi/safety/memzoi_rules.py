"""Memzoi's write-safety detectors, applied exactly: the floor under every other detector.

Source: ``repository_write_safety/detectors.rs@1067190`` (reference ``memzoi-format.md`` §3.3). Memzoi refuses a
file when any of these matches anywhere in its bytes (read-side admission scans the whole file as one rendered
projection), so every match here is an error with Memzoi's reason code, whose span is the matched text (leading
whitespace that ``^\\s*`` took in is left out of the span). The other detectors may add findings beside these;
they never remove one (see :func:`memzoi.safety.scan.collect_hits`).

The regexes are Memzoi's source text (:data:`MEMZOI_PATTERNS`), translated mechanically from Rust ``regex``
syntax by :func:`rust_to_python`: ``\\s``/``\\S`` become Unicode ``White_Space`` classes (Python's ``\\s`` also
takes U+001C–U+001F). Both engines are leftmost-first with the same greedy semantics for these patterns.

Cheap gates (a substring every match must contain) decide whether a regex runs at all; a gate is skipped when the
text holds a character that case-insensitive matching folds onto an ASCII letter (``ſ``, ``K``, ``İ``, ``ı``),
so the gates never change the result (``tests/safety/test_fast_paths.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote_plus

from .base import Hit
from .context import Ctx
from .entropy import char_classes, shannon

#: Memzoi's detectors in its order: (detector name, reason code, Rust regex source), verbatim.
MEMZOI_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("private_key", "private_key",
     r"(?i)-----BEGIN (?:(?:ENCRYPTED |RSA |EC |OPENSSH |DSA )?PRIVATE KEY|PGP PRIVATE KEY(?: BLOCK)?)-----"),
    ("authorization_header", "authorization_header",
     r"(?im)^\s*(?:proxy-)?authorization\s*:\s*(?:bearer|basic)\s+\S+"),
    ("known_credential_prefix", "credential_token",
     r"(?i)(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}"),
    ("jwt", "session_token", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("cookie_or_session", "session_token",
     r"(?i)(?:set-cookie|cookie)\s*:\s*[^\r\n]+|(?:session(?:id)?|csrf(?:_token)?|auth(?:_token)?)\s*[=:]\s*[^\s,;]{12,}"),
    ("connection_string", "connection_string", r"(?i)(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqps?|mssql)://[^\s]+"),
    ("environment_secret", "environment_secret",
     r"(?im)^\s*(?:export\s+)?(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY|[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*)\s*=\s*\S+"),
    ("cloud_service_account", "cloud_credential",
     r'(?i)"type"\s*:\s*"service_account"|"private_key_id"\s*:|AccountKey=[^;\s]+|SharedAccessSignature\s+sr='),
)
#: ``credentialed_url`` candidates, the query names it counts (``detectors.rs``), and ``bounded_entropy``.
URL_CANDIDATE_SOURCE = r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s<>]+"
SENSITIVE_QUERY_NAMES = ("token", "secret", "password", "passwd", "api_key", "apikey", "access_key")
TOKEN_CANDIDATE_SOURCE = r"[A-Za-z0-9_+/=-]{32,256}"
ENTROPY_PLACEHOLDERS = ("example", "placeholder", "replace", "redacted", "xxxxxxxx", "your_token")
MIN_ENTROPY_TOKEN, MAX_ENTROPY_TOKEN, ENTROPY_THRESHOLD = 32, 256, 4.5

#: Unicode White_Space (what Rust's ``\s`` means).
WHITE_SPACE = "\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"


def rust_to_python(source: str) -> str:
    """Python ``re`` source for a Rust ``regex`` source of the constructs Memzoi uses: ``\\s`` and ``\\S``
    (outside and inside classes) become explicit Unicode ``White_Space`` classes; everything else is the same."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt == "s":
                out.append(WHITE_SPACE if in_class else f"[{WHITE_SPACE}]")
            elif nxt == "S":
                if in_class:
                    raise ValueError("\\S inside a class is not used by Memzoi's patterns")
                out.append(f"[^{WHITE_SPACE}]")
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if source[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
        elif c == "]" and in_class and out[-1] not in ("[", "^"):
            in_class = False
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def alternatives(source: str) -> list[str]:
    """The top-level alternatives of a regex source (inline flags dropped): the unit the evaluation covers."""
    body = re.sub(r"^\(\?[a-z]+\)", "", source)
    parts, depth, cur, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            cur.append(body[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = body.index("]", i + 2)
            cur.append(body[i : j + 1])
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    if len(parts) == 1 and body.startswith("(?:") and body.endswith(")") and _balanced(body[3:-1]):
        return alternatives(body[3:-1])  # one group around the whole pattern
    return parts


def _balanced(s: str) -> bool:
    depth = 0
    for c in re.sub(r"\\.|\[[^\]]*\]", "", s):
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled Memzoi detector and how it is looked for. ``mode`` is ``anchored`` when every match starts
    with one of the lower-case ``stems`` (the regex is tried only where one occurs in the lower-cased text);
    ``prefix`` likewise, but the stems other than ``xox`` are first looked for in the long runs only (their
    matches are 20+ character runs); ``scheme`` when every match is a stem followed by ``://`` (tried only where
    a ``://`` follows one); ``long`` when every match is a 16+ character run without whitespace (the regex runs on
    the long runs, and only when a stem occurs in one); ``assign`` when every match has a stem followed by
    ``[A-Z0-9_]*\\s*=`` (the regex runs on the whole text when such a stem occurs); or ``gated`` (the regex runs
    on the whole text when a stem occurs in it). Stems are looked for in the lower-cased UTF-8 bytes first
    (faster than a search of a non-ASCII string)."""

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
    "known_credential_prefix": ("prefix", ("akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
                                           "sk_live_", "sk_test_", "npm_", "aiza", "xox")),
    "jwt": ("long", ("eyj",)),
    "cookie_or_session": ("anchored", ("cookie", "session", "csrf", "auth")),  # set-cookie: found from cookie
    "connection_string": ("scheme", ("postgresql", "postgres", "mysql", "mongodb+srv", "mongodb", "redis", "amqps",
                                     "amqp", "mssql")),
    "environment_secret": ("assign", ("secret", "token", "password", "passwd", "api_key", "private_key", "access_key")),
    "cloud_service_account": ("anchored", ('"type"', '"private_key_id"', "accountkey=", "sharedaccesssignature")),
}
RULES: tuple[Rule, ...] = tuple(
    Rule(name, code, re.compile(rust_to_python(src)), _PLANS[name][1], _PLANS[name][0]) for name, code, src in MEMZOI_PATTERNS
)
_STEM_BYTES = {name: tuple(st.encode() for st in plan[1]) for name, plan in _PLANS.items()}
_WS_CHARS = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(map(chr, range(0x2000, 0x200B)))
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
#: what (?i)[a-z0-9+.-] matches (with the letters case-insensitive matching folds onto ASCII)
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-\u017f\u212a\u0130\u0131")
_URL_CANDIDATE = re.compile(rust_to_python(URL_CANDIDATE_SOURCE))
_TOKEN_CANDIDATE = re.compile(TOKEN_CANDIDATE_SOURCE)
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
_PREFIX_LABELS = (("akia", "AWS access key id"), ("asia", "AWS temporary access key id"), ("github_pat_", "GitHub token"),
                  ("gh", "GitHub token"), ("xox", "Slack token"), ("sk_", "Stripe key"), ("npm_", "npm token"),
                  ("aiza", "Google API key"))


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
    plain = not text.isascii() and _ODD_CASE.search(text) is not None  # gates could miss a folded letter
    out: list[Hit] = []
    for rule in RULES:
        for m in pattern_matches(rule, ctx, plain):
            start = m.start()
            if rule.detector in ("authorization_header", "environment_secret"):
                start = _LEADING_WS.match(text, start, m.end()).end()
            out.append(Hit(rule.code, start, m.end(), _label(rule.detector, m.group(0)), m.group(0), memzoi=rule.detector))
    if "://" in text:
        out += url_hits(text)
    out += entropy_hits(ctx)
    return out


def pattern_matches(rule: Rule, ctx: Ctx, plain: bool = False) -> list[re.Match[str]]:
    """``list(rule.regex.finditer(ctx.text))``, computed the cheap way ``rule.mode`` allows (``plain``: the
    plain search)."""
    text, low = ctx.text, ctx.low
    if plain:
        return list(rule.regex.finditer(text))
    if rule.mode == "scheme":
        return _scheme_matches(rule.stems, rule.regex, text, low)
    if rule.mode == "assign":
        return list(rule.regex.finditer(text)) if _assigned(rule.stems, low) else []
    if rule.mode in ("long", "prefix") and not (rule.mode == "prefix" and b"xox" in ctx.low_bytes):
        # every match is a 16+ character run: its stem is in the long runs
        long_low = _long_low(ctx)
        stems = [st for st in rule.stems if st in long_low]
        if not stems:
            return []
        if rule.mode == "long":
            # a match lies inside one run, and the pattern has no look-around: searching each run finds it
            return [m for base, run in ctx.longs for m in rule.regex.finditer(text, base, base + len(run))]
    else:
        if text.isascii():  # a search of an ASCII string is as fast as one of bytes
            stems = [st for st in rule.stems if st in low]
        else:
            low_bytes = ctx.low_bytes
            stems = [st for st, b in zip(rule.stems, rule.stems_b) if b in low_bytes]
        if not stems:
            return []
        if rule.mode == "gated":
            return list(rule.regex.finditer(text))
    positions: set[int] = set()
    for stem in stems:
        i = low.find(stem)
        while i >= 0:
            positions.add(i)
            if stem == "cookie" and i >= 4 and low.startswith("set-", i - 4):
                positions.add(i - 4)
            i = low.find(stem, i + 1)
    return _match_at(rule.regex, text, sorted(positions))


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


def _scheme_matches(schemes: list[str], regex: re.Pattern[str], text: str, low: str) -> list[re.Match[str]]:
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


# ---------------------------------------------------------------------------------------------- credentialed_url
_SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")


def url_hits(text: str) -> list[Hit]:
    """``credentialed_url``: a URL candidate (trailing ``.,)]}`` trimmed) that parses and has a user name, a
    password, or a query pair whose lower-cased name is or ends with one of :data:`SENSITIVE_QUERY_NAMES` and
    whose value is not blank (``detectors.rs::contains_credentialed_url``). Candidates are looked for only just
    before each ``://`` (a candidate's scheme is 2 to 16 characters without ``:``)."""
    out: list[Hit] = []
    for m in url_candidates(text):
        candidate = m.group(0).rstrip(".,)]}")
        if credentialed(candidate):
            out.append(Hit("credentialed_url", m.start(), m.start() + len(candidate),
                           "URL with credentials (Memzoi rule `credentialed_url`)", candidate, memzoi="credentialed_url"))
    return out


def url_candidates(text: str) -> list[re.Match[str]]:
    """``list(URL_CANDIDATE.finditer(text))``, trying the pattern only in the 16 characters before each ``://``."""
    out: list[re.Match[str]] = []
    reach = 0
    i = text.find("://")
    while i >= 0:
        if i >= reach:
            first = i
            while first > max(reach, i - 16) and text[first - 1] in _SCHEME_CHARS:
                first -= 1  # a match starts inside the run of scheme characters before "://"
            for start in range(first, i - 1):
                m = _URL_CANDIDATE.match(text, start)
                if m is not None:
                    out.append(m)
                    reach = m.end()
                    break
        i = text.find("://", i + 1)
    return out


def credentialed(url: str) -> bool:
    """Memzoi's test on one candidate, with the URL read as the WHATWG URL standard (Rust ``url``) reads it:
    user info is what precedes the last ``@`` of the authority; an empty password is no password; a URL whose
    port or host does not parse counts as nothing."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return False
    scheme = scheme.lower()
    special = scheme in _SPECIAL
    stops = "/?#\\" if special else "/?#"
    end = next((i for i, c in enumerate(rest) if c in stops), len(rest))
    authority, tail = rest[:end], rest[end:]
    userinfo, at, hostport = authority.rpartition("@")
    if not _host_parses(hostport, special, scheme):
        return False
    if at:
        user, colon, password = userinfo.partition(":")
        if user or (colon and password):
            return True
    query = tail.split("#", 1)[0]
    if special:
        query = query.replace("\\", "/")
    if "?" not in query:
        return False
    for pair in query.split("?", 1)[1].split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        name = unquote_plus(key).lower()
        if any(name == n or name.endswith(n) for n in SENSITIVE_QUERY_NAMES) and unquote_plus(value).strip():
            return True
    return False


def _host_parses(hostport: str, special: bool, scheme: str) -> bool:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return False
        host, port = hostport[: close + 1], hostport[close + 1 :]
        if port and not port.startswith(":"):
            return False
        port = port[1:]
    else:
        host, _, port = hostport.partition(":")
        if any(c in _FORBIDDEN_HOST for c in host):
            return False
        if special and (any(c == "%" or ord(c) < 0x20 or c == "\x7f" for c in host) or (not host and scheme != "file")):
            return False
    if port and (not port.isascii() or not port.isdigit() or int(port) > 65535):
        return False
    return True


# ---------------------------------------------------------------------------------------------- bounded_entropy
_HEX = re.compile(r"[0-9a-fA-F]+")
_MIN_DISTINCT = 23  # 2 ** 4.5 ≈ 22.6: fewer distinct characters cannot reach the threshold
#: a typed digest (Memzoi exempts fields of kind ``typed_digest`` from this rule): the base64 of a 32, 48 or
#: 64-byte digest after an algorithm name and ``:`` (``sha256:…``, ``blake3:…``), or a subresource-integrity
#: string (``sha256-``/``sha384-``/``sha512-`` and exactly its digest's base64)
_TYPED_PREFIX = re.compile(r"(?i)(?:sha(?:256|384|512)|sha3-(?:256|384|512)|blake2[bs]|blake3):$")
_DIGEST_B64_LENGTHS = frozenset({43, 64, 86})
_SRI = re.compile(r"sha256-[A-Za-z0-9+/]{43}=|sha384-[A-Za-z0-9+/]{64}|sha512-[A-Za-z0-9+/]{86}==")
_ARMOR = re.compile(r"-----BEGIN ([A-Z0-9][A-Z0-9 ]{0,40})-----.*?(?:-----END \1-----|(?=-----BEGIN )|\Z)", re.S)


def entropy_value(token: str) -> bool:
    """Memzoi's ``bounded_entropy`` test on one candidate (``=`` trimmed at both ends first)."""
    token = token.strip("=")
    if not MIN_ENTROPY_TOKEN <= len(token) <= MAX_ENTROPY_TOKEN or _HEX.fullmatch(token):
        return False
    low = token.lower()
    if any(p in low for p in ENTROPY_PLACEHOLDERS) or len(set(token)) < _MIN_DISTINCT:
        return False  # (entropy is at most log2 of the number of distinct characters)
    return char_classes(token) >= 3 and shannon(token) >= ENTROPY_THRESHOLD


def typed_digest(text: str, start: int, token: str) -> bool:
    """True when the candidate ``token`` at ``start`` of ``text`` is a typed digest (see :data:`_SRI`)."""
    if _SRI.fullmatch(token):
        return True
    return len(token.rstrip("=")) in _DIGEST_B64_LENGTHS and _TYPED_PREFIX.search(text, max(0, start - 9), start) is not None


def entropy_hits(ctx: Ctx) -> list[Hit]:
    """``high_entropy_value``: every candidate of :data:`TOKEN_CANDIDATE_SOURCE` (runs longer than 256 are cut
    in 256-character pieces, as the Rust regex does) that :func:`entropy_value` accepts, except typed digests
    (:func:`typed_digest`). Adjacent pieces of one run give one hit; matches inside one armored block (``-----BEGIN …-----`` to ``-----END …-----``) give
    one hit for the whole block, so it has one fingerprint."""
    out: list[Hit] = []
    text = ctx.text
    blocks: list[tuple[int, int, str]] | None = None
    for base, run in ctx.longs:
        if len(run) < MIN_ENTROPY_TOKEN or len(set(run)) < _MIN_DISTINCT:
            continue
        for m in _TOKEN_CANDIDATE.finditer(run):
            token = m.group(0)
            start, end = base + m.start(), base + m.end()
            if not entropy_value(token) or typed_digest(text, start, token):
                continue
            if blocks is None:
                blocks = [(b.start(), b.end(), b.group(1)) for b in _ARMOR.finditer(text)] if "-----BEGIN " in text else []
            block = next(((s, e, kind) for s, e, kind in blocks if s <= start < e), None)
            if block is not None:
                s, e, kind = block
                if not (out and out[-1].start == s):  # the block is reported once
                    out.append(Hit("high_entropy_value", s, e, f"armored {kind} block (Memzoi rule `bounded_entropy`)",
                                   text[s:e], memzoi="bounded_entropy"))
                continue
            last = out[-1] if out else None
            if last is not None and last.end == start and not last.label.startswith("armored"):
                # the next 256-character piece of the same run: one finding for the run
                out[-1] = Hit("high_entropy_value", last.start, end, last.label, text[last.start:end], memzoi="bounded_entropy")
                continue
            out.append(Hit("high_entropy_value", start, end, "high-entropy value (Memzoi rule `bounded_entropy`)", token,
                           memzoi="bounded_entropy"))
    return out
