"""The payload of one verdict cache entry (:mod:`memzoi.stores.verdictcache`): what is kept of a file's verdict, and how
it becomes the first stage of that verdict again at a later run's clock.

:func:`make_payload` writes it from an analysis (or declines: a file with a secret, a stale attestation, a
``canonical_path`` finding, a finding whose data does not survive JSON); :func:`read_payload` reads it back. The
payload is JSON, a list of plain values in a fixed order (positional, because a run reads one per file): role,
opening span, attested flag, the findings without quick fixes and without ``retention_query_only`` (code,
message, start, end, severity, data), the cross-file facts, the line starts as one string (parsed only when a
finding must be placed, :func:`line_starts`), the text's length in code points and the retention mark
(boundary in microseconds since the epoch, reason, span). A file that gets no verdict entry but whose cross-file
facts may be kept has the payload of its facts alone (:func:`facts_only`). Change
:data:`memzoi.stores.store.PAYLOAD_FORMAT` with the layout.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from ..base.findings import Finding, Severity
from ..judge.workspace import Role
from ..project.admission import canonical_findings
from ..project.filefacts import FileFacts, Ref, from_fields
from ..project.verdict import Local

if TYPE_CHECKING:  # reading an entry loads no analysis (nor the detectors)
    from ..judge.analysis import Analysis

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: ``json.dumps(…, separators=(",", ":"))`` made once: ``json.dumps`` with any argument makes a new encoder at every
#: call, and a payload is three encodings (:func:`make_payload`).
_COMPACT = json.JSONEncoder(separators=(",", ":"))
_SEVERITY = {int(s): s for s in Severity}
_SORT = lambda f: (f.start, f.end, f.code)  # noqa: E731 - the analysis's own finding order


@cache
def _kept_out() -> tuple[frozenset[str], Any]:
    """``(SECRET_CODES, AttestationState.STALE)`` (:data:`memzoi.safety.redact.SECRET_CODES`,
    :class:`memzoi.judge.attestation.AttestationState`): what keeps a file's verdict out of the cache, imported at the
    first payload made (reading entries loads neither the detectors nor the attestation model) and kept: two import
    statements cost some 2 µs at every call, and every file a scan or a check analyses makes a payload."""
    from ..judge.attestation import AttestationState  # noqa: PLC0415 lazy: start-up
    from ..safety.redact import SECRET_CODES  # noqa: PLC0415 lazy: start-up

    return SECRET_CODES, AttestationState.STALE


def _plain(value: object) -> bool:
    """True when ``value`` survives a JSON round trip unchanged (str keys; no tuple, set or other object)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def make_payload(
    analysis: Analysis, first: Local, facts: FileFacts, starts: str | list[int], facts_json: str | None = None
) -> str | None:
    """The JSON payload of one file's entry (see the module docstring), or ``None`` when the file must not be
    cached: a secret finding, a stale attestation, a ``canonical_path`` finding, a finding whose data does not
    survive JSON, a file outside any project. ``first`` is :func:`memzoi.project.verdict.local`'s result for ``analysis``;
    ``starts`` the line starts, or their text as :func:`line_starts` reads it (the first stage's, joined once);
    ``facts_json`` :func:`facts_text` of ``facts`` when the caller made it already (the index row keeps the same
    text): the facts are then not encoded a second time. The payload is the same string either way."""
    secret_codes, stale = _kept_out()
    if analysis.placement.memzoi_dir is None or first.canonical or facts.failed:  # a symlink, a file through a
        return None  # symlinked folder, facts an internal error stopped (its `internal_error` is not cached)
    if analysis.attestation is not None and analysis.attestation.state is stale:
        return None
    own = first.own[: len(first.own) - first.canonical]
    found = []
    for f in own:
        if f.code in secret_codes or (f.data and not _plain(f.data)):
            return None
        if f.code != "retention_query_only":  # recomputed from the mark at each run's clock
            found.append([f.code, f.message, f.start, f.end, int(f.severity), f.data or None])
    mark = analysis.retention
    stored_mark = None
    if mark is not None:
        stored_mark = [(mark.boundary - _EPOCH) // timedelta(microseconds=1), mark.reason, *mark.span]
    # The line starts as one string: most files have no finding, and their starts are then never parsed.
    lines = starts if isinstance(starts, str) else ",".join(map(str, starts))
    head = _COMPACT.encode([first.role.value, *first.opening, first.attested, found])
    tail = _COMPACT.encode([lines, len(analysis.text), stored_mark])
    # json.dumps of the whole list, with the facts' text spliced in as it is (compact JSON joins items with ",")
    return f"{head[:-1]},{facts_json if facts_json is not None else facts_text(facts)},{tail[1:]}"


def cache_payload(
    analysis: Analysis, first: Local, facts: FileFacts, starts: str | list[int], facts_json: str | None = None
) -> str | None:
    """What :meth:`memzoi.stores.verdictcache.ProjectCache.store` keeps of a file: its entry's payload
    (:func:`make_payload`; ``starts`` and ``facts_json`` as there), else the payload of its facts alone when they
    may be kept (:func:`facts_only`), else ``None``. Never raises: the cache never changes a report, a file it
    cannot take is only not cached."""
    try:
        payload = make_payload(analysis, first, facts, starts, facts_json)
        return payload if payload is not None else facts_only(analysis, first, facts, facts_json)
    except Exception:  # noqa: BLE001
        return None


def facts_only(analysis: Analysis, first: Local, facts: FileFacts, facts_json: str | None = None) -> str | None:
    """The payload of a file that gets no verdict entry but whose facts may still be kept, so that a check of other
    files need not analyse it again for its cross-file facts: the one-item JSON list of its facts
    (:func:`facts_out`; :func:`is_facts_only` tells it from a verdict's payload); ``None`` when they may not.

    Kept only for a file of a project, not read through a symlink, with no secret finding at all (a stale
    attestation, a finding whose data is not plain JSON). A file with a secret keeps nothing: a detector's span may
    hold context around the secret, so no test on the fact values could promise that none of them holds a piece of
    it, and no byte of a secret is ever stored. ``facts_json``: :func:`facts_text` of ``facts`` when made already."""
    secret_codes = _kept_out()[0]
    if analysis.placement.memzoi_dir is None or first.canonical or facts.failed:
        return None
    if any(f.code in secret_codes for f in first.own):  # the analysis's findings and what admission added
        return None
    return "[" + (facts_json if facts_json is not None else facts_text(facts)) + "]"


def is_facts_only(payload: str) -> bool:
    """Whether ``payload`` keeps a file's facts alone (:func:`facts_only`): a verdict's payload starts with its role, a
    string, where this one starts with the facts list."""
    return payload.startswith("[[")


def payload_facts(payload: str) -> list[Any]:
    """The facts list (:func:`facts_out`) a payload keeps: a verdict's sixth value, or the one value of
    :func:`facts_only`'s. Raises ``ValueError``, ``TypeError`` or ``IndexError`` for a payload that is not one."""
    value = json.loads(payload)
    facts: list[Any] = value[0] if is_facts_only(payload) else value[5]
    return facts


def facts_out(f: FileFacts) -> list[Any]:
    """The one stored form of a file's cross-file facts: a list of plain values in :class:`FileFacts`' field
    order (its references as ``[field, target, start, end, to]``), ``failed`` appended only when set. A store entry's
    payload and the index's ``files.facts`` keep it (read back by :func:`stored_facts`)."""
    return [
        f.kind,
        f.role,
        f.ident,
        f.status,
        f.scope_kind,
        f.scope_id,
        f.when,
        f.action,
        f.content,
        list(f.tokens),
        [[r.field, r.target, r.span[0], r.span[1], r.to] for r in f.refs],
        list(f.ident_span),
        list(f.body_span),
        f.legacy,
        *([True] if f.failed else []),
    ]


def facts_text(f: FileFacts) -> str:
    """:func:`facts_out` as compact JSON text."""
    return _COMPACT.encode(facts_out(f))


def stored_facts(v: list[Any]) -> FileFacts:
    """The cross-file facts as a payload keeps them (:func:`facts_out`, :func:`payload_facts`). Raises as
    :func:`read_payload` does."""
    refs = tuple(Ref(a, b, (s, e), to) for a, b, s, e, to in v[10])
    return from_fields(
        v[0],
        v[1],
        v[2],
        v[3],
        v[4],
        v[5],
        v[6],
        v[7],
        v[8],
        tuple(v[9]),
        refs,
        (v[11][0], v[11][1]),
        (v[12][0], v[12][1]),
        v[13],
        len(v) > 14 and v[14] is True,
    )


def payload_boundary(payload: str) -> datetime | None:
    """The retention boundary a payload keeps (its mark's instant), ``None`` without one or for a payload it
    cannot read. Parses only a payload that has a mark (most end in ``null``)."""
    if payload.endswith(",null]"):
        return None
    try:
        mark = json.loads(payload)[8]
        return _EPOCH + timedelta(microseconds=mark[0]) if mark is not None else None
    except (ValueError, TypeError, IndexError, OverflowError):
        return None


def line_starts(starts: str) -> list[int]:
    """The line starts a payload keeps as a string (see :func:`read_payload`). Raises ``ValueError``."""
    return [int(s) for s in starts.split(",")]


#: :class:`Role` by value: the member ``Role(value)`` gives, without the enum's call machinery (about 1 µs a file)
_ROLES = {r.value: r for r in Role}


def read_payload(
    payload: str,
    path: str,
    memzoi_dir: str,
    now: datetime,
    links: dict[str, Any] | None = None,
    *,
    mode: int | None = None,
) -> tuple[Local, FileFacts, str, int]:
    """What :func:`make_payload` stored, completed for a run at the clock ``now``: the first stage of the file's
    verdict (with ``retention_query_only`` evaluated at ``now`` and ``canonical_path`` asked of the file system
    for ``path`` in ``memzoi_dir``; ``links`` and ``mode`` as for :func:`memzoi.project.admission.canonical_findings`),
    its cross-file facts, its line starts (a string for :func:`line_starts`) and its length in code points.
    Raises ``ValueError``, ``KeyError``, ``TypeError`` or ``IndexError`` for a payload it did not write."""
    role, o1, o2, attested, found, facts, starts, length, mark = json.loads(payload)
    own = [Finding(c, m, s, e, _SEVERITY[sev], (), d or {}) for c, m, s, e, sev, d in found]
    if mark is not None:
        from ..judge.retention import RetentionMark, mark_findings  # noqa: PLC0415 lazy: start-up - a record with a retention boundary only

        boundary = _EPOCH + timedelta(microseconds=mark[0])
        extra = mark_findings(RetentionMark(boundary, mark[1], (mark[2], mark[3])), now)
        if extra:
            own = sorted(own + extra, key=_SORT)
    opening = (o1, o2)
    r = _ROLES[role]
    canonical = canonical_findings(path, r, memzoi_dir, opening, links, mode=mode)
    return Local(own + canonical, r, opening, bool(attested), len(canonical)), stored_facts(facts), starts, length
