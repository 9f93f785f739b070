"""Memzoi's write-safety rules as Memzoi's source states them (``repository_write_safety/detectors.rs@1067190``,
reference ``memzoi-format.md`` §3.3), and their translation from Rust ``regex`` syntax to Python ``re``.

:func:`rust_to_python` is mechanical: ``\\s``/``\\S`` become Unicode ``White_Space`` classes (Python's ``\\s`` also
takes U+001C–U+001F); everything else means the same in both engines, which are leftmost-first with the same
greedy semantics for these patterns. :func:`alternatives` splits a pattern into the alternatives the evaluation
covers one by one.
"""

from __future__ import annotations

import re

#: Memzoi's detectors in its order: (detector name, reason code, Rust regex source), verbatim.
MEMZOI_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (
        "private_key",
        "private_key",
        r"(?i)-----BEGIN (?:(?:ENCRYPTED |RSA |EC |OPENSSH |DSA )?PRIVATE KEY|PGP PRIVATE KEY(?: BLOCK)?)-----",
    ),
    ("authorization_header", "authorization_header", r"(?im)^\s*(?:proxy-)?authorization\s*:\s*(?:bearer|basic)\s+\S+"),
    (
        "known_credential_prefix",
        "credential_token",
        r"(?i)(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}",
    ),
    ("jwt", "session_token", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    (
        "cookie_or_session",
        "session_token",
        r"(?i)(?:set-cookie|cookie)\s*:\s*[^\r\n]+|(?:session(?:id)?|csrf(?:_token)?|auth(?:_token)?)\s*[=:]\s*[^\s,;]{12,}",
    ),
    (
        "connection_string",
        "connection_string",
        r"(?i)(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqps?|mssql)://[^\s]+",
    ),
    (
        "environment_secret",
        "environment_secret",
        r"(?im)^\s*(?:export\s+)?(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY|[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*)\s*=\s*\S+",
    ),
    (
        "cloud_service_account",
        "cloud_credential",
        r'(?i)"type"\s*:\s*"service_account"|"private_key_id"\s*:|AccountKey=[^;\s]+|SharedAccessSignature\s+sr=',
    ),
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
