"""Secrets found through their key name: ``key: value``, ``key = value``, ``KEY=value`` and ``"key": "value"``
pairs (:mod:`.keyed`) whose key names a credential (Memzoi capture's credential-assignment rule, reference
``memzoi-format.md`` §3.4), an AWS secret key, a session or an environment secret.
"""

from __future__ import annotations

import re

from .base import PRIORITY, Hit, documented_example, plausible_secret
from .context import Ctx
from .entropy import char_classes, is_placeholder, is_wordy, shannon
from .keyed import Pair, pairs

_AWS_SECRET = re.compile(r"^[A-Za-z0-9/+]{40}$")

_KEY_EXACT = frozenset(
    "api_key apikey access_token auth_token refresh_token secret_key client_secret secret token password passwd pwd "
    "credential credentials private_key signing_key passphrase access_key secret_access_key encryption_key "
    "master_key pass".split()
)
_KEY_SUFFIX = (
    "_password",
    "_passwd",
    "_passphrase",
    "_secret",
    "_token",
    "_api_key",
    "_apikey",
    "_secret_key",
    "_access_key",
    "_private_key",
    "_signing_key",
    "_pwd",
    "_credentials",
    "_credential",
    "_pass",
    "_encryption_key",
    "_master_key",
    "password",
    "secret",
    "token",
    "apikey",
    "passwd",
)
_NOT_SECRET_KEYS = frozenset(
    (
        "token_url",
        "token_endpoint",
        "token_type",
        "tokenizer",
        "max_tokens",
        "token_count",
        "token_limit",
        "secret_name",
        "secret_ref",
        "password_policy",
        "bypass",
        "compass",
        "next_token",
        "page_token",
        "continuation_token",
        "csrf_header",
        "token_budget",
    )
)
_SESSION_KEYS = (
    "session",
    "session_id",
    "sessionid",
    "session_token",
    "session_key",
    "sessid",
    "phpsessid",
    "jsessionid",
    "csrf",
    "csrf_token",
    "csrftoken",
    "xsrf_token",
    "auth_token",
    "access_token",
    "refresh_token",
    "id_token",
    "bearer_token",
)
_ENV_WORDS = (
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "CREDENTIAL",
    "_PWD",
    "_PASS",
)
_AWS_KEYS = ("aws_secret", "secret_access_key", "aws_secret_key", "aws_secret_access_key")
#: ``*_key`` names whose values are identifiers or digests, not secrets
_NOT_SECRET_KEY_NAMES = frozenset(
    (
        "cache_key",
        "idempotency_key",
        "primary_key",
        "foreign_key",
        "sort_key",
        "partition_key",
        "range_key",
        "hash_key",
        "row_key",
        "origin_key",
        "lookup_key",
        "dedup_key",
        "dedupe_key",
        "public_key",
        "ssh_public_key",
        "object_key",
        "map_key",
        "group_key",
        "storage_key",
        "i18n_key",
        "translation_key",
        "query_key",
        "key_id",
        "routing_key",
    )
)
_HEX_MATERIAL = re.compile(r"[0-9a-fA-F]{32,}")
_B64_MATERIAL = re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}")
_BLOCK_INDICATOR = re.compile(r"[|>][+-]?[1-9]?[+-]?")


def _secret_key(norm: str) -> bool:
    return norm not in _NOT_SECRET_KEYS and (norm in _KEY_EXACT or norm.endswith(_KEY_SUFFIX))


def _key_like(norm: str) -> bool:
    """``key``, ``*_key``, ``secret``, ``token``, ``password`` and the other credential names."""
    return norm not in _NOT_SECRET_KEY_NAMES and (norm == "key" or norm.endswith("_key") or _secret_key(norm))


def key_material(value: str) -> bool:
    """True for a long hex or base64 value that looks like key material: 32+ hex digits that are not one
    repeated pattern, or 32+ base64/base64url characters of three classes that are not words."""
    if documented_example(value) or is_placeholder(value):
        return False
    if _HEX_MATERIAL.fullmatch(value):
        return shannon(value) >= 3.0
    return (
        bool(_B64_MATERIAL.fullmatch(value))
        and char_classes(value) >= 3
        and shannon(value) >= 4.0
        and not is_wordy(value)
    )


def _block_value(text: str, p: Pair) -> tuple[int, int, str] | None:
    """The content of a YAML block scalar (``key: |`` then indented lines) as ``(start, end, joined lines)``."""
    line_start = text.rfind("\n", 0, p.key_start) + 1
    indent = p.key_start - line_start - len(text[line_start : p.key_start].lstrip(" -"))
    pos = text.find("\n", p.end)
    if pos < 0:
        return None
    start = end = -1
    parts: list[str] = []
    while pos >= 0 and pos + 1 < len(text):
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1 : nxt if nxt >= 0 else len(text)]
        content = line.strip()
        if content:
            if len(line) - len(line.lstrip(" ")) <= indent:
                break
            if start < 0:
                start = pos + 1 + (len(line) - len(line.lstrip()))
            end = pos + 1 + len(line.rstrip())
            parts.append(content)
        pos = nxt
    return (start, end, "".join(parts)) if parts else None


def keyed_hits(ctx: Ctx) -> list[Hit]:
    """Secrets found through their key name (Memzoi capture's credential-assignment rule, reference §3.4):

    * ``cloud_credential``: an AWS secret access key (``aws_secret_access_key`` and kin, 40 characters of
      ``[A-Za-z0-9/+]``; bug class B39);
    * ``session_token``: session ids, CSRF, access, refresh and id tokens;
    * ``environment_secret``: ``NAME=value`` at a line start (optionally ``export``/``set``) whose name says
      secret, token, password, API key, private or access key (Memzoi's ``environment_secret``);
    * ``credential_token``: any other key named like a credential (``password``, ``passphrase``,
      ``client_secret``, ``*_token``, ``*_api_key`` …) with ``:``/``=``; and long hex or base64 key material
      (:func:`key_material`) under a key-like name (``key``, ``*_key``, ``secret``, ``token``, ``password`` …) in
      YAML, INI, env or JSON form, also as a YAML block scalar.

    The value must be plausibly secret (entropy over all printable characters, so punctuation-heavy passwords
    count; bug class B48), and never a placeholder, template or variable reference. Prose such as
    "username/password combination" has no assignment and never matches (bug class B45).
    """
    out: list[Hit] = []
    text = ctx.text
    stems = (
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "pass",
        "secret",
        "token",
        "apikey",
        "credential",
        "auth",
        "key",
        "session",
        "sessid",
        "csrf",
        "xsrf",
    )
    for p in pairs(ctx, stems):
        value = text[p.start : p.end]
        found = len(out)
        _classify(p, value, out)
        if len(out) == found and _key_like(p.norm):
            # key material under a key-like name: a long hex or base64 value, also in a YAML block scalar
            span = (p.start, p.end, value)
            if _BLOCK_INDICATOR.fullmatch(value):
                span = _block_value(text, p) or span
            if key_material(span[2]):
                out.append(
                    Hit(
                        "credential_token",
                        span[0],
                        span[1],
                        f"key material assigned to a `{p.stem}` key",
                        span[2],
                        PRIORITY["credential_assignment"],
                    )
                )
    return out


def _classify(p: Pair, value: str, out: list[Hit]) -> None:
    """The hit of one pair by its key name and value, if any (see :func:`keyed_hits`)."""
    if any(p.norm.endswith(k) for k in _AWS_KEYS) and _AWS_SECRET.match(value):
        if not documented_example(value) and shannon(value) >= 4.0:
            out.append(
                Hit("cloud_credential", p.start, p.end, "AWS secret access key", value, PRIORITY["cloud_credential"])
            )
        return
    if p.norm in _SESSION_KEYS or p.norm.endswith(
        ("_session_id", "_sessionid", "_csrf_token", "_access_token", "_refresh_token")
    ):
        if plausible_secret(value, min_len=12, min_entropy=3.0):
            out.append(
                Hit(
                    "session_token",
                    p.start,
                    p.end,
                    f"session or access token in a `{p.stem}` key",
                    value,
                    PRIORITY["session_token"] + 5,
                )
            )
        return
    if (
        p.sep == "="
        and p.line_start
        and any(w in p.key.upper() for w in _ENV_WORDS)
        and re.fullmatch(r"[a-z_][a-z0-9_]*", p.key)
    ):
        if plausible_secret(value, min_len=6, min_entropy=2.2):
            out.append(
                Hit(
                    "environment_secret",
                    p.start,
                    p.end,
                    f"secret in a `{p.stem.upper()}` environment variable",
                    value,
                    PRIORITY["environment_secret"],
                )
            )
        return
    if _secret_key(p.norm) and plausible_secret(value, min_len=8, min_entropy=2.8):
        out.append(
            Hit(
                "credential_token",
                p.start,
                p.end,
                f"credential assigned to a `{p.stem}` key",
                value,
                PRIORITY["credential_assignment"],
            )
        )
