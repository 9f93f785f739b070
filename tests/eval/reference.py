"""An independent reading of Memzoi's write-safety detectors (reference ``memzoi-format.md`` §3.3), written from the
reference text for the evaluation only: which Memzoi reason codes does Memzoi's gate give a text?

:func:`codes` leaves out the entropy catch-all where a more specific Memzoi match covers it, as our scan does.
It shares no code with ``memzoi.safety``: plain ``re`` on the regexes as the reference prints them (Python's
``\\s`` is close enough to Rust's here), ``urllib.parse`` for URLs, and its own entropy arithmetic. The evaluation
treats its answer as ground truth beside each snippet's own label, and checks that our detectors report every
code it gives (the floor).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

PATTERNS = {
    "private_key": (
        "private_key",
        r"(?i)-----BEGIN (?:(?:ENCRYPTED |RSA |EC |OPENSSH |DSA )?PRIVATE KEY|PGP PRIVATE KEY(?: BLOCK)?)-----",
    ),
    "authorization_header": ("authorization_header", r"(?im)^\s*(?:proxy-)?authorization\s*:\s*(?:bearer|basic)\s+\S+"),
    "known_credential_prefix": (
        "credential_token",
        r"(?i)(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}",
    ),
    "jwt": ("session_token", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "cookie_or_session": (
        "session_token",
        r"(?i)(?:set-cookie|cookie)\s*:\s*[^\r\n]+|(?:session(?:id)?|csrf(?:_token)?|auth(?:_token)?)\s*[=:]\s*[^\s,;]{12,}",
    ),
    "connection_string": (
        "connection_string",
        r"(?i)(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqps?|mssql)://[^\s]+",
    ),
    "environment_secret": (
        "environment_secret",
        r"(?im)^\s*(?:export\s+)?(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY|[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*)\s*=\s*\S+",
    ),
    "cloud_service_account": (
        "cloud_credential",
        r'(?i)"type"\s*:\s*"service_account"|"private_key_id"\s*:|AccountKey=[^;\s]+|SharedAccessSignature\s+sr=',
    ),
}
_COMPILED = {name: (code, re.compile(rx)) for name, (code, rx) in PATTERNS.items()}
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s<>]+")
_TOKEN = re.compile(r"[A-Za-z0-9_+/=-]{32,256}")
_NAMES = ("token", "secret", "password", "passwd", "api_key", "apikey", "access_key")
_PLACEHOLDERS = ("example", "placeholder", "replace", "redacted", "xxxxxxxx", "your_token")


def _credentialed(candidate: str) -> bool:
    try:
        parts = urlsplit(candidate)
        user, password = parts.username, parts.password
        parts.port  # noqa: B018 - raises for a port that does not parse, as the Rust parser refuses it
    except ValueError:
        return False
    if user or password:
        return True
    return any(
        (k.lower() == n or k.lower().endswith(n)) and v.strip()
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        for n in _NAMES
    )


def _entropy(token: str) -> bool:
    token = token.strip("=")
    if not 32 <= len(token) <= 256 or all(c in "0123456789abcdefABCDEF" for c in token):
        return False
    if any(p in token.lower() for p in _PLACEHOLDERS):
        return False
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
            any(c in "_-+/" for c in token),
        )
    )
    n = len(token)
    bits = -sum(k / n * math.log2(k / n) for k in Counter(token.encode()).values())
    return classes >= 3 and bits >= 4.5


_END = re.compile(r"-----END [A-Z ]+-----")


def matches(text: str, *, key_blocks: bool = True) -> list[tuple[str, int, int]]:
    """``(detector, start, end)`` of every match of Memzoi's detectors in ``text``. A ``private_key`` match is
    the header; with ``key_blocks`` its span runs on to the key's END line (or the end of the text), so the key's
    body counts as part of it."""
    out = []
    for name, (_, rx) in _COMPILED.items():
        for m in rx.finditer(text):
            end = m.end()
            if name == "private_key" and key_blocks:
                footer = _END.search(text, end)
                end = footer.end() if footer else len(text)
            out.append((name, m.start(), end))
    for m in _URL.finditer(text):
        candidate = m.group(0).rstrip(".,)]}")
        if _credentialed(candidate):
            out.append(("credentialed_url", m.start(), m.start() + len(candidate)))
    for m in _TOKEN.finditer(text):
        # Memzoi skips the rule only for fields it types as digests; a snippet is text, wherever a digest stands
        if _entropy(m.group(0)):
            out.append(("bounded_entropy", m.start(), m.end()))
    return out


def detectors(text: str) -> set[str]:
    """Names of the Memzoi detectors that match ``text`` (``credentialed_url`` and ``bounded_entropy`` included)."""
    return {name for name, _, _ in matches(text)}


CODE_OF = {name: code for name, (code, _) in PATTERNS.items()} | {
    "credentialed_url": "credentialed_url",
    "bounded_entropy": "high_entropy_value",
}


def codes(text: str) -> set[str]:
    """Memzoi reason codes its gate gives ``text``, less ``high_entropy_value`` where each of its matches lies
    inside a match of another Memzoi detector (the catch-all adds nothing there; our detectors do not repeat it)."""
    found = matches(text)
    out = {CODE_OF[d] for d, _, _ in found if d != "bounded_entropy"}
    if any(
        d == "bounded_entropy" and not any(o != d and os <= s and e <= oe for o, os, oe in found) for d, s, e in found
    ):
        out.add("high_entropy_value")
    return out
