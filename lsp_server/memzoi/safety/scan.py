"""Running every content detector over a framed document and turning hits into findings.

Order of work for one document (all spans are code-point offsets into the document text):

1. Memzoi's write-safety rules, exactly (:mod:`.memzoi_rules`): every match is an error with Memzoi's code;
2. our credential detectors, PII and prompt-injection rules on the whole text (frontmatter values included: a
   YAML block scalar is matched in place, so its span is exact);
3. the same credential and injection detectors on decoded views (percent-encoding, base64/base64url, two
   levels deep, and text hidden in tag characters or variation selectors), reported on the encoded run's span;
4. ``transcript_detected`` on the body only; ``invisible_character`` on the raw text;
   then every detector on each decoded frontmatter string, key or value, that its own scan can find more in
   (:mod:`.values`: escapes, folding, a line-anchored rule at its start; Memzoi scans each decoded value as its
   own text), reported on the scalar (an escaped invisible character's fix rewrites the scalar without it);
5. overlaps are resolved (:func:`_resolve`): among our credential hits the most specific detector wins, and no
   Memzoi match is dropped except where a hit of its own code covers it;
6. each finding gets a fingerprint (:mod:`.fingerprint`) from its code, logical field and value; a
   ``high_entropy_value`` of our own detectors whose fingerprint is accepted in ``.memzoi/config.toml`` is dropped
   (a match of Memzoi's own entropy rule cannot be accepted: it is part of the floor).

Messages name the kind of value and where it is, never the value.
"""

from __future__ import annotations

import bisect
from dataclasses import replace
from typing import TYPE_CHECKING

from ..base.findings import WRITE_SAFETY, Finding, Fix, Severity, TextEdit, finding
from ..read.yaml_tree import YMap, YNode, YSeq
from .base import Hit
from .contacts import contact_hits
from .context import Ctx
from .credentials import secret_hits
from .decoding import decoded_views
from .fingerprint import fingerprint
from .injection import injection_hits
from .invisible import hidden_views, invisible_hits
from .memzoi_entropy import typed_digest_field
from .memzoi_rules import memzoi_hits
from .pii import pii_hits, transcript_hits
from .values import KEY_MARK, double_quoted, key_spans, rescanned

if TYPE_CHECKING:  # the YAML reader is imported where a document is framed, so scanning a text needs none of it
    from ..read.document import Document

#: The credential codes: Memzoi's write-safety floor (one home, :data:`memzoi.base.findings.WRITE_SAFETY`).
SECRET_CODES = WRITE_SAFETY

_ADVICE = {
    "credential_token": "remove it from the memory and rotate it; credentials never belong in repository memory",
    "private_key": "remove the key from the memory and replace the key pair; private keys never belong in repository memory",
    "authorization_header": "remove the credential and rotate it; describe the header in prose (Memzoi refuses any value after `Authorization: Bearer` at a line start)",
    "credentialed_url": "remove the user name, password or secret parameter from the URL and rotate the credential",
    "connection_string": "describe the database in words instead of quoting its URL (Memzoi refuses every database URL, templates included)",
    "session_token": "remove the token (use a placeholder such as `<token>`); session tokens grant access while they are valid",
    "cloud_credential": "remove it from the memory and rotate the cloud credential",
    "environment_secret": "name the variable without its value, then rotate the secret (Memzoi refuses any `NAME=value` at a line start)",
    "high_entropy_value": "remove it if it is a secret",
    "prompt_injection": "remove or rephrase the instruction-like text: memory is read back into agents' prompts",
    "invisible_character": "remove the invisible characters (quick fix available): they can hide text from reviewers",
    "pii_detected": "remove the personal data; repository memory is shared with every reader of the repository",
    "private_personal_data": "if it is a person's, remove it or name the role instead (repository memory is shared "
    "with every reader of the repository); example domains such as example.com are never flagged",
    "transcript_detected": "keep only the durable fact in your own words; raw conversation transcripts never belong in repository memory",
}


def collect_hits(text: str, *, body_start: int = 0, bom: bool = False, floor_only: bool = False) -> list[Hit]:
    """All detector hits of ``text`` after overlap resolution (see the module docstring); ``body_start`` is
    where the Markdown body begins (fences and transcripts are looked for there). ``floor_only``: Memzoi's rules
    alone (step 1), for text too large for the rest."""
    ctx = Ctx(text, body_start)
    hits = memzoi_hits(ctx)
    if floor_only:
        return _resolve(hits)
    hits += secret_hits(ctx)
    longs = ctx.longs
    hits += injection_hits(ctx)
    hits += pii_hits(ctx)
    hits += contact_hits(ctx, hits)
    for view in decoded_views(text, runs=longs) + hidden_views(text):
        vctx = Ctx(view.text)
        for h in secret_hits(vctx) + injection_hits(vctx):
            hits.append(replace(h, start=view.start, end=view.end, label=f"{h.label} ({view.how})"))
    if body_start < len(text):
        hits += transcript_hits(ctx, body_start)
    hits += invisible_hits(text, 0 if bom else -1)
    return _resolve(hits)


def secret_hits_of(text: str) -> list[Hit]:
    """The hits of :func:`collect_hits` (``text`` as a whole, ``body_start`` 0) whose code is a credential code
    (:data:`SECRET_CODES`): what a path or an id is scanned for (:mod:`memzoi.judge.pathsafety`). Only the
    detectors that can report such a code run: Memzoi's rules and the credential detectors, on the text and its
    decoded views. The others (injection, personal data, contacts, transcripts, invisible characters) cannot take
    a credential hit away (:func:`_resolve` settles credential hits among themselves and Memzoi's matches), so the
    result is the same (``tests/safety/test_fast_paths.py``)."""
    ctx = Ctx(text)
    hits = memzoi_hits(ctx)
    hits += secret_hits(ctx)
    for view in decoded_views(text, runs=ctx.longs) + hidden_views(text):
        for h in secret_hits(Ctx(view.text)):
            hits.append(replace(h, start=view.start, end=view.end, label=f"{h.label} ({view.how})"))
    return [h for h in _resolve(hits) if h.code in SECRET_CODES]


def _resolve(hits: list[Hit]) -> list[Hit]:
    """Drop overlaps without ever dropping a match of Memzoi's rules (:mod:`.memzoi_rules`).

    Among our own detectors, within the credential family the most specific detector wins (lowest priority
    value, then earliest, then longest); for the other codes a hit inside another hit of the same code is
    dropped. Then each Memzoi match is kept, unless one of our error hits of the same code already covers its
    whole span (it names the value more precisely), or it is a ``bounded_entropy`` match inside another Memzoi
    match (Memzoi reports both codes for that text; the specific one is enough); and our hits that overlap a
    kept Memzoi match of the same code are dropped (the Memzoi match reports that text with Memzoi's span)."""
    if not hits:
        return hits  # the usual case: a clean text
    floor = [h for h in hits if h.memzoi]
    own = [h for h in hits if not h.memzoi] if floor else hits
    secrets = sorted((h for h in own if h.code in SECRET_CODES), key=lambda h: (h.priority, h.start, h.start - h.end))
    kept: list[Hit] = []
    starts: list[int] = []  # kept spans are disjoint; sorted starts allow an O(log n) overlap test
    for h in secrets:
        i = bisect.bisect_right(starts, h.start)
        if (i and kept[i - 1].end > h.start) or (i < len(kept) and kept[i].start < h.end):
            continue
        starts.insert(i, h.start)
        kept.insert(i, h)
    others: list[Hit] = []
    reach: dict[str, int] = {}
    for h in sorted((h for h in own if h.code not in SECRET_CODES), key=lambda h: (h.code, h.start, h.start - h.end)):
        # one finding per place and code (several injection rules can match the same words)
        if h.end <= reach.get(h.code, -1):
            continue
        reach[h.code] = max(reach.get(h.code, -1), h.end)
        others.append(h)
    if floor:
        kept = _with_floor(kept, floor)
    return sorted(kept + others, key=lambda h: (h.start, h.end, h.code))


def _with_floor(own: list[Hit], floor: list[Hit]) -> list[Hit]:
    """``own`` credential hits merged with the Memzoi matches ``floor`` (see :func:`_resolve`)."""
    seen: set[tuple[str, int, int]] = set()
    kept_floor: list[Hit] = []
    # Memzoi matches, and our hits that stand for one (same code, covering it: a whole key block for a header)
    specific = [g for g in floor if g.code != "high_entropy_value"] + [
        o for o in own if any(o.code == g.code and o.start <= g.start and g.end <= o.end for g in floor)
    ]
    for f in floor:
        key = (f.code, f.start, f.end)
        if key in seen:
            continue
        seen.add(key)
        if f.code == "high_entropy_value" and any(g.start <= f.start and f.end <= g.end for g in specific):
            continue  # Memzoi's catch-all under a more specific Memzoi match of the same text
        if any(
            o.code == f.code and o.start <= f.start and f.end <= o.end and o.severity in (None, Severity.ERROR)
            for o in own
        ):
            continue
        kept_floor.append(f)
    own = [o for o in own if not any(f.code == o.code and f.start < o.end and o.start < f.end for f in kept_floor)]
    return own + kept_floor


def field_at(doc: Document, offset: int, hidden: frozenset[int] = frozenset()) -> str:
    """Logical location of ``offset``: ``frontmatter.<key path>`` inside the frontmatter, ``title`` for the
    H1, ``body`` after it; used in fingerprints and messages. A key is never shown when ``offset`` lies in it, nor
    when its node starts at one of ``hidden`` (keys that hold a finding): :data:`KEY_MARK` stands for it."""
    if doc.fm_start is not None and doc.fm_end is not None and doc.fm_start <= offset <= doc.fm_end:
        path = _path_in(doc.yaml_root, offset, hidden)
        return "frontmatter" + ("." + path if path else "")
    if doc.h1 is not None and doc.h1[0] <= offset <= doc.h1[1]:
        return "title"
    return "body"


def _path_in(node: YNode | None, offset: int, hidden: frozenset[int] = frozenset()) -> str:
    if isinstance(node, YMap):
        for k in node.order:  # every key, duplicates included: a finding on a duplicate key is on a key too
            if k.start <= offset < k.end:
                return KEY_MARK
        for key, (k, v) in node.entries.items():
            if k.start <= offset < max(v.end, k.end):
                inner = _path_in(v, offset, hidden)
                name = KEY_MARK if k.start in hidden else key
                return name + (("." + inner) if inner and not inner.startswith("[") else inner)
    elif isinstance(node, YSeq):
        for i, item in enumerate(node.items):
            if item.start <= offset < item.end:
                inner = _path_in(item, offset, hidden)
                return f"[{i}]" + (("." + inner) if inner and not inner.startswith("[") else inner)
    return ""


def hidden_keys(doc: Document, hits: list[Hit]) -> frozenset[int]:
    """Start offsets of the frontmatter keys that a hit overlaps: such a key is never printed in a location."""
    if doc.fm_end is None or not any(h.start < doc.fm_end for h in hits):
        return frozenset()
    spans = key_spans(doc)
    return frozenset(s for s, e in spans if any(h.start < e and s < h.end for h in hits))


#: The advice in a file that is not a memory (``config.toml``, another non-Markdown file under ``.memzoi``).
_PLAIN_ADVICE = {
    "credential_token": "remove it and rotate it; credentials never belong in the repository",
    "private_key": "remove the key and replace the key pair; private keys never belong in the repository",
    "cloud_credential": "remove it and rotate the cloud credential",
    "prompt_injection": "remove or rephrase the instruction-like text",
    "pii_detected": "remove the personal data; this file is shared with every reader of the repository",
    "transcript_detected": "remove it; raw conversation transcripts never belong in the repository",
}


def _where(field: str, memory: bool = True) -> str:
    if not memory:  # no frontmatter or body: the file as a whole
        return "in this file"
    if field == "body":
        return "in the body"
    if field == "title":
        return "in the title"
    key = field.removeprefix("frontmatter").lstrip(".")
    if key.endswith(KEY_MARK):
        return f"in a frontmatter key (at `{key}`)"
    return f"in frontmatter field `{key}`" if key else "in the frontmatter"


_SEVERITIES = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "information": Severity.INFORMATION,
    "hint": Severity.HINT,
}


def to_findings(
    doc: Document,
    hits: list[Hit],
    accepted: frozenset[str] = frozenset(),
    unsigned_jwt: str = "warning",
    *,
    memory: bool = True,
) -> list[Finding]:
    """Findings for ``hits`` of ``doc``: message (kind, place, advice; never the value), fingerprint, the drop of
    accepted ``high_entropy_value`` fingerprints, and the configured grade of unsigned JWTs outside example
    fences (inside one they stay at most information). ``memory`` false: ``doc`` is not a memory (the project's
    ``config.toml``, another non-Markdown file), so messages say "in this file", not a body or "the memory"."""
    out: list[Finding] = []
    jwt_grade = _SEVERITIES.get(unsigned_jwt, Severity.WARNING)
    hidden = hidden_keys(doc, hits)
    for h in hits:
        field = field_at(doc, h.start, hidden)
        fp = fingerprint(h.code, field, h.value)
        if h.code == "high_entropy_value" and fp in accepted and not h.memzoi:
            continue  # a reviewer's decision about our own detector; Memzoi's floor cannot be accepted away
        where = _where(field, memory)
        advice = _ADVICE[h.code] if memory else _PLAIN_ADVICE.get(h.code, _ADVICE[h.code])
        fixes: tuple[Fix, ...] = ()
        if h.code == "prompt_injection":
            msg = f"text {where} matches the `{h.label}` rule ({h.family}): {advice}"
        elif h.code == "invisible_character":
            msg = f"{h.label} {where}: {advice}"
            fixes = (Fix("Remove the invisible characters", (TextEdit(h.start, h.end, h.fix or ""),)),)
        elif h.code == "transcript_detected":
            msg = f"{h.label} {where} look like a raw transcript: {advice}"
        elif h.code == "high_entropy_value" and h.memzoi:
            msg = f"{h.label} {where} may be a secret, and Memzoi's write-safety gate refuses it: {advice}"
        elif h.code == "high_entropy_value":
            msg = (
                f"{h.label} {where} may be a secret: {advice}; if it is not, accept it by adding its fingerprint "
                f'"{fp}" to `[safety] accepted_fingerprints` in .memzoi/config.toml'
            )
        else:
            msg = f"{h.label} {where}: {advice}"
        f = finding(h.code, msg, h.start, h.end, fixes=fixes, fingerprint=fp, field=field, detector=h.label)
        severity = h.severity
        if severity == Severity.WARNING and h.code == "session_token" and h.label.startswith("unsigned"):
            severity = jwt_grade
        if severity is not None:
            f = replace(f, severity=severity)
        out.append(f)
    return out


def scan_document(
    doc: Document,
    accepted: frozenset[str] = frozenset(),
    unsigned_jwt: str = "warning",
    *,
    floor_only: bool = False,
    memory: bool = True,
) -> list[Finding]:
    """Content-detector findings of a framed document (the text, each decoded frontmatter string as its own
    text, and the body); ``floor_only`` as in :func:`collect_hits`, ``memory`` as in :func:`to_findings`."""
    body_start = doc.body_start if doc.body_start is not None else (doc.fm_end or 0)
    hits = collect_hits(doc.text, body_start=body_start, bom=doc.bom, floor_only=floor_only)
    own = value_hits(doc, hits, floor_only=floor_only)
    if own:
        hits = sorted(hits + own, key=lambda h: (h.start, h.end, h.code))
    if any(h.memzoi == "bounded_entropy" for h in hits):
        # Memzoi skips its entropy rule for the fields it types as digests, and only for those
        hits = [h for h in hits if h.memzoi != "bounded_entropy" or not typed_digest_field(field_at(doc, h.start))]
    return to_findings(doc, hits, accepted, unsigned_jwt, memory=memory)


def value_hits(doc: Document, hits: list[Hit], *, floor_only: bool = False) -> list[Hit]:
    """Hits in the decoded frontmatter strings (keys and values) whose own scan can find more than the file's
    (:func:`.values.rescanned`), each spanning its whole scalar, quotes included (the match has no place in the
    file's text). A code already reported over the scalar's text (``hits``) is not reported again. An escaped
    invisible character's quick fix rewrites the scalar as a double-quoted string without it."""
    out: list[Hit] = []
    for sc in rescanned(doc):
        node, value = sc.node, sc.node.value
        found = collect_hits(value, body_start=len(value), floor_only=floor_only)
        if not found:
            continue
        fix = None
        bad = [(h.start, h.end) for h in found if h.code == "invisible_character"]
        if bad:
            kept, pos = [], 0
            for s, e in sorted(bad):
                kept.append(value[pos : max(pos, s)])
                pos = max(pos, e)
            fix = double_quoted("".join(kept) + value[pos:])
        how = (
            ", written with escapes,"
            if sc.escaped
            else f", in the {'key' if sc.key else 'value'} read as its own text (as Memzoi reads it),"
        )
        seen: set[str] = set()
        for h in found:
            if h.code in seen or any(r.code == h.code and r.start < node.end and node.start < r.end for r in hits):
                continue
            seen.add(h.code)
            out.append(
                replace(
                    h,
                    start=node.start,
                    end=node.end,
                    label=f"{h.label}{how}",
                    fix=fix if h.code == "invisible_character" else None,
                )
            )
    return out
