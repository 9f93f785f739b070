"""Secrets found through their key name: ``key: value``, ``key = value``, ``KEY=value`` and ``"key": "value"``
pairs (:mod:`.keyed`) whose key names a credential (Memzoi capture's credential-assignment rule, reference
``memzoi-format.md`` §3.4), an AWS secret key, a session or an environment secret.
"""

from __future__ import annotations

import re

from .base import PRIORITY, Hit, documented_example, plausible_secret
from .context import Ctx
from .entropy import shannon
from .keyed import pairs

_AWS_SECRET = re.compile(r"^[A-Za-z0-9/+]{40}$")

_KEY_EXACT = frozenset(
    "api_key apikey access_token auth_token refresh_token secret_key client_secret secret token password passwd pwd "
    "credential credentials private_key signing_key passphrase access_key secret_access_key encryption_key "
    "master_key pass".split()
)
_KEY_SUFFIX = ("_password", "_passwd", "_passphrase", "_secret", "_token", "_api_key", "_apikey", "_secret_key",
               "_access_key", "_private_key", "_signing_key", "_pwd", "_credentials", "_credential", "_pass",
               "_encryption_key", "_master_key", "password", "secret", "token", "apikey", "passwd")
_NOT_SECRET_KEYS = frozenset(("token_url", "token_endpoint", "token_type", "tokenizer", "max_tokens", "token_count",
                              "token_limit", "secret_name", "secret_ref", "password_policy", "bypass", "compass",
                              "next_token", "page_token", "continuation_token", "csrf_header", "token_budget"))
_SESSION_KEYS = ("session", "session_id", "sessionid", "session_token", "session_key", "sessid", "phpsessid",
                 "jsessionid", "csrf", "csrf_token", "csrftoken", "xsrf_token", "auth_token", "access_token",
                 "refresh_token", "id_token", "bearer_token")
_ENV_WORDS = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY", "PRIVATE_KEY",
              "ACCESS_KEY", "CREDENTIAL", "_PWD", "_PASS")
_AWS_KEYS = ("aws_secret", "secret_access_key", "aws_secret_key", "aws_secret_access_key")


def _secret_key(norm: str) -> bool:
    return norm not in _NOT_SECRET_KEYS and (norm in _KEY_EXACT or norm.endswith(_KEY_SUFFIX))


def keyed_hits(ctx: Ctx) -> list[Hit]:
    """Secrets found through their key name (Memzoi capture's credential-assignment rule, reference §3.4):

    * ``cloud_credential``: an AWS secret access key (``aws_secret_access_key`` and kin, 40 characters of
      ``[A-Za-z0-9/+]``; bug class B39);
    * ``session_token``: session ids, CSRF, access, refresh and id tokens;
    * ``environment_secret``: ``NAME=value`` at a line start (optionally ``export``/``set``) whose name says
      secret, token, password, API key, private or access key (Memzoi's ``environment_secret``);
    * ``credential_token``: any other key named like a credential (``password``, ``passphrase``,
      ``client_secret``, ``*_token``, ``*_api_key`` …) with ``:``/``=``.

    The value must be plausibly secret (entropy over all printable characters, so punctuation-heavy passwords
    count; bug class B48), and never a placeholder, template or variable reference. Prose such as
    "username/password combination" has no assignment and never matches (bug class B45).
    """
    out: list[Hit] = []
    text = ctx.text
    stems = ("password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "apikey", "credential", "auth",
             "key", "session", "sessid", "csrf", "xsrf")
    for p in pairs(ctx, stems):
        value = text[p.start:p.end]
        key = text[p.key_start:p.key_start + len(p.key)]
        if any(p.norm.endswith(k) for k in _AWS_KEYS) and _AWS_SECRET.match(value):
            if not documented_example(value) and shannon(value) >= 4.0:
                out.append(Hit("cloud_credential", p.start, p.end, "AWS secret access key", value, PRIORITY["cloud_credential"]))
            continue
        if p.norm in _SESSION_KEYS or p.norm.endswith(("_session_id", "_sessionid", "_csrf_token", "_access_token", "_refresh_token")):
            if plausible_secret(value, min_len=12, min_entropy=3.0):
                out.append(Hit("session_token", p.start, p.end, f"session or access token in `{key}`", value, PRIORITY["session_token"] + 5))
            continue
        if p.sep == "=" and p.line_start and any(w in p.key.upper() for w in _ENV_WORDS) and re.fullmatch(r"[a-z_][a-z0-9_]*", p.key):
            if plausible_secret(value, min_len=6, min_entropy=2.2):
                out.append(Hit("environment_secret", p.start, p.end, f"secret in environment variable `{key}`", value, PRIORITY["environment_secret"]))
            continue
        if _secret_key(p.norm) and plausible_secret(value, min_len=8, min_entropy=2.8):
            out.append(Hit("credential_token", p.start, p.end, f"credential assigned to `{key}`", value, PRIORITY["credential_assignment"]))
    return out
