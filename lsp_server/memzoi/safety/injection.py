"""``prompt_injection``: Zuno's threat scanning (reference ``zuno-memory.md`` §4).

Zuno ports hermes-agent's strict rule set: pattern ids grouped in families (classic injection, role hijack,
command-and-control, named frameworks, exfiltration, persistence and config tampering), matched
case-insensitively with 0–8 filler words between key words, after folding full-width forms and no-break spaces,
with invisible code points removed (:mod:`.invisible` reports those). This module keeps Zuno's ids and
families; a few rules are narrowed so routine engineering notes do not trip them (documented per rule).
Every rule has lower-case literal anchors and runs only when one occurs in the folded text.
"""

from __future__ import annotations

import re
from typing import Any

from ..base.findings import Severity
from .base import Hit
from .context import Ctx, gate_words, lower
from .decoding import fold
from .invisible import strip_invisible

F = r"(?:[\w'’-]+\s+){0,8}"  # bounded filler: 0–8 words
#: A path prefix before a file name, bounded: an unbounded ``\S*`` retried at every ``>`` of one long line made
#: the search quadratic (a 45 KB line took 5 s); no real path to an agent file is longer.
P = r"\S{0,256}"
S = r"\$\{?\w*(?:key|token|secret|password|passwd|credential|api)\w*\}?"
M = r"(?:write|append|add|insert|inject|overwrite|modify|edit|replace|echo|tee|prepend)\s+(?:[^\n]{0,80}?\s)?(?:to|into|in)\s+(?:the\s+|your\s+)?"

CLASSIC, HIJACK, C2, FRAMEWORK, EXFIL, PERSIST = (
    "classic injection",
    "role hijack",
    "command-and-control",
    "named C2 framework",
    "exfiltration",
    "persistence and config tampering",
)

# (pattern id, family, regex over the folded lower-cased text, word gate, warn-only). A gate is "a b & c d":
# every &-group needs one of its words. Warn-only rules are vocabulary that research notes can use.
_RULES: list[tuple[str, str, str, str, bool]] = [
    (
        "prompt_injection",
        CLASSIC,
        rf"\b(?:ignore|forget)\s+{F}(?:all\s+{F}(?:previous|prior|above|earlier)|(?:previous|all|above|prior|earlier|preceding)\s+{F}(?:instructions|rules|prompts?|messages|directions|directives|guidelines|context))\b",
        "ignore forget & previous prior above earlier preceding all & instructions rules prompt prompts messages directions directives guidelines context",
        False,
    ),
    (
        "prompt_injection",
        CLASSIC,
        r"\boverride\s+(?:all\s+|the\s+|your\s+)?(?:previous|prior|system)\s+(?:instructions|prompt|rules)",
        "override & instructions prompt rules",
        False,
    ),
    (
        "sys_prompt_override",
        CLASSIC,
        r"\bsystem\s+prompt\s+override|\bnew\s+system\s+prompt\s*:",
        "system & prompt",
        False,
    ),
    (
        "disregard_rules",
        CLASSIC,
        rf"\bdisregard\s+{F}(?:your|all|any|the|previous|prior)\s+{F}(?:instructions|rules|guidelines|directives|policies)",
        "disregard",
        False,
    ),
    (
        "bypass_restrictions",
        CLASSIC,
        rf"\bact\s+as\s+(?:if|though)\s+{F}you\s+{F}(?:have\s+no|don'?t\s+have|are\s+free\s+of)\s+{F}(?:restrictions|limits|rules|guidelines)",
        "act & restrictions limits rules guidelines",
        False,
    ),
    (
        "html_comment_injection",
        CLASSIC,
        r"<!--[^>]{0,192}\b(?:ignore|disregard|override|system\s+prompt|do\s+not\s+tell|secretly|hidden\s+instructions?|assistant\s*:)[^>]{0,192}-->",
        "ignore disregard override prompt tell secretly hidden assistant",
        False,
    ),
    (
        "hidden_div",
        CLASSIC,
        r"<\s*(?:div|span|p)\s+style\s*=\s*[\"'][^>]{0,256}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)",
        "style & display visibility font",
        False,
    ),
    (
        "translate_execute",
        CLASSIC,
        r"\btranslate\s+[^\n]{0,256}?\s+into\s+\w+(?:[\s-]+\w+){0,2}\s+and\s+(?:execute|run|eval)\b",
        "translate & execute run eval",
        False,
    ),
    (
        "deception_hide",
        CLASSIC,
        rf"\b(?:do\s+not|don'?t|never)\s+{F}(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+{F}the\s+user",
        "tell inform mention reveal & user & not don dont never",
        False,
    ),
    (
        "exfil_curl",
        EXFIL,
        rf"\bcurl\s+[^\n]{{0,256}}?(?:-d\s|--data\S*\s|-f\s|--form\s|-t\s|\?[^\s]*=|&[^\s]*=)[^\n]{{0,64}}?{S}",
        "curl & key token secret password passwd credential api",
        False,
    ),
    (
        "exfil_wget",
        EXFIL,
        rf"\bwget\s+[^\n]{{0,256}}?(?:--post-data\S*|--body-data\S*|\?[^\s]*=|&[^\s]*=)[^\n]{{0,64}}?{S}",
        "wget & key token secret password passwd credential api",
        False,
    ),
    (
        "read_secrets",
        EXFIL,
        r"\bcat\s+[^\n]{0,256}?(?:\.env(?=$|[\s\"'`),;:\]])|\.aws/credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|id_(?:rsa|ed25519|ecdsa)\b(?!\.pub))",
        "cat & env credentials netrc pgpass npmrc pypirc id",
        False,
    ),
    ("role_hijack", HIJACK, rf"\byou\s+are\s+{F}now\s+(?:a|an|the|my|in)\s+", "now & you & are", False),
    ("role_hijack", HIJACK, r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+act\s+as)\s+", "now & you & on", False),
    ("role_pretend", HIJACK, rf"\bpretend\s+{F}(?:you\s+are|you're|to\s+be)\s+", "pretend", False),
    (
        "leak_system_prompt",
        HIJACK,
        rf"\b(?:output|print|reveal|show|repeat|dump|exfiltrate|disclose)\s+{F}(?:system|initial|hidden)\s+(?:prompt|instructions)",
        "prompt instructions & system initial hidden & output print reveal show repeat dump exfiltrate disclose",
        False,
    ),
    (
        "remove_filters",
        HIJACK,
        rf"\b(?:respond|answer|reply)\s+without\s+{F}(?:restrictions|limitations|filters|safety|censorship)",
        "without & respond answer reply",
        False,
    ),
    (
        "fake_update",
        HIJACK,
        rf"\byou\s+have\s+been\s+{F}(?:updated|upgraded|patched|reprogrammed)\s+to\b",
        "been & updated upgraded patched reprogrammed",
        False,
    ),
    (
        "identity_override",
        HIJACK,
        r"\b(?:name|call)\s+yourself\s+\w+|\byour\s+new\s+(?:name|identity|persona)\s+is\b",
        "yourself name identity persona & yourself your",
        False,
    ),
    (
        "c2_node_registration",
        C2,
        r"\bregister\s+(?:yourself\s+)?as\s+an?\s+(?:node|agent|bot|worker)\s+(?:with|at|on)\b",
        "register & node agent bot worker",
        True,
    ),
    (
        "c2_heartbeat",
        C2,
        r"\b(?:beacon|check[\s-]?in)\s+(?:to|with)\s+(?:the\s+)?(?:c2|controller|server\s+at|https?://)|\bsend\s+(?:a\s+)?heartbeat\s+to\s+https?://",
        "beacon checkin check heartbeat & c2 controller server http https",
        True,
    ),
    (
        "c2_task_pull",
        C2,
        r"\bpull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\s+from\s+(?:the\s+)?(?:c2|controller|https?://)",
        "pull & task tasks tasking",
        True,
    ),
    ("c2_network_connect", C2, r"\bconnect\s+to\s+the\s+(?:botnet|c2\s+network)\b", "botnet c2", True),
    (
        "forced_action",
        C2,
        r"\byou\s+must\s+(?:\w+\s+){0,3}(?:register|beacon)\b|\byou\s+must\s+(?:\w+\s+){0,3}(?:connect|report)\s+(?:back\s+)?to\s+(?:the\s+)?(?:c2|controller|https?://)",
        "must & you & register beacon connect report",
        True,
    ),
    ("anti_forensic_oneliner", C2, r"\bonly\s+use\s+one[\s-]?liners?\b", "liner liners oneliner oneliners", True),
    (
        "anti_forensic_disk",
        C2,
        rf"\bnever\s+{F}(?:create|write|save)\s+{F}(?:scripts?|files?)\s+{F}(?:to|on)\s+(?:the\s+)?disk",
        "never & disk & create write save",
        True,
    ),
    (
        "env_var_unset_agent",
        C2,
        r"\bunset\s+\w*(?:claude|codex|hermes|agent|openai|anthropic|zuno|opencode|cursor)\w*",
        "unset",
        False,
    ),
    (
        "known_c2_framework",
        FRAMEWORK,
        r"\b(?:cobalt\s*strike|metasploit|brainworm|(?:sliver|havoc|mythic)\s+(?:c2|implant|beacon|teamserver))\b",
        "cobalt cobaltstrike metasploit brainworm sliver havoc mythic",
        True,
    ),
    ("c2_explicit", FRAMEWORK, r"\bc2\s+(?:server|channel|infrastructure|beacon|endpoint)\b", "c2", True),
    (
        "c2_explicit_long",
        FRAMEWORK,
        r"\bcommand[\s-]+and[\s-]+control\s+(?:server|channel|infrastructure)\b",
        "command & control",
        True,
    ),
    (
        "send_to_url",
        EXFIL,
        r"\b(?:send|transmit|post|upload|exfiltrate|forward|leak)\s+[^\n]{0,120}?\b(?:secrets?|api\s+keys?|tokens?|credentials?|passwords?|\.env|env(?:ironment)?\s+variables?|conversation|chat\s+history|memor(?:y|ies)|system\s+prompt)\b[^\n]{0,80}?\s(?:to|at)\s+https?://",
        "http https & send transmit post upload exfiltrate forward leak & secret secrets api key keys token tokens credential credentials password passwords env environment conversation chat memory memories system",
        False,
    ),
    (
        "context_exfil",
        EXFIL,
        r"\b(?:include|output|print|share|embed|attach|paste|leak|dump|relay|reveal|disclose|exfiltrate)\s+(?:\w+\s+){0,6}?(?:entire|full|whole|complete|previous|prior|this)\s+(?:conversations?|chat\s+history|transcripts?|context\s+window|messages)\b",
        "conversation conversations chat transcript transcripts context messages & entire full whole complete previous prior this & include output print share embed attach paste leak dump relay reveal disclose exfiltrate",
        False,
    ),
    (
        "ssh_backdoor",
        PERSIST,
        r"(?:>>?|\btee\b|\becho\b|\bappend\b|\badd\b|\bwrite\b|\binsert\b|\bcat\b)[^\n]{0,160}?authorized_keys\b",
        "authorized & keys",
        False,
    ),
    (
        "ssh_access",
        PERSIST,
        r"(?:\b(?:echo|cp|mv|dd|tee|install|printf|rsync|scp|ln|chmod|chown|truncate|rm|curl|wget)\b|>>?)[^\n]{0,256}?(?:\$home/\.ssh|~/\.ssh)\b",
        "ssh",
        False,
    ),
    (
        "agent_credential_store",
        PERSIST,
        r"(?:~|\$home|\$\{home\})/[^\s\"'`]{0,80}?\b(?:mcp-)?auth\.json\b",
        "auth & json",
        False,
    ),
    (
        "agent_config_mod",
        PERSIST,
        rf"(?:>>?\s*{P}|\btee\s+(?:-a\s+)?{P}|{M}|\b(?:silently|secretly|quietly)\s+(?:\w+\s+){{0,3}}?)(?:agents\.md|claude\.md|\.cursorrules|\.clinerules|\.windsurfrules|gemini\.md)\b",
        "agents claude cursorrules clinerules windsurfrules gemini",
        False,
    ),
    (
        "agent_self_config_mod",
        PERSIST,
        rf"(?:>>?\s*{P}|\btee\s+(?:-a\s+)?{P}|{M})(?:{P}zuno\.jsonc?\b|{P}\.zuno/)",
        "zuno",
        False,
    ),
]


def _gate(spec: str) -> tuple[frozenset[bytes], ...]:
    return tuple(gate_words(w.encode() for w in group.split()) for group in spec.split("&"))


_COMPILED = [(pid, fam, re.compile(rx), _gate(gate), warn) for pid, fam, rx, gate, warn in _RULES]
_FIRST_WORDS = frozenset().union(*(r[3][0] for r in _COMPILED))
#: first-group gate word → indices of the rules it opens
_BY_WORD: dict[bytes, list[int]] = {}
for _i, _r in enumerate(_COMPILED):
    for _w in _r[3][0]:
        _BY_WORD.setdefault(_w, []).append(_i)
#: every gate word of every rule: which rules a text opens depends only on which of these it has
_RULE_WORDS = frozenset().union(*(g for r in _COMPILED for g in r[3]))
#: gate words present → the rules they open; texts of one repository repeat a few such sets
_OPENED: dict[frozenset[bytes], tuple[Any, ...]] = {}


def _opened_rules(words: frozenset[bytes]) -> tuple[Any, ...]:
    """The rules of :data:`_COMPILED` whose every gate group has a word in ``words``, in rule order."""
    key = words & _RULE_WORDS
    rules = _OPENED.get(key)
    if rules is None:
        candidates = sorted({i for w in key & _FIRST_WORDS for i in _BY_WORD[w]})
        rules = tuple(r for r in map(_COMPILED.__getitem__, candidates) if all(not key.isdisjoint(g) for g in r[3][1:]))
        if len(_OPENED) >= 4096:
            _OPENED.clear()  # bounded; a recomputation costs a few microseconds
        _OPENED[key] = rules
    return rules


def injection_hits(ctx: Ctx) -> list[Hit]:
    """``prompt_injection`` hits: one per matched rule and place; ``label`` is the pattern id and ``family`` its
    Zuno family. Matching runs on the folded, lower-cased text with invisible characters removed; spans are
    mapped back to the text."""
    text = ctx.text
    if text.isascii():
        folded, mapping, gate_ctx = ctx.low, None, ctx
    else:
        folded, mapping = strip_invisible(lower(fold(text)))
        gate_ctx = Ctx(folded)
    gated = _opened_rules(gate_ctx.words)
    if not gated:
        return []
    out: list[Hit] = []
    for pid, fam, rx, _, warn in gated:
        for m in rx.finditer(folded):
            s, e = m.start(), m.end()
            if mapping is not None:
                s, e = mapping[s], (mapping[e - 1] + 1 if e > s else mapping[s])
            out.append(Hit("prompt_injection", s, e, pid, text[s:e], 0, Severity.WARNING if warn else None, fam))
    return out
