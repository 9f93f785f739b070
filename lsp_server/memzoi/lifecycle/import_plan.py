"""``memzoi import plan``: the mutation-free, deterministic plan of a ``memzoi/import`` manifest (Memzoi's
lifecycle document, "Import planning"; the plan shape, actions, duplicate kinds and identity are Memzoi's
``crates/memzoi-core/src/import.rs`` ``build_plan`` and its reference page "Classified import").

Per candidate, in manifest order (``action.kind``):

* ``repo`` → ``create_proposal`` (``proposal_id``, ``path`` of the pending packet apply would write);
* ``local``/``session`` → ``create_runtime`` (``route`` ``runtime_local``/``runtime_session``);
* ``discard`` → ``no_write``; ``needs_review`` → ``blocked`` (the candidate's reason);
* a candidate whose trimmed-body BLAKE3 (Memzoi's ``content_hash``) equals an active canonical record's, a pending
  packet's, an active runtime row's (local record, open checkpoint) or an earlier candidate's → ``duplicate``
  (``matches``), before destination handling.

**The repo subset is all or nothing.** A repo candidate is unsafe when it is not ``sensitivity: repo-safe``
(Memzoi's rule) or, in this project, when the gate or a content detector blocks its packet (the same screening as
an agent's proposal). Then **every** repo candidate is ``blocked`` (the unsafe ones with the reason, the others
with Memzoi's guidance to split the manifest), the document-wide ``sources`` are omitted, and an unsafe candidate
shows only classification placeholders (Memzoi's redaction: title, body, reason, scope and tags replaced; its
``content_hash`` kept; ``reasons`` lists the codes). Local and session candidates still proceed. A local or session
candidate in which a credential or personal-data detector fires is ``blocked`` and redacted alone (this project:
``memzoi local add`` refuses such content too).

``plan_id`` is ``import_`` + BLAKE3 hex over the trimmed actor, a NUL byte and the plan without ``plan_id`` as
canonical JSON (sorted keys; Memzoi hashes its serde field order, so the ids differ from Memzoi's while the rule —
same actor, manifest and memory state give the same id — is the same).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import blake3

from ..judge.pathsafety import bears_secret, shown_id
from ..judge.revision import content_hash
from ..ledger import Ledger, Refusal, now_utc
from ..ledger.local_records import VISIBLE as LOCALS
from ..read.render import render_packet
from .common import PENDING, concept_slug, resolved_identities
from .import_manifest import ImportCandidate, ImportManifest, parse_import_manifest
from .local import CREDENTIAL_CODES, content_codes
from .propose import Blocked, Draft, check_scannable, check_values, packet_data, screen
from .rejections import query_index

SCHEMA = "memzoi/import-plan"
#: Memzoi's ``MemoryDestination::policy()`` (reference page "Memory planes and destinations").
POLICY: dict[str, dict[str, str | None]] = {
    "repo": {"plane": "git", "write_route": "file_backed_proposal", "review": "proposal_review"},
    "local": {"plane": "runtime", "write_route": "runtime_local", "review": "no_review"},
    "session": {"plane": "runtime", "write_route": "runtime_session", "review": "no_review"},
    "discard": {"plane": None, "write_route": "no_write", "review": "no_review"},
    "needs_review": {"plane": None, "write_route": "no_write", "review": "human_decision"},
}
_DUP_ORDER = {"canonical_record": 0, "pending_proposal": 1, "runtime_record": 2, "earlier_candidate": 3}
SPLIT = (
    "another repo candidate in this manifest is not repo-safe; split the manifest so repo-safe candidates "
    "retain their evidence sources"
)
REDACTED_TITLE = "Redacted non-repo-safe import candidate"
REDACTED_BODY = "Original non-repo-safe import candidate content was redacted."


def draft_of(c: ImportCandidate) -> Draft:
    """The proposal draft of repo candidate ``c`` (its reason is the packet's ``proposal.reason``)."""
    return Draft(
        title=c.title,
        body=c.body,
        type=c.type,
        lane=c.lane,
        reason=c.reason,
        confidence=1.0,
        tags=c.tags,
        applies_to=c.scope["paths"],
    )


def packet_of(
    m: ImportManifest, c: ImportCandidate, packet_id: str, *, actor: str, now: str
) -> tuple[str, str, dict[str, Any]]:
    """``(rel, text, data)`` of the pending packet of repo candidate ``c``: Memzoi's ``proposal_draft`` (the
    manifest's sources, the candidate's scope, tags and reason) with origin ``{origin_key: <origin_key>#<index>,
    route: import}``."""
    data = packet_data(draft_of(c), packet_id, actor=actor, now=now, target=None)
    scope: dict[str, Any] = {"kind": c.scope["kind"]}
    if c.scope["id"]:
        scope["id"] = c.scope["id"]
    if c.scope["paths"]:
        scope["paths"] = list(c.scope["paths"])
    data["scope"] = scope
    data["sources"] = [dict(s) for s in m.sources] or None
    data["origin"] = {"origin_key": f"{m.origin_key}#{c.index}", "route": "import"}
    rel = f"{PENDING}/{packet_id}.md"
    return rel, render_packet(data, c.body), data


def base_packet_id(title: str) -> str:
    """Memzoi's import proposal id before reservation: ``mem_import_<slug>`` (slug cut to 64 characters,
    ``memory`` when empty); ``mem_import_memory`` when a detector would flag the id or its path."""
    slug = concept_slug(title)[:64].rstrip("-") or "memory"
    base = f"mem_import_{slug}"
    if shown_id(base) != base or bears_secret(f"{PENDING}/{base}.md"):
        return "mem_import_memory"
    return base


def repo_codes(root: Path, m: ImportManifest, c: ImportCandidate) -> list[str]:
    """Why repo candidate ``c`` may not become a pending packet (empty when it may): ``sensitivity_not_repo_safe``,
    or the gate's and detectors' codes on its would-be packet."""
    if c.sensitivity != "repo-safe":
        return ["sensitivity_not_repo_safe"]
    try:
        check_values(draft_of(c))
        rel, text, _ = packet_of(m, c, base_packet_id(c.title), actor="import", now=now_utc(precise=False))
        screen(root, rel, text)
    except Blocked as err:
        return list(err.codes)
    except Refusal as err:
        return [err.code]
    return []


def runtime_codes(c: ImportCandidate) -> list[str]:
    """The credential and personal-data codes on a non-repo candidate's text (title, body, reason, tags, scope
    paths; empty when it may be stored and shown)."""
    extra = "\n".join([c.reason, *c.tags, *c.scope["paths"], c.scope["id"] or ""])
    try:
        check_scannable(f"{c.title}\n{c.body}\n{extra}", f"candidates[{c.index}]")
    except Refusal as err:
        return [err.code]
    return content_codes(c.title, f"{c.body}\n{extra}", among=CREDENTIAL_CODES)


def existing_content(root: Path, conn: sqlite3.Connection | None) -> dict[str, list[dict[str, Any]]]:
    """Trimmed-body BLAKE3 → Memzoi's duplicate entries ``{kind, id, destination, candidate_index}`` of active
    canonical records and pending packets (the index) and of visible local records and open checkpoints (the
    ledger database ``conn``, when there is one)."""
    rows = [
        ("canonical_record", r[0], "repo", r[1])
        for r in query_index(
            root,
            "SELECT coalesce(id, path), content_hash FROM records WHERE status = 'active' AND content_hash IS NOT NULL",
            (),
        )
    ]
    rows += [
        ("pending_proposal", r[0], "repo", r[1])
        for r in query_index(
            root,
            "SELECT coalesce(file_id, id, path), content_hash FROM proposals WHERE role = 'pending' AND "
            "content_hash IS NOT NULL",
            (),
        )
    ]
    if conn is not None:
        from .checkpoints import _VISIBLE as CHECKPOINTS  # noqa: PLC0415 lazy: start-up

        rows += [("runtime_record", r["id"], "local", content_hash(r["body"])) for r in conn.execute(LOCALS)]
        rows += [
            ("runtime_record", r["id"], "session", content_hash(r["body"]))
            for r in conn.execute(CHECKPOINTS + " AND k.status = 'open'")
        ]
    out: dict[str, list[dict[str, Any]]] = {}
    for kind, ident, dest, digest in rows:
        out.setdefault(digest, []).append({"kind": kind, "id": ident, "destination": dest, "candidate_index": None})
    return out


def _dedup(matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for d in sorted(
        matches,
        key=lambda d: (
            _DUP_ORDER[d["kind"]],
            d["id"],
            d["destination"] or "",
            d["candidate_index"] if d["candidate_index"] is not None else -1,
        ),
    ):
        if (d["kind"], d["id"]) not in seen:
            seen.add((d["kind"], d["id"]))
            out.append(d)
    return out


def _reserve(root: Path, base: str, used: set[str]) -> str:
    n = 1
    while True:
        cand = base if n == 1 else f"{base}-{n}"
        if cand not in used and not (root / PENDING / f"{cand}.md").exists():
            used.add(cand)
            return cand
        n += 1


def _redacted(c: ImportCandidate, item: dict[str, Any], why: str) -> None:
    item.update(
        {
            "classification": {"destination": c.destination, "reason": why},
            "title": REDACTED_TITLE,
            "body": REDACTED_BODY,
            "scope": {"kind": c.scope["kind"], "id": None, "paths": []},
            "tags": [],
        }
    )


def build_plan(root: Path, m: ImportManifest, actor: str, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The plan of ``m`` for ``actor`` against ``existing`` (:func:`existing_content`); see the module docstring.
    Pure apart from reading the gate's inputs under ``root``."""
    unsafe = {c.index: repo_codes(root, m, c) for c in m.candidates if c.destination == "repo"}
    unsafe = {i: codes for i, codes in unsafe.items() if codes}
    secret = {c.index: codes for c in m.candidates if c.destination != "repo" if (codes := runtime_codes(c))}
    blocked_runtime = {i: codes for i, codes in secret.items() if m.candidates[i].destination in ("local", "session")}
    used = set(resolved_identities(root))
    summary = dict.fromkeys(
        ("create_proposals", "local_writes", "session_writes", "duplicates", "discarded", "needs_review"), 0
    )
    prior: dict[str, int] = {}
    candidates = []
    for c in m.candidates:
        digest = content_hash(c.body)
        blocked_repo = c.destination == "repo" and bool(unsafe)
        item: dict[str, Any] = {
            "index": c.index,
            "classification": {"destination": c.destination, "reason": c.reason},
            "policy": POLICY[c.destination],
            "type": c.type,
            "lane": c.lane,
            "title": c.title,
            "body": c.body,
            "sensitivity": c.sensitivity,
            "scope": c.scope,
            "tags": c.tags,
            "content_hash": digest,
        }
        dups: list[dict[str, Any]] = []
        if not blocked_repo:
            dups = list(existing.get(digest, []))
            if digest in prior:
                dups.append(
                    {
                        "kind": "earlier_candidate",
                        "id": f"candidate-{prior[digest]}",
                        "destination": None,
                        "candidate_index": prior[digest],
                    }
                )
            prior.setdefault(digest, c.index)
        item["duplicates"] = dups = _dedup(dups)
        if blocked_repo:
            summary["needs_review"] += 1
            repo_reasons = unsafe.get(c.index)
            if repo_reasons:
                reason = (
                    "repo destination requires sensitivity repo-safe; got " + c.sensitivity + "; classify the "
                    "candidate as repo-safe or choose a non-repo destination"
                    if repo_reasons == ["sensitivity_not_repo_safe"]
                    else "the Git-plane gate blocks this repo candidate; sanitize it or choose a non-repo destination"
                )
                item["action"] = {"kind": "blocked", "reason": reason, "reasons": repo_reasons}
                _redacted(c, item, "non-repo-safe repo candidate requires classification or rerouting")
            else:
                item["action"] = {"kind": "blocked", "reason": SPLIT}
        elif c.index in blocked_runtime:
            summary["needs_review"] += 1
            item["action"] = {
                "kind": "blocked",
                "reason": "the candidate carries a secret or personal data; remove "
                "it before storing it in runtime memory",
                "reasons": blocked_runtime[c.index],
            }
            _redacted(c, item, "candidate with a secret or personal data requires sanitizing")
        elif dups:
            summary["duplicates"] += 1
            item["action"] = {"kind": "duplicate", "matches": dups}
        elif c.destination == "repo":
            summary["create_proposals"] += 1
            pid = _reserve(root, base_packet_id(c.title), used)
            item["action"] = {"kind": "create_proposal", "proposal_id": pid, "path": f"{PENDING}/{pid}.md"}
        elif c.destination in ("local", "session"):
            summary["local_writes" if c.destination == "local" else "session_writes"] += 1
            item["action"] = {"kind": "create_runtime", "route": POLICY[c.destination]["write_route"]}
        elif c.destination == "needs_review":
            summary["needs_review"] += 1
            item["action"] = {"kind": "blocked", "reason": c.reason}
        else:
            summary["discarded"] += 1
            item["action"] = {"kind": "no_write", "reason": c.reason}
        if c.index in secret and c.destination in ("discard", "needs_review"):  # written nowhere, shown redacted
            item["action"] = {
                **item["action"],
                "reason": "redacted: the candidate carries a secret or personal data",
                "reasons": secret[c.index],
            }
            _redacted(c, item, "candidate with a secret or personal data")
        candidates.append(item)
    plan = {
        "schema": SCHEMA,
        "plan_id": "",
        "sources": [] if unsafe else m.sources,
        "summary": {"total": len(m.candidates), **summary},
        "candidates": candidates,
    }
    plan["plan_id"] = plan_identity(actor, plan)
    return plan


def plan_identity(actor: str, plan: dict[str, Any]) -> str:
    """``import_<BLAKE3 hex>`` over the trimmed ``actor``, NUL and ``plan`` without its ``plan_id``."""
    body = json.dumps(
        {k: v for k, v in plan.items() if k != "plan_id"}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    h = blake3.blake3(actor.strip().encode("utf-8") + b"\x00" + body.encode("utf-8"))
    return f"import_{h.hexdigest()}"


def source_file(root: Path, path: str | None) -> str | None:
    """The manifest path relative to ``root`` (POSIX), ``None`` when outside it, read from stdin or unresolvable."""
    if not path or path == "-":
        return None
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def plan_import(
    project_root: str | os.PathLike[str],
    text: str,
    *,
    where: str = "manifest",
    actor: str = "cli",
    path: str | None = None,
) -> dict[str, Any]:
    """The plan of manifest ``text`` (named ``where``), with Memzoi's envelope ``mode: "plan"``, ``actor`` and
    ``source_file``. Writes nothing (the index may be refreshed, as by ``memzoi check``). Raises :class:`Refusal`
    (``invalid_import_manifest``, ``index_unavailable``)."""
    root = Path(project_root).resolve()
    m = parse_import_manifest(text, where)
    screen_origin_key(m)
    ledger = Ledger.for_project(root, create=False)
    if not ledger.exists:
        plan = build_plan(root, m, actor, existing_content(root, None))
    else:
        with ledger.connect() as conn:
            plan = build_plan(root, m, actor, existing_content(root, conn))
    return {"mode": "plan", "actor": actor.strip(), "source_file": source_file(root, path), **plan}


def screen_origin_key(m: ImportManifest) -> None:
    """Refuse an ``origin_key`` or a source locator in which a credential detector fires (they are stored in
    packets and the ledger, and shown in the plan)."""
    if content_codes("origin key", m.origin_key, among=CREDENTIAL_CODES):
        raise Refusal(
            "invalid_import_manifest",
            "`origin_key` looks like a secret; name the source event with an "
            "opaque key of your own; nothing was written",
        )
    for i, src in enumerate(m.sources):
        if content_codes("source", "\n".join(src.values()), among=CREDENTIAL_CODES):
            raise Refusal(
                "invalid_import_manifest",
                f"sources[{i}] looks like it holds a secret (a credential in "
                "a URL or reference); cite the source without it; nothing was written",
            )
