"""``memzoi capture plan``: the deterministic, mutation-free capture plan of one Markdown source with Memzoi's
``markdown-deterministic`` profile (Memzoi's reference page "Evidence-backed capture"; shapes from
``crates/memzoi-core/src/capture.rs``: ``CaptureCandidate``, ``CaptureAction``, ``CaptureMatch``,
``CapturePreconditions``). Source and extractor: :mod:`.capture_source`; each candidate's action: :mod:`.capture_actions`.

The plan is ``blocked`` (``data_class: blocked``: no source snapshot, no candidates, no evidence text; only safe
diagnostics) when a prohibited-content detector (:mod:`.capture_prohibited`) fires on any line, or the bytes are
not UTF-8 or hold a NUL. Otherwise each typed section is a candidate with its evidence (locator, source and
evidence hashes, byte and line spans, heading path and kind), the extractor identity, deterministic ``claim_id``
and ``candidate_id``, its classification and one action: ``duplicate`` (trimmed-body BLAKE3 equal to an active
record's, a pending packet's, an active runtime row's or an earlier candidate's), ``conflict`` (an active record or
pending packet with the same title and another body), ``create_proposal`` (repo, with the reserved packet id and
path), ``create_runtime`` (local, session), ``blocked`` (the gate or a detector on the would-be packet) or
``no_write``. ``data_class`` is ``private`` when any candidate is local, session or unresolved, else
``repo_safe``. ``plan_id`` is ``capture_`` + BLAKE3 over the plan without its id as canonical JSON: it pins the
request, the source snapshot, the candidates, their match sets, reserved ids and the preconditions.

Schema ids are Memzoi's without the ``-v1`` suffix (current-schema-only; its MCP page names
``memzoi/capture-request``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..ledger import Ledger, Refusal
from .capture_actions import actions, conflicts_by_title
from .capture_prohibited import DETECTORS, first_prohibited
from .capture_source import (
    CONFIGURATION_HASH,
    EXTRACTOR,
    MAX_CANDIDATES,
    MAX_EVIDENCE_ITEM,
    MAX_SOURCE_BYTES,
    PREFIXES,
    PROFILE,
    Section,
    Source,
    canonical_hash,
    digest,
    load_source,
    sections,
)
from .import_plan import POLICY, existing_content
from .session_input import yaml_document

REQUEST_SCHEMA = "memzoi/capture-request"
PLAN_SCHEMA = "memzoi/capture-plan"
POLICY_VERSION = "1"
_SENS_REASON = {
    "repo-safe": "typed heading maps to repo-safe repository knowledge",
    "local-only": "preference headings stay in private local memory",
    "temporary-state": "episode headings are temporary session state",
    "unknown": "no recognized typed heading; a human decides",
}


def request_for(source: Source) -> dict[str, Any]:
    """The ``memzoi/capture-request`` equivalent of ``--source`` (Memzoi: the shorthand selects the profile)."""
    return {
        "schema": REQUEST_SCHEMA,
        "sources": [
            {
                "source_id": source.source_id,
                "locator": {"kind": "project_path", "path": source.path},
                "media_type": "text/markdown",
            }
        ],
        "extractor": {"profile": PROFILE},
    }


def parse_request(text: str, where: str) -> tuple[str, str]:
    """``(path, source_id)`` of a strict ``memzoi/capture-request`` (JSON or YAML) with the
    ``markdown-deterministic`` profile and one ``project_path`` source. Raises :class:`Refusal`
    (``invalid_capture_request``, or ``unsupported_capture_profile`` for Memzoi's other profiles)."""

    def fail(what: str) -> Refusal:
        return Refusal("invalid_capture_request", f"{where}: {what}; nothing was written")

    doc = yaml_document(text, fail)
    if not isinstance(doc, dict) or set(doc) != {"schema", "sources", "extractor"}:
        raise fail("the request must have exactly `schema`, `sources` and `extractor`")
    if doc["schema"] != REQUEST_SCHEMA:
        raise fail(f"`schema` must be `{REQUEST_SCHEMA}`")
    profile = doc["extractor"].get("profile") if isinstance(doc["extractor"], dict) else None
    if not isinstance(doc["extractor"], dict) or set(doc["extractor"]) != {"profile"}:
        raise fail("`extractor` must be `{profile}`")
    if profile != PROFILE:
        raise Refusal(
            "unsupported_capture_profile",
            f"{where}: only the `{PROFILE}` profile is supported "
            "(Memzoi's instruction, ADR and Git-change profiles are not); nothing was written",
        )
    srcs = doc["sources"]
    if not isinstance(srcs, list) or len(srcs) != 1 or not isinstance(srcs[0], dict):
        raise fail(f"`sources` must hold exactly one source for `{PROFILE}`")
    src = srcs[0]
    loc = src.get("locator")
    if (
        set(src) != {"source_id", "locator", "media_type"}
        or src.get("media_type") != "text/markdown"
        or not isinstance(loc, dict)
        or set(loc) != {"kind", "path"}
        or loc.get("kind") != "project_path"
    ):
        raise fail("the source must be `{source_id, locator: {kind: project_path, path}, media_type: text/markdown}`")
    if not isinstance(loc["path"], str) or not isinstance(src["source_id"], str):
        raise fail("`path` and `source_id` must be strings")
    return loc["path"], src["source_id"]


def _blocked(source: Source, diags: list[dict[str, Any]]) -> dict[str, Any]:
    plan = {
        "schema": PLAN_SCHEMA,
        "plan_id": "",
        "status": "blocked",
        "data_class": "blocked",
        "extractor": {**EXTRACTOR, "configuration_hash": CONFIGURATION_HASH},
        "diagnostics": diags,
    }
    plan["plan_id"] = "capture_" + canonical_hash({**plan, "source_id": source.source_id})
    return plan


def _candidate(src: Source, s: Section | None, text: str) -> dict[str, Any]:
    if s is None:  # no typed heading: the whole document, for a human to decide
        type_, lane, dest, sens = "fact", "semantic", "needs_review", "unknown"
        title, body, span, heads, kind = (
            src.path.rsplit("/", 1)[-1][:-3],
            text.strip(),
            (0, len(src.data), 1, text.count("\n") + 1),
            [],
            "document",
        )
    else:
        type_, lane, dest, sens = PREFIXES[s.prefix or ""]
        title, body, heads, kind = s.title, s.body, s.heading_path, type_
        span = (s.byte_start, s.byte_end, s.line_start, s.line_end)
    if len(body.encode("utf-8")) > MAX_EVIDENCE_ITEM:
        raise Refusal(
            "capture_limit_exceeded",
            f"the section at line {span[2]} of `{src.path}` is larger than "
            "16 KiB of evidence; split it; nothing was written",
        )
    evidence = {
        "source_id": src.source_id,
        "locator": {"kind": "project_path", "path": src.path},
        "source_content_hash": digest(src.data),
        "span": dict(zip(("byte_start", "byte_end", "line_start", "line_end"), span)),
        "evidence_content_hash": digest(src.data[span[0] : span[1]]),
        "text": body,
        "heading_path": heads,
        "section_kind": kind,
    }
    memory = {
        "type": type_,
        "lane": lane,
        "title": title,
        "body": body,
        "scope": {"kind": "repo", "id": None, "paths": []},
        "tags": [],
    }
    claim = "claim_" + canonical_hash({"evidence": {k: v for k, v in evidence.items() if k != "text"}})[:32]
    return {
        "claim_id": claim,
        "candidate_id": "candidate_" + canonical_hash({"claim": claim, "memory": memory})[:32],
        "memory": memory,
        "evidence": [evidence],
        "extraction": {**EXTRACTOR, "configuration_hash": CONFIGURATION_HASH},
        "confidence": 1.0,
        "classification": {
            "destination": dest,
            "destination_reason": f"{kind} section of a Markdown source",
            "sensitivity": sens,
            "sensitivity_reason": _SENS_REASON[sens],
            "policy": POLICY[dest],
        },
    }


def build_plan(root: Path, src: Source, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The plan of ``src`` against ``existing`` (:func:`memzoi.lifecycle.import_plan.existing_content`)."""
    if b"\x00" in src.data:
        return _blocked(src, [{"code": "unsupported_binary_content", "source_id": src.source_id}])
    try:
        text = src.data.decode("utf-8")
    except UnicodeDecodeError:
        return _blocked(src, [{"code": "unsupported_utf8_content", "source_id": src.source_id}])
    hit = first_prohibited(text)
    if hit is not None:
        return _blocked(
            src,
            [
                {
                    "code": "prohibited_content_detected",
                    "detector": hit.code,
                    "source_id": src.source_id,
                    "line": hit.line,
                }
            ],
        )
    found, diags = sections(text)
    typed = [s for s in found if s.prefix]
    for s in typed:
        if not s.body:
            diags.append({"code": "empty_markdown_section", "line": s.line_start})
    typed = [s for s in typed if s.body]
    if len(typed) > MAX_CANDIDATES:
        raise Refusal(
            "capture_limit_exceeded", f"`{src.path}` has more than {MAX_CANDIDATES} typed sections; nothing was written"
        )
    cands = (
        [_candidate(src, s, text) for s in typed] if typed else ([_candidate(src, None, text)] if text.strip() else [])
    )
    pre = actions(root, cands, existing, conflicts_by_title(root))
    private = any(c["classification"]["destination"] != "repo" for c in cands)
    plan = {
        "schema": PLAN_SCHEMA,
        "plan_id": "",
        "status": "ready",
        "data_class": "private" if private else "repo_safe",
        "request": request_for(src),
        "sources": [src.snapshot()],
        "extractor": {**EXTRACTOR, "profile": PROFILE, "configuration_hash": CONFIGURATION_HASH},
        "candidates": cands,
        "diagnostics": [{**d, "source_id": src.source_id} for d in diags],
        "preconditions": {"policy_version": POLICY_VERSION, "candidates": pre},
        "safeguards": {
            "policy_version": POLICY_VERSION,
            "configuration_hash": CONFIGURATION_HASH,
            "max_source_bytes": MAX_SOURCE_BYTES,
            "prohibited_detectors": DETECTORS,
        },
    }
    plan["plan_id"] = "capture_" + canonical_hash({k: v for k, v in plan.items() if k != "plan_id"})
    return plan


def current_plan(root: Path, path: str, source_id: str | None) -> dict[str, Any]:
    """Load the source and plan it against the current memory state (read-only)."""
    src = load_source(root, path, source_id)
    ledger = Ledger.for_project(root, create=False)
    if not ledger.exists:
        return build_plan(root, src, existing_content(root, None))
    with ledger.connect() as conn:
        return build_plan(root, src, existing_content(root, conn))


def plan_capture(
    project_root: str | os.PathLike[str],
    *,
    source: str | None = None,
    request_text: str | None = None,
    request_where: str = "request",
    source_id: str | None = None,
) -> dict[str, Any]:
    """The plan of ``--source`` ``source`` or of a ``memzoi/capture-request`` ``request_text``. Writes nothing.
    Raises :class:`Refusal` (``invalid_capture_source``, ``invalid_capture_request``,
    ``unsupported_capture_profile``, ``capture_limit_exceeded``, ``index_unavailable``)."""
    if (source is None) == (request_text is None):
        raise ValueError("give exactly one of source and request_text")
    root = Path(project_root).resolve()
    if request_text is not None:
        source, source_id = parse_request(request_text, request_where)
    return current_plan(root, source or "", source_id)
