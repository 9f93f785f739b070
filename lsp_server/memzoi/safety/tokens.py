"""``credential_token`` and ``cloud_credential`` by token shape: Memzoi's known credential prefixes widened to the
token shapes of cloud, VCS, chat, payment, registry and model providers in use today.

Every shape is a precompiled regex behind a gate: words of the lower-cased text, prefixes of its long words
(``big:…``) or literals (``lit:…``), so a typical record costs a few set look-ups. Shapes whose every match is a
16+ character run are first looked for in the long runs only (:attr:`Ctx.long_text`); the facts these shortcuts
rest on are checked in ``tests/safety/test_fast_paths.py``.
"""

from __future__ import annotations

import re

from .base import PRIORITY, Hit, documented_example
from .context import Ctx, gate_words
from .entropy import shannon

# (label, regex, gate). Regexes start with a literal (fast search); boundaries are checked after the match.
# A gate is a tuple of words (any must occur) or, for prefixes glued to the token body, "big:<prefix>" checked
# against the start of long words.
_TOKEN_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    (
        "AWS access key id",
        r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|AIPA|ANPA|ANVA|APKA|AGPA)[A-Z0-9]{16}",
        (
            "big:akia",
            "big:asia",
            "big:abia",
            "big:acca",
            "big:aroa",
            "big:aida",
            "big:aipa",
            "big:anpa",
            "big:anva",
            "big:apka",
            "big:agpa",
        ),
    ),
    ("GitHub token", r"gh[pousr]_[A-Za-z0-9_]{20,}", ("ghp", "gho", "ghu", "ghs", "ghr")),
    ("GitHub fine-grained personal access token", r"github_pat_[A-Za-z0-9_]{20,}", ("github",)),
    (
        "GitLab token",
        r"gl(?:pat|dt|rt|cbt|ptt|ft|soat|oas)-[A-Za-z0-9_-]{20,}",
        ("glpat", "gldt", "glrt", "glcbt", "glptt", "glft", "glsoat", "gloas"),
    ),
    ("GitLab runner registration token", r"GR1348941[A-Za-z0-9_-]{20,}", ("lit:GR1348941",)),
    ("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}", ("lit:ATBB",)),
    ("Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{60,}", ("lit:ATATT3",)),
    (
        "Slack token",
        r"xox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,}",
        ("xoxa", "xoxb", "xoxp", "xoxo", "xoxs", "xoxr", "xoxe"),
    ),
    ("Slack rotating token", r"xoxe\.xox[bp]-\d-[A-Za-z0-9-]{20,}", ("xoxe",)),
    ("Slack app-level token", r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}", ("xapp",)),
    (
        "Slack webhook URL",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9]{6,}/[A-Za-z0-9]{16,}",
        ("slack",),
    ),
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
    (
        "Google service account key",
        r'(?low)"type"\s*:\s*"service_account"|"private_key_id"\s*:\s*"[0-9a-f]{8,}',
        ("service", "private"),
    ),
    ("Azure storage account key", r"(?low)accountkey=(?P<v>[a-z0-9+/]{20,}={0,2})", ("accountkey",)),
    (
        "Azure shared access signature",
        r"(?low)sharedaccess(?:signature\s+sr=[^\s\"']+|key=(?P<v>[a-z0-9+/]{20,}={0,2}))",
        ("sharedaccesssignature", "sharedaccesskey"),
    ),
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
#: gate word / prefix → indices into _TOKEN_RES, so only shapes whose gate is open are looked at
_TOKEN_BY_GATE: dict[bytes, list[int]] = {}
for _i, (*_, (_w, _b)) in enumerate(_TOKEN_RES):
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
    (
        i,
        _guard(_LONG_NEEDLES[label]),
        _LONG_NEEDLES[label],
        _big_opens(i),
        tuple(g[4:] for g in _TOKEN_SHAPES[i][2] if g.startswith("lit:")),
    )
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
            if (
                guard in long_text
                and index not in indices
                and any(n in long_text for n in needles)
                and (any(lit in text for lit in literals) or (big and not _open_big(ctx).isdisjoint(big)))
            ):
                indices.add(index)
    for index in sorted(indices):
        label, rx, _ = _TOKEN_RES[index]
        if label in _LONG_ONLY and rx.search(long_text) is None:
            continue  # no match in the long runs, so none in the text (see _LONG_ONLY)
        for m in rx.finditer(text):
            tok = m.group(0)
            if (
                not (ctx.boundary_before(m.start()) and ctx.boundary_after(m.end()))
                and label != "Terraform Cloud token"
            ):
                continue
            if documented_example(tok) or len(set(tok)) < 8:
                continue
            if label == "OpenAI-style API key" and (not re.search(r"\d", tok) or not re.search(r"[A-Z]", tok)):
                continue
            if (
                label in ("Twilio API key", "crates.io token", "NuGet API key", "Mailgun API key")
                and shannon(tok) < 3.5
            ):
                continue
            if label == "Hugging Face token" and not (re.search(r"[a-z]", tok[3:]) and re.search(r"[A-Z]", tok[3:])):
                continue
            out.append(Hit("credential_token", m.start(), m.end(), label, tok, PRIORITY["credential_token"]))
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
            if documented_example(value):
                continue
            out.append(Hit("cloud_credential", start, end, label, value, PRIORITY["cloud_credential"]))
    return out
