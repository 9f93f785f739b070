"""The action of each capture candidate in a capture plan (:mod:`.capture_plan`; Memzoi's ``CaptureAction`` and
``CaptureMatch``, ``crates/memzoi-core/src/capture.rs``): ``duplicate`` (the trimmed body's BLAKE3 equals an active
record's, a pending packet's, an active runtime row's or an earlier candidate's), ``conflict`` (an active record or
pending packet with the same title and another body), ``blocked`` (the gate or a detector on the would-be packet; a
credential match redacts the candidate), ``create_proposal`` with a reserved packet id, ``create_runtime`` or
``no_write``, with the preconditions that pin each decision.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..judge.revision import content_hash
from ..ledger import Refusal, now_utc
from ..read.render import render_packet
from .capture_source import canonical_hash
from .common import PENDING, resolved_identities
from .import_plan import POLICY, _reserve, base_packet_id
from .local import content_codes
from .propose import Blocked, Draft, check_values, packet_data, screen
from .readiness import CREDENTIAL_CODES
from .rejections import query_index


def conflicts_by_title(root: Path) -> dict[str, list[dict[str, Any]]]:
    """The active records and pending packets by case-folded title, as conflict matches (the workspace index)."""
    rows = [
        ("canonical_record", *r)
        for r in query_index(
            root, "SELECT coalesce(id, path), title, content_hash FROM records WHERE status = 'active'", ()
        )
    ]
    rows += [
        ("pending_proposal", *r)
        for r in query_index(
            root, "SELECT coalesce(file_id, id, path), title, content_hash FROM proposals WHERE role = 'pending'", ()
        )
    ]
    out: dict[str, list[dict[str, Any]]] = {}
    for kind, ident, title, chash in rows:
        if title and chash:
            out.setdefault(title.strip().casefold(), []).append(
                {
                    "kind": kind,
                    "id": ident,
                    "destination": "repo",
                    "content_hash": "blake3:" + chash,
                    "status": "active" if kind == "canonical_record" else "proposed",
                    "updated_at": None,
                }
            )
    return out


def _match(d: dict[str, Any], chash: str) -> dict[str, Any]:
    status = {"canonical_record": "active", "pending_proposal": "proposed"}.get(d["kind"], "active")
    return {
        "kind": d["kind"],
        "id": d["id"],
        "destination": d["destination"],
        "content_hash": chash,
        "status": status,
        "updated_at": None,
    }


def repo_block(root: Path, memory: dict[str, Any]) -> list[str]:
    """The gate's and detectors' codes on the would-be packet of a repo ``memory`` draft (empty when it may be
    written); the same screening as an agent's proposal."""
    draft = Draft(
        title=memory["title"],
        body=memory["body"],
        type=memory["type"],
        lane=memory["lane"],
        reason="captured from Markdown",
        confidence=1.0,
    )
    try:
        check_values(draft)
        data = packet_data(draft, "mem_capture_probe", actor="capture", now=now_utc(precise=False), target=None)
        screen(root, ".memzoi/proposals/pending/mem_capture_probe.md", render_packet(data, memory["body"]))
    except Blocked as err:
        return list(err.codes)
    except Refusal as err:
        return [err.code]
    return []


def secret_codes(memory: dict[str, Any]) -> list[str]:
    """The credential and personal-data codes on a local or session candidate's title and body."""
    return content_codes(memory["title"], memory["body"], among=CREDENTIAL_CODES)


def actions(
    root: Path,
    cands: list[dict[str, Any]],
    existing: dict[str, list[dict[str, Any]]],
    conflicts: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """Set each candidate's ``action`` in place; returns the preconditions by candidate id."""
    used = set(resolved_identities(root))
    prior: dict[str, int] = {}
    pre: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(cands):
        m, dest = c["memory"], c["classification"]["destination"]
        raw = content_hash(m["body"])
        chash = "blake3:" + raw
        dups = [_match(d, chash) for d in existing.get(raw, [])]
        if raw in prior:
            dups.append(
                {
                    "kind": "earlier_candidate",
                    "id": cands[prior[raw]]["candidate_id"],
                    "destination": None,
                    "content_hash": chash,
                    "status": "planned",
                    "updated_at": None,
                }
            )
        prior.setdefault(raw, i)
        confl = [x for x in conflicts.get(m["title"].strip().casefold(), []) if x["content_hash"] != chash]
        reserved = None
        codes = repo_block(root, m) if dest == "repo" else secret_codes(m)
        if dups:
            c["action"] = {"kind": "duplicate", "matches": dups}
        elif confl:
            c["action"] = {"kind": "conflict", "matches": confl}
        elif codes:
            c["action"] = {"kind": "blocked", "code": codes[0], "codes": codes}
            if set(codes) & CREDENTIAL_CODES:  # a detector matched its text: shown nowhere (plan, review, output)
                m.update(title="Redacted capture candidate", body="Redacted: a detector matched this section.")
                for ev in c["evidence"]:
                    ev.pop("text", None)
        elif dest == "repo":
            reserved = _reserve(root, base_packet_id(m["title"]).replace("mem_import_", "mem_capture_", 1), used)
            c["action"] = {"kind": "create_proposal", "proposal_id": reserved, "path": f"{PENDING}/{reserved}.md"}
        elif dest in ("local", "session"):
            c["action"] = {"kind": "create_runtime", "route": POLICY[dest]["write_route"]}
        else:
            c["action"] = {"kind": "no_write", "reason_code": "needs_review"}
        pre[c["candidate_id"]] = {
            "duplicate_match_set_hash": canonical_hash(dups),
            "conflict_match_set_hash": canonical_hash(confl),
            "reserved_proposal_id": reserved,
            "relevant_record_hashes": sorted(
                ({k: d[k] for k in ("kind", "id", "content_hash", "status", "updated_at")} for d in dups + confl),
                key=lambda d: (d["kind"], d["id"]),
            ),
        }
    return pre
