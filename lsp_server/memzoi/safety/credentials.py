"""Credential detectors: Memzoi's write-safety detectors (reference ``memzoi-format.md`` §3.3) widened to the
token shapes in use today, with filters for placeholders, templates and documentation examples.

Codes: ``credential_token``, ``private_key``, ``authorization_header``, ``credentialed_url``,
``connection_string``, ``session_token``, ``cloud_credential``, ``environment_secret``. Every detector is a
precompiled regex guarded by literal anchors (it only runs when one of its anchors occurs in the lower-cased
text), so a typical record costs a handful of substring tests.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import parse_qsl, urlsplit

from ..findings import Severity
from ..nesting import json_too_deep
from .base import Hit, plausible_secret
from .context import Ctx, gate_words
from .keyed import pairs
from .entropy import shannon

# (label, regex, gate). Regexes start with a literal (fast search); boundaries are checked after the match.
# A gate is a tuple of words (any must occur) or, for prefixes glued to the token body, "big:<prefix>" checked
# against the start of long words.
_TOKEN_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    ("AWS access key id", r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|AIPA|ANPA|ANVA|APKA|AGPA)[A-Z0-9]{16}", ("big:akia", "big:asia", "big:abia", "big:acca", "big:aroa", "big:aida", "big:aipa", "big:anpa", "big:anva", "big:apka", "big:agpa")),
    ("GitHub token", r"gh[pousr]_[A-Za-z0-9_]{20,}", ("ghp", "gho", "ghu", "ghs", "ghr")),
    ("GitHub fine-grained personal access token", r"github_pat_[A-Za-z0-9_]{20,}", ("github",)),
    ("GitLab token", r"gl(?:pat|dt|rt|cbt|ptt|ft|soat|oas)-[A-Za-z0-9_-]{20,}", ("glpat", "gldt", "glrt", "glcbt", "glptt", "glft", "glsoat", "gloas")),
    ("GitLab runner registration token", r"GR1348941[A-Za-z0-9_-]{20,}", ("lit:GR1348941",)),
    ("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}", ("lit:ATBB",)),
    ("Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{60,}", ("lit:ATATT3",)),
    ("Slack token", r"xox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,}", ("xoxa", "xoxb", "xoxp", "xoxo", "xoxs", "xoxr", "xoxe")),
    ("Slack rotating token", r"xoxe\.xox[bp]-\d-[A-Za-z0-9-]{20,}", ("xoxe",)),
    ("Slack app-level token", r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}", ("xapp",)),
    ("Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9]{6,}/[A-Za-z0-9]{16,}", ("slack",)),
    ("Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d{15,}/[A-Za-z0-9_-]{40,}", ("discord", "discordapp")),
    ("Telegram bot token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}", ("lit::AA",)),
    ("Stripe secret key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", ("live", "test")),
    ("Stripe webhook secret", r"whsec_[A-Za-z0-9]{24,}", ("whsec",)),
    ("Square token", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}", ("sq0atp", "sq0csp")),
    ("Braintree access token", r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}", ("production",)),
    ("npm token", r"npm_[A-Za-z0-9]{36}", ("npm",)),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}", ("pypi",)),
    ("RubyGems token", r"rubygems_[a-f0-9]{48}", ("rubygems",)),
    ("NuGet API key", r"oy2[a-z0-9]{43}", ("big:oy2",)),
    ("Docker Hub token", r"dckr_pat_[A-Za-z0-9_-]{27,}", ("dckr",)),
    ("crates.io token", r"cio[A-Za-z0-9]{32}", ("big:cio",)),
    ("Anthropic API key", r"sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{40,}", ("ant",)),
    ("OpenAI-style API key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", ("sk",)),
    ("Hugging Face token", r"hf_[A-Za-z0-9]{30,}", ("hf",)),
    ("Google API key", r"AIza[0-9A-Za-z_-]{35}", ("lit:AIza",)),
    ("Groq API key", r"gsk_[A-Za-z0-9]{40,}", ("gsk",)),
    ("Replicate API token", r"r8_[A-Za-z0-9]{37}", ("r8",)),
    ("Perplexity API key", r"pplx-[A-Za-z0-9]{40,}", ("pplx",)),
    ("xAI API key", r"xai-[A-Za-z0-9]{60,}", ("xai",)),
    ("SendGrid API key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg",)),
    ("Mailgun API key", r"key-[0-9a-zA-Z]{32}", ("key",)),
    ("Twilio API key", r"SK[0-9a-f]{32}", ("big:sk",)),
    ("Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shpat", "shpca", "shppa", "shpss")),
    ("DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}", ("doo", "dop", "dor")),
    ("Linear API key", r"lin_api_[A-Za-z0-9]{40}", ("lin",)),
    ("HashiCorp Vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", ("hvs", "hvb")),
    ("Terraform Cloud token", r"\.atlasv1\.[A-Za-z0-9_=-]{60,}", ("atlasv1",)),
    ("Doppler token", r"dp\.(?:pt|st|sa|ct|scim)\.[A-Za-z0-9]{40,}", ("dp",)),
    ("Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak",)),
    ("Notion integration token", r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})", ("secret", "ntn")),
    ("Sentry token", r"sntr[ysu]_[A-Za-z0-9_=+/-]{40,}", ("sntrys", "sntryu", "sntrys")),
    ("Grafana token", r"gl(?:sa|c)_[A-Za-z0-9_=+/-]{32,}", ("glsa", "glc")),
    ("Supabase token", r"sbp_[a-f0-9]{40}", ("sbp",)),
    ("Figma token", r"figd_[A-Za-z0-9_-]{40,}", ("figd",)),
]

_CLOUD_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    # (label, regex on the lower-cased text when it starts with "(?low)", else on the text, gate words);
    # group "v" (when present) is the secret value and the span.
    ("Google service account key", r'(?low)"type"\s*:\s*"service_account"|"private_key_id"\s*:\s*"[0-9a-f]{8,}', ("service", "private")),
    ("Azure storage account key", r"(?low)accountkey=(?P<v>[a-z0-9+/]{20,}={0,2})", ("accountkey",)),
    ("Azure shared access signature", r"(?low)sharedaccess(?:signature\s+sr=[^\s\"']+|key=(?P<v>[a-z0-9+/]{20,}={0,2}))", ("sharedaccesssignature", "sharedaccesskey")),
    ("Azure SAS token", r"sv=\d{4}-\d{2}-\d{2}&[^\s\"'<>]*?sig=(?P<v>[A-Za-z0-9%+/=]{20,})", ("sig",)),
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{28}", ("gocspx",)),
    ("Alibaba Cloud access key id", r"LTAI[A-Za-z0-9]{12,20}", ("big:ltai",)),
    ("Tencent Cloud secret id", r"AKID[A-Za-z0-9]{32}", ("big:akid",)),
]


def _compile_gate(gate: tuple[str, ...]) -> tuple[frozenset[bytes], frozenset[bytes]]:
    words = frozenset(g.encode() for g in gate if not g.startswith(("big:", "lit:")))
    big = frozenset(g[4:].encode() for g in gate if g.startswith("big:"))
    return words, big


_TOKEN_RES = [(label, re.compile(rx), _compile_gate(gate)) for label, rx, gate in _TOKEN_SHAPES]
_CLOUD_RES = [
    (label, re.compile(rx.removeprefix("(?low)")), rx.startswith("(?low)"), _compile_gate(gate))
    for label, rx, gate in _CLOUD_SHAPES
]
_GATE_WORDS = gate_words(frozenset().union(*(g[0] for *_, g in _TOKEN_RES), *(g[0] for *_, g in _CLOUD_RES)))
# gate words of the detectors below
_PRIVATE, _AUTHORIZATION, _JDBC_WORD = gate_words((b"private",)), gate_words((b"authorization",)), gate_words((b"jdbc",))
_PASSWORD_WORDS = gate_words((b"password", b"pwd"))
_SERVER_WORDS = gate_words((b"server", b"source", b"host", b"address"))
_COOKIE_WORD, _YA29 = gate_words((b"cookie",)), gate_words((b"ya29",))
#: gate word / prefix → indices into _TOKEN_RES, so only shapes whose gate is open are looked at
_TOKEN_BY_GATE: dict[bytes, list[int]] = {}
for _i, (_, _, (_w, _b)) in enumerate(_TOKEN_RES):
    for _g in _w | _b:
        _TOKEN_BY_GATE.setdefault(_g, []).append(_i)
_GATE_BIG = frozenset().union(*(g[1] for *_, g in _TOKEN_RES), *(g[1] for *_, g in _CLOUD_RES))


#: Shapes whose every match is a run of 16+ characters without whitespace (all but the Slack token, whose
#: shortest match has 15): such a match lies inside one of :attr:`Ctx.longs`, so it is also a match in
#: :attr:`Ctx.long_text`, and a search there (a few short runs) tells whether scanning the whole text can find
#: anything. The patterns have no look-around or anchor, so a match's substring matches on its own.
_LONG_ONLY = frozenset(label for label, _, _ in _TOKEN_SHAPES if label != "Slack token")

#: For the shapes reachable through a long word's prefix (``big:…``) or a literal (``lit:…``), and the cloud
#: key ids: substrings of which every match contains one. Every match of these is also a run of 16+ characters
#: without whitespace, so the needles are looked for in :attr:`Ctx.long_text`, and the prefixes of the long
#: words are computed only when a needle is there: without one the shape has no match, whatever its gate says.
_LONG_NEEDLES: dict[str, tuple[str, ...]] = {
    "AWS access key id": ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AGPA"),
    "GitLab runner registration token": ("GR1348941",),
    "Bitbucket app password": ("ATBB",),
    "Atlassian API token": ("ATATT3",),
    "Telegram bot token": (":AA",),
    "NuGet API key": ("oy2",),
    "crates.io token": ("cio",),
    "Google API key": ("AIza",),
    "Twilio API key": ("SK",),
    "OpenAI-style API key": ("sk-",),  # its gate word ``sk`` is also a big-word prefix (Twilio's)
    "Alibaba Cloud access key id": ("LTAI",),
    "Tencent Cloud secret id": ("AKID",),
}


def _guard(needles: tuple[str, ...]) -> str:
    """A substring of every needle (the needle itself when there is one, else a character all share, upper case
    preferred): when it is absent no needle is there, and one test replaces a test per needle."""
    if len(needles) == 1:
        return needles[0]
    common = set(needles[0]).intersection(*needles[1:])
    return min(common, key=lambda c: (not c.isupper(), c))


def _big_opens(index: int) -> frozenset[bytes]:
    """The big-word prefixes that open token shape ``index`` (through :data:`_TOKEN_BY_GATE`)."""
    return frozenset(g for g in _GATE_BIG if index in _TOKEN_BY_GATE.get(g, ()))


#: (index into _TOKEN_RES, guard, needles, big-word prefixes that open it, its literal gates) for every shape a
#: big-word prefix or a literal can open
_TOKEN_LONG = [
    (i, _guard(_LONG_NEEDLES[label]), _LONG_NEEDLES[label], _big_opens(i),
     tuple(g[4:] for g in _TOKEN_SHAPES[i][2] if g.startswith("lit:")))
    for i, (label, _, _) in enumerate(_TOKEN_RES)
    if _big_opens(i) or any(g.startswith("lit:") for g in _TOKEN_SHAPES[i][2])
]
#: the entries of _TOKEN_LONG whose needles are all without capitals (the only ones that can occur in long runs
#: that have no capital letter: ``str.islower``)
_TOKEN_LONG_UNCASED = [entry for entry in _TOKEN_LONG if all(n == n.lower() for n in entry[2])]
_CLOUD_GATE_WORDS = frozenset().union(*(g[0] for *_, g in _CLOUD_RES))
_CLOUD_LONG = [_LONG_NEEDLES.get(label, ()) for label, *_ in _CLOUD_RES]  # single needles: no guard needed
_CLOUD_NEEDLES = tuple(n for needles in _CLOUD_LONG for n in needles)


def _open_big(ctx: Ctx) -> frozenset[bytes]:
    """The big-word gate prefixes (``big:…``) present in ``ctx``; computed once per text, only when asked."""
    cached = ctx.__dict__.get("_credential_big")
    if cached is None:
        cached = ctx.__dict__["_credential_big"] = ctx.big_prefixes & _GATE_BIG if ctx.big_words else frozenset()
    return cached


_PEM_BEGIN = re.compile(
    r"-----begin[ ]((?:encrypted |rsa |ec |openssh |dsa )?private key|pgp private key(?: block)?|ssh2 encrypted private key)-----"
)
# Header fields (RFC 1421 / OpenPGP armor), then base64 lines separated by any whitespace, YAML indentation,
# quotes or literal "\n" escapes, then the END line.
_PEM_HEADERS = re.compile(r"(?:(?:\s|\\[nr])*[A-Za-z][A-Za-z0-9-]{1,31}:[ \t][^\r\n\\]{0,200})*")
_PEM_BODY = re.compile(r"(?:(?:\s|\\[nrt]|[\"'|>+])*[A-Za-z0-9+/=]{2,})+")
_PEM_END = re.compile(r"(?:\s|\\[nrt]|[\"'])*-----END[ A-Za-z]{0,40}-----", re.I)
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
_EXTRA_PARAMS = frozenset({"auth", "sig", "signature", "credential", "credentials", "private_key", "pwd", "pass", "key"})
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.(?P<sig>[A-Za-z0-9_-]*)")
_COOKIE = re.compile(r"cookie\s*:\s*[a-z0-9_.-]{1,64}=(?P<v>[^\s;,\"']{12,})")
_GOOGLE_OAUTH = re.compile(r"ya29\.[A-Za-z0-9_-]{30,}")
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

_PRIORITY = {
    "private_key": 0,
    "cloud_credential": 10,
    "credential_token": 20,
    "session_token": 30,
    "connection_string": 40,
    "credentialed_url": 50,
    "authorization_header": 60,
    "environment_secret": 70,
    "credential_assignment": 80,
    "high_entropy_value": 90,
}


def _allowlisted(token: str) -> bool:
    # AWS's documented example key ids end in EXAMPLE (bug class B39); other vendors' docs use the same habit.
    up = token.upper()
    return "EXAMPLE" in up


def token_hits(ctx: Ctx) -> list[Hit]:
    """``credential_token``: known token shapes of cloud, VCS, chat, payment, registry and model providers."""
    out: list[Hit] = []
    text = ctx.text
    indices = {i for g in ctx.words & _GATE_WORDS for i in _TOKEN_BY_GATE.get(g, ())}
    long_text = ctx.long_text
    if long_text:
        # A shape opened by a big-word prefix or a literal is tried when that gate is open, but the needle test
        # comes first: without a needle in the long runs the shape has no match anyway (see _LONG_NEEDLES).
        for index, guard, needles, big, literals in _TOKEN_LONG_UNCASED if long_text.islower() else _TOKEN_LONG:
            if guard in long_text and index not in indices and any(n in long_text for n in needles) and (
                any(lit in text for lit in literals) or (big and not _open_big(ctx).isdisjoint(big))
            ):
                indices.add(index)
    for index in sorted(indices):
        label, rx, _ = _TOKEN_RES[index]
        if label in _LONG_ONLY and rx.search(long_text) is None:
            continue  # no match in the long runs, so none in the text (see _LONG_ONLY)
        for m in rx.finditer(text):
            tok = m.group(0)
            if not (ctx.boundary_before(m.start()) and ctx.boundary_after(m.end())) and label != "Terraform Cloud token":
                continue
            if _allowlisted(tok) or len(set(tok)) < 8:
                continue
            if label == "OpenAI-style API key" and (not re.search(r"\d", tok) or not re.search(r"[A-Z]", tok)):
                continue
            if label in ("Twilio API key", "crates.io token", "NuGet API key", "Mailgun API key") and shannon(tok) < 3.5:
                continue
            if label == "Hugging Face token" and not (re.search(r"[a-z]", tok[3:]) and re.search(r"[A-Z]", tok[3:])):
                continue
            out.append(Hit("credential_token", m.start(), m.end(), label, tok, _PRIORITY["credential_token"]))
    return out


def cloud_hits(ctx: Ctx) -> list[Hit]:
    """``cloud_credential``: service-account JSON, Azure keys and SAS signatures, Google OAuth client secrets,
    Alibaba/Tencent key ids. AWS secret access keys are found through their key name (:func:`keyed_hits`)."""
    out: list[Hit] = []
    words = ctx.words & _CLOUD_GATE_WORDS
    long_text = ctx.long_text
    if not words and not any(n in long_text for n in _CLOUD_NEEDLES):
        return out  # no gate word, and no key id that a big-word gate could let through
    for (label, rx, on_low, gate), needles in zip(_CLOUD_RES, _CLOUD_LONG):
        if words.isdisjoint(gate[0]) and not (
            gate[1] and any(n in long_text for n in needles) and not _open_big(ctx).isdisjoint(gate[1])
        ):
            continue  # gate closed (a big-word gate is only computed when a needle shows a match is possible)
        for m in rx.finditer(ctx.low if on_low else ctx.text):
            has_v = bool(m.groupdict().get("v"))
            start, end = (m.start("v"), m.end("v")) if has_v else (m.start(), m.end())
            value = ctx.text[start:end]
            if _allowlisted(value):
                continue
            out.append(Hit("cloud_credential", start, end, label, value, _PRIORITY["cloud_credential"]))
    return out


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
            out.append(Hit("private_key", m.start(), end, m.group(1).upper(), text[m.start():end], _PRIORITY["private_key"]))
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
        out.append(Hit("authorization_header", m.start(), ve, f"{m.group('scheme').capitalize()} authorization header", v, _PRIORITY["authorization_header"]))
    return out


def _placeholder_part(value: str) -> bool:
    v = value.lower()
    return (not v or v.startswith(("<", "{", "$", "[", "%", "*", ".")) or v in ("password", "pass", "passwd", "secret",
            "pwd", "token", "xxx", "xxxx", "changeme", "redacted", "****", "example") or "example" in v or "placeholder" in v)


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
    (``user:password@`` in the authority, a token as user name, or a query parameter named like a secret)."""
    out: list[Hit] = []
    text = ctx.text
    # no separate "://" test: urls() makes the same single search when there is none
    for start, raw in urls(text):
        if "@" not in raw and "?" not in raw and "#" not in raw and not _DB_SCHEME.match(raw[: raw.index(":")].lower()):
            # Not a database URL (raw starts with its scheme, as urlsplit reads it), no user or password
            # (those need an @), no query or fragment: nothing below can report it.
            continue
        end = start + len(raw)
        try:
            parts = urlsplit(raw)
            user, password, host = parts.username, parts.password, parts.hostname
        except ValueError:
            continue
        scheme = parts.scheme.lower()
        if _DB_SCHEME.match(scheme):
            # Memzoi reports every database URL with a host (it names a private endpoint); only a
            # template such as postgres://<user>:<password>@<host>/<db> or postgres://USER:PASSWORD@HOST is
            # documentation.
            if password is not None:
                real = not _placeholder_part(password) and not password.isupper()
            else:
                real = bool(host) and not _placeholder_part(host) and host not in ("host", "hostname", "server")
            if real and not raw.split("://", 1)[1].startswith(("<", "{", "$")):
                out.append(Hit("connection_string", start, end, f"{scheme} connection string", raw, _PRIORITY["connection_string"]))
            continue
        if password and not _placeholder_part(password) and (host or "").lower() not in ("", "host"):
            out.append(Hit("credentialed_url", start, end, "URL with a password in it", raw, _PRIORITY["credentialed_url"]))
            continue
        if user and not password and len(user) >= 16 and plausible_secret(user, min_len=16, min_entropy=3.5):
            out.append(Hit("credentialed_url", start, end, "URL with a token as user name", raw, _PRIORITY["credentialed_url"]))
            continue
        if parts.query or parts.fragment:
            for key, value in parse_qsl(parts.query + "&" + parts.fragment, keep_blank_values=True):
                k = key.lower().replace("-", "_")
                named = any(k == p or k.endswith(p) for p in _SECRET_PARAMS) or k in _EXTRA_PARAMS
                if value and named and plausible_secret(value, min_len=6, min_entropy=2.0):
                    out.append(Hit("credentialed_url", start, end, f"URL with a secret in the `{key}` parameter", raw, _PRIORITY["credentialed_url"]))
                    break
    if ctx.any_of(_JDBC_WORD):
        for m in _JDBC.finditer(ctx.low):
            if re.search(r"(?:password|pwd)=[^&;\s]+", m.group(0)) or "@" in m.group(0):
                out.append(Hit("connection_string", m.start(), m.end(), "JDBC connection string", text[m.start():m.end()], _PRIORITY["connection_string"]))
    if ctx.any_of(_PASSWORD_WORDS) and ctx.any_of(_SERVER_WORDS):
        for m in _ADO.finditer(ctx.low):
            v = text[m.start("v"):m.end("v")]
            if plausible_secret(v, min_len=4, min_entropy=1.5):
                out.append(Hit("connection_string", m.start(), m.end(), "database connection string with a password", text[m.start():m.end()], _PRIORITY["connection_string"]))
    return out


def _b64json(segment: str) -> dict | None:
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
        for m in _JWT.finditer(text):
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
            out.append(Hit("session_token", m.start(), m.end(), label, m.group(0), _PRIORITY["session_token"], severity))
    if ctx.any_of(_COOKIE_WORD):
        for m in _COOKIE.finditer(ctx.low):
            vs, ve = m.start("v"), m.end("v")
            if plausible_secret(text[vs:ve], min_len=12, min_entropy=3.0):
                out.append(Hit("session_token", m.start(), ve, "cookie value", text[vs:ve], _PRIORITY["session_token"]))
    if ctx.any_of(_YA29):
        for m in _GOOGLE_OAUTH.finditer(text):
            out.append(Hit("session_token", m.start(), m.end(), "Google OAuth access token", m.group(0), _PRIORITY["session_token"]))
    return out


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
            if not _allowlisted(value) and shannon(value) >= 4.0:
                out.append(Hit("cloud_credential", p.start, p.end, "AWS secret access key", value, _PRIORITY["cloud_credential"]))
            continue
        if p.norm in _SESSION_KEYS or p.norm.endswith(("_session_id", "_sessionid", "_csrf_token", "_access_token", "_refresh_token")):
            if plausible_secret(value, min_len=12, min_entropy=3.0):
                out.append(Hit("session_token", p.start, p.end, f"session or access token in `{key}`", value, _PRIORITY["session_token"] + 5))
            continue
        if p.sep == "=" and p.line_start and any(w in p.key.upper() for w in _ENV_WORDS) and re.fullmatch(r"[a-z_][a-z0-9_]*", p.key):
            if plausible_secret(value, min_len=6, min_entropy=2.2):
                out.append(Hit("environment_secret", p.start, p.end, f"secret in environment variable `{key}`", value, _PRIORITY["environment_secret"]))
            continue
        if _secret_key(p.norm) and plausible_secret(value, min_len=8, min_entropy=2.8):
            out.append(Hit("credential_token", p.start, p.end, f"credential assigned to `{key}`", value, _PRIORITY["credential_assignment"]))
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
