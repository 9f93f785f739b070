"""Credential detectors by structure: private-key blocks, authorization headers, credentialed and database URLs,
and session tokens (Memzoi's write-safety detectors, reference ``memzoi-format.md`` §3.3, widened to current
shapes, with filters for placeholders, templates and documentation examples). Token shapes are in
:mod:`.tokens`, secrets found through their key name in :mod:`.assignments`; Memzoi's own rules, applied
exactly, are in :mod:`.memzoi_rules`. :func:`secret_hits` runs them all.

Codes: ``private_key``, ``authorization_header``, ``credentialed_url``, ``connection_string``,
``session_token``. Every detector is gated on words (it only runs when one of them occurs in the lower-cased
text).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..base.findings import Severity
from ..base.nesting import json_too_deep
from .assignments import keyed_hits
from .base import PRIORITY, Hit, plausible_secret
from .context import Ctx, gate_words
from .tokens import cloud_hits, token_hits

_PRIVATE, _AUTHORIZATION, _JDBC_WORD = (
    gate_words((b"private",)),
    gate_words((b"authorization",)),
    gate_words((b"jdbc",)),
)
_PASSWORD_WORDS = gate_words((b"password", b"pwd"))
_SERVER_WORDS = gate_words((b"server", b"source", b"host", b"address"))
_COOKIE_WORD, _YA29 = gate_words((b"cookie",)), gate_words((b"ya29",))

_PEM_BEGIN = re.compile(
    r"-----begin[ ]((?:encrypted |rsa |ec |openssh |dsa )?private key|pgp private key(?: block)?|ssh2 encrypted private key)-----"
)
# Header fields (RFC 1421 / OpenPGP armor), then base64 lines separated by any whitespace, YAML indentation,
# quotes or literal "\n" escapes, then the END line.
_PEM_HEADERS = re.compile(r"(?:(?:\s|\\[nr])*[A-Za-z][A-Za-z0-9-]{1,31}:[ \t][^\r\n\\]{0,200})*")
_PEM_BODY = re.compile(r"(?:(?:\s|\\[nrt]|[\"'|>+])*[A-Za-z0-9+/=]{2,})+")
_PEM_END = re.compile(r"(?:\s|\\[nrt]|[\"'>])*-----END[ A-Za-z]{0,40}-----", re.I)
_B64CHAR = re.compile(r"[A-Za-z0-9+/=]")

_AUTH_HEADER = re.compile(
    r"authorization[\"']?\s*[:=]\s*[\"']?(?P<scheme>bearer|basic|token|digest|bot)\s+(?P<v>[a-z0-9._~+/=:-]{8,})"
)
_SCHEME_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,15}$")
_URL_REST = re.compile(r"[^\s<>\"'`]+")
_DB_SCHEME = re.compile(
    r"(?i)^(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|clickhouse|cockroachdb|couchdb|neo4j(?:\+s)?|bolt|oracle|db2|snowflake)$"
)
_JDBC = re.compile(r"jdbc:[a-z0-9]+:(?://)?[^\s<>\"'`]+")
_ADO = re.compile(
    r"(?:server|data source|host|address)\s*=\s*[^;\r\n]+;[^\r\n]*?(?:password|pwd)\s*=\s*(?P<v>[^;\s\"']+)"
)
_SECRET_PARAMS = ("token", "secret", "password", "passwd", "api_key", "apikey", "access_key")
_EXTRA_PARAMS = frozenset(
    {"auth", "sig", "signature", "credential", "credentials", "private_key", "pwd", "pass", "key"}
)
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.(?P<sig>[A-Za-z0-9_-]*)")
_JWT_RUN = re.compile(r"eyJ[A-Za-z0-9_-]*")


def _jwt_matches(text: str) -> Iterator[re.Match[str]]:
    """``_JWT.finditer(text)`` in linear time. A failed match at an ``eyJ`` fails the same way at every later
    ``eyJ`` of its run of token characters (the run ends at the same place and the rest is the same), so only the
    first ``eyJ`` of each run is tried; ``finditer`` itself would try each, scanning the run every time, which
    made a long ``eyJeyJ…`` line quadratic."""
    reach = 0
    for run in _JWT_RUN.finditer(text):
        if run.start() < reach:
            continue
        m = _JWT.match(text, run.start())
        if m is not None:
            reach = m.end()
            yield m


_COOKIE = re.compile(r"cookie\s*:\s*[a-z0-9_.-]{1,64}=(?P<v>[^\s;,\"']{12,})")
_GOOGLE_OAUTH = re.compile(r"ya29\.[A-Za-z0-9_-]{30,}")


def private_key_hits(ctx: Ctx) -> list[Hit]:
    """``private_key``: a PEM/OpenPGP private-key block with a key body (64+ base64 characters), also flattened
    onto one line, inside a YAML block scalar or with ``\\n`` escapes. The span covers header to footer. A bare
    header with no body (prose naming the marker) is not a hit (bug class B41)."""
    if not ctx.any_of(_PRIVATE) or "-----" not in ctx.text or "private key" not in ctx.low:
        return []
    text = ctx.text
    out: list[Hit] = []
    pos = 0
    while True:
        m = _PEM_BEGIN.search(ctx.low, pos)
        if m is None:
            break
        cursor = m.end()
        h = _PEM_HEADERS.match(text, cursor)
        if h:
            cursor = h.end()
        body = _PEM_BODY.match(text, cursor, min(len(text), cursor + 20000))
        b64 = 0
        end = m.end()
        if body:
            b64 = len(_B64CHAR.findall(body.group(0)))
            end = body.end()
            tail = _PEM_END.match(text, end)
            if tail:
                end = tail.end()
        if b64 >= 64:
            out.append(
                Hit("private_key", m.start(), end, m.group(1).upper(), text[m.start() : end], PRIORITY["private_key"])
            )
        pos = max(end, m.end())
    return out


def auth_header_hits(ctx: Ctx) -> list[Hit]:
    """``authorization_header``: ``Authorization: Bearer|Basic|Token …`` with a credential-looking value,
    anywhere on a line (HTTP dumps, curl ``-H`` arguments, YAML)."""
    if not ctx.any_of(_AUTHORIZATION):
        return []
    out = []
    for m in _AUTH_HEADER.finditer(ctx.low):
        if m.start() and (ctx.low[m.start() - 1].isalnum() or ctx.low[m.start() - 1] in "_"):
            continue
        vs, ve = m.start("v"), m.end("v")
        v = ctx.text[vs:ve]
        if not plausible_secret(v, min_len=8, min_entropy=2.8):
            continue
        out.append(
            Hit(
                "authorization_header",
                m.start(),
                ve,
                f"{m.group('scheme').capitalize()} authorization header",
                v,
                PRIORITY["authorization_header"],
            )
        )
    return out


def _placeholder_part(value: str) -> bool:
    v = value.lower()
    return (
        not v
        or v.startswith(("<", "{", "$", "[", "%", "*", "."))
        or v
        in (
            "password",
            "pass",
            "passwd",
            "secret",
            "pwd",
            "token",
            "xxx",
            "xxxx",
            "changeme",
            "redacted",
            "****",
            "example",
        )
        or "example" in v
        or "placeholder" in v
    )


def urls(text: str) -> list[tuple[int, str]]:
    """``(offset, url)`` for every ``scheme://…`` in ``text`` (trailing ``.,)]};:!?`` dropped)."""
    out: list[tuple[int, str]] = []
    pos = text.find("://")
    while pos >= 0:
        m = _SCHEME_BEFORE.search(text, max(0, pos - 16), pos)
        r = _URL_REST.match(text, pos + 3)
        if m and r:
            raw = text[m.start() : r.end()].rstrip(".,)]};:!?")
            out.append((m.start(), raw))
        pos = text.find("://", pos + 3)  # nested URLs (e.g. a decoded `next=` parameter) are candidates too
    return out


def url_hits(ctx: Ctx) -> list[Hit]:
    """``connection_string`` (database/broker URLs, JDBC and ADO.NET strings) and ``credentialed_url``
    (``user:password@`` in the authority, a token as user name, or a query parameter named like a secret).
    At most one hit per URL, in text order, then the JDBC and ADO.NET strings."""
    # no separate "://" test: urls() makes the same single search when there is none
    out = [hit for start, raw in urls(ctx.text) if (hit := _url_hit(start, raw)) is not None]
    return out + _jdbc_hits(ctx) + _ado_hits(ctx)


def _url_hit(start: int, raw: str) -> Hit | None:
    """The hit of the URL ``raw`` found at offset ``start``, if any: a database URL is judged on its own
    (:func:`_database_url_hit`); any other is reported for a password, a token as user name or a secret
    parameter, in that order."""
    if "@" not in raw and "?" not in raw and "#" not in raw and not _DB_SCHEME.match(raw[: raw.index(":")].lower()):
        # Not a database URL (raw starts with its scheme, as urlsplit reads it), no user or password
        # (those need an @), no query or fragment: nothing below can report it.
        return None
    end = start + len(raw)
    try:
        parts = urlsplit(raw)
        user, password, host = parts.username, parts.password, parts.hostname
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if _DB_SCHEME.match(scheme):
        return _database_url_hit(start, raw, scheme, password, host)
    if password and not _placeholder_part(password) and (host or "").lower() not in ("", "host"):
        return Hit("credentialed_url", start, end, "URL with a password in it", raw, PRIORITY["credentialed_url"])
    if user and not password and len(user) >= 16 and plausible_secret(user, min_len=16, min_entropy=3.5):
        return Hit("credentialed_url", start, end, "URL with a token as user name", raw, PRIORITY["credentialed_url"])
    named = _secret_parameter(parts.query, parts.fragment)
    if named is None:
        return None
    # the parameter is named by the vocabulary word it matched, never by the URL's own text
    label = f"URL with a secret in a `{named}` parameter"
    return Hit("credentialed_url", start, end, label, raw, PRIORITY["credentialed_url"])


def _database_url_hit(start: int, raw: str, scheme: str, password: str | None, host: str | None) -> Hit | None:
    """Memzoi reports every database URL with a host (it names a private endpoint); only a template such as
    ``postgres://<user>:<password>@<host>/<db>`` or ``postgres://USER:PASSWORD@HOST`` is documentation."""
    if password is not None:
        real = not _placeholder_part(password) and not password.isupper()
    else:
        real = host is not None and host != "" and not _placeholder_part(host)
        real = real and host not in ("host", "hostname", "server")
    if not real or raw.split("://", 1)[1].startswith(("<", "{", "$")):
        return None
    return Hit(
        "connection_string", start, start + len(raw), f"{scheme} connection string", raw, PRIORITY["connection_string"]
    )


def _secret_parameter(query: str, fragment: str) -> str | None:
    """The vocabulary word (:data:`_SECRET_PARAMS`, :data:`_EXTRA_PARAMS`) naming the first query or fragment
    parameter whose value looks like a secret, or ``None``."""
    if not query and not fragment:
        return None
    for key, value in parse_qsl(query + "&" + fragment, keep_blank_values=True):
        k = key.lower().replace("-", "_")
        named = next((p for p in _SECRET_PARAMS if k == p or k.endswith(p)), k if k in _EXTRA_PARAMS else None)
        if value and named and plausible_secret(value, min_len=6, min_entropy=2.0):
            return named
    return None


def _jdbc_hits(ctx: Ctx) -> list[Hit]:
    """``connection_string`` for a JDBC URL with a password parameter or a user (an ``@``)."""
    out: list[Hit] = []
    if ctx.any_of(_JDBC_WORD):
        for m in _JDBC.finditer(ctx.low):
            if re.search(r"(?:password|pwd)=[^&;\s]+", m.group(0)) or "@" in m.group(0):
                out.append(
                    Hit(
                        "connection_string",
                        m.start(),
                        m.end(),
                        "JDBC connection string",
                        ctx.text[m.start() : m.end()],
                        PRIORITY["connection_string"],
                    )
                )
    return out


def _ado_hits(ctx: Ctx) -> list[Hit]:
    """``connection_string`` for an ADO.NET string (server/data source/host/address, then a plausible password)."""
    out: list[Hit] = []
    text = ctx.text
    if ctx.any_of(_PASSWORD_WORDS) and ctx.any_of(_SERVER_WORDS):
        for m in _ADO.finditer(ctx.low):
            v = text[m.start("v") : m.end("v")]
            if plausible_secret(v, min_len=4, min_entropy=1.5):
                out.append(
                    Hit(
                        "connection_string",
                        m.start(),
                        m.end(),
                        "database connection string with a password",
                        text[m.start() : m.end()],
                        PRIORITY["connection_string"],
                    )
                )
    return out


def _b64json(segment: str) -> dict[str, Any] | None:
    try:
        data = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        if json_too_deep(data) is not None:
            return None  # no JWT header nests; json.loads would recurse once per level
        obj = json.loads(data)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def session_hits(ctx: Ctx) -> list[Hit]:
    """``session_token``: JWTs recognised by structure (a base64url JSON header with ``alg``/``typ``), whatever
    the surrounding key is called; cookies; Google OAuth access tokens. An unsigned ``alg: none`` JWT is a
    warning, and only information inside an example fence (bug class B42). Session, CSRF, access and refresh
    token assignments are found by :func:`keyed_hits`."""
    out: list[Hit] = []
    text = ctx.text
    if "eyJ" in ctx.long_text and ctx.big_words and b"eyj" in ctx.big_prefixes:  # a JWT is a long run with eyJ
        for m in _jwt_matches(text):
            if not ctx.boundary_before(m.start()) or (m.start() and text[m.start() - 1] == "-"):
                continue
            header = _b64json(m.group(0).split(".", 1)[0])
            if header is None or not ({"alg", "typ", "enc", "kid"} & header.keys()):
                continue
            sig = m.group("sig")
            severity = None
            label = "JSON Web Token"
            if len(sig) < 8:
                label = "unsigned JSON Web Token"
                alg = str(header.get("alg", "")).lower()
                severity = Severity.INFORMATION if (alg == "none" and ctx.in_fence(m.start())) else Severity.WARNING
            out.append(Hit("session_token", m.start(), m.end(), label, m.group(0), PRIORITY["session_token"], severity))
    if ctx.any_of(_COOKIE_WORD):
        for m in _COOKIE.finditer(ctx.low):
            vs, ve = m.start("v"), m.end("v")
            if plausible_secret(text[vs:ve], min_len=12, min_entropy=3.0):
                out.append(Hit("session_token", m.start(), ve, "cookie value", text[vs:ve], PRIORITY["session_token"]))
    if ctx.any_of(_YA29):
        for m in _GOOGLE_OAUTH.finditer(text):
            out.append(
                Hit(
                    "session_token",
                    m.start(),
                    m.end(),
                    "Google OAuth access token",
                    m.group(0),
                    PRIORITY["session_token"],
                )
            )
    return out


def secret_hits(ctx: Ctx) -> list[Hit]:
    """Every credential-family hit of the text (overlaps are resolved by the caller)."""
    hits = private_key_hits(ctx)
    hits += cloud_hits(ctx)
    hits += token_hits(ctx)
    hits += session_hits(ctx)
    hits += url_hits(ctx)
    hits += auth_header_hits(ctx)
    hits += keyed_hits(ctx)
    return hits
