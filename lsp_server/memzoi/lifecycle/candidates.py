"""Local candidates: memories an agent proposes for private local memory (runtime plane), under Zuno's promotion
policy (reference ``zuno-memory.md`` §5, :mod:`memzoi.base.promotion`).

A candidate is a row of ``local_candidate`` in the ledger database, never a file. It is validated like every
proposal (:func:`~memzoi.lifecycle.propose.check_values`) and screened: every text it stores (title, body,
reason, tags, ``applies_to``, source ref and the proposing client's name) is rendered as the packet the ``repo``
destination would write and run through the same detectors, and a credential, personal-identifier, prompt-injection or
invisible-character finding refuses it with nothing stored (Zuno's validation rejects prompt injection and known
credential literals; credentials and personal identifiers are never stored, not even locally; an e-mail
address or phone number is, as in a local record). Text too large for every detector to check
is refused too. The same trimmed body as a pending candidate or a visible local record is refused with the
existing id. ``applies_to`` is kept and carried to the local record (Memzoi's local records hold paths too).

``[promotion] mode`` of ``.memzoi/config.toml`` then decides (an invalid ``[promotion]`` section refuses the
candidate with ``invalid_config``, naming the file and the key): ``review`` keeps it pending; ``high_confidence``
applies it when its confidence in basis points reaches ``auto_confidence``; ``automatic`` applies it. Applying
(at once, or later by a human with ``memzoi local approve``) is one ledgered change that creates the private local
record; ``memzoi undo`` of that change hides the record again and the candidate then reads ``undone``. Rejecting
marks the candidate rejected with a reason. Agents can only propose: approve and reject are human commands.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import blake3

from ..base.promotion import PromotionSection, confidence_bp, promotes
from ..judge import analysis
from ..judge.config import load_section
from ..judge.revision import content_hash
from ..ledger import ChangePlan, ChangeResult, Ledger, Refusal, now_utc, run_change
from ..ledger.local_records import VISIBLE
from ..ledger.reading import read_ledger
from ..read.render import render_packet
from .common import concept_slug
from .local import CREDENTIAL_CODES, LocalRecordValues, _insert
from .propose import Blocked, Draft, check_scannable, check_values, packet_data, screen_actor

#: Codes that refuse a local candidate: credentials, and Zuno's threat scan (text read back into prompts).
THREAT_CODES = CREDENTIAL_CODES | {"prompt_injection", "invisible_character"}
OPERATION = "local_promote"


@dataclass
class Candidate:
    """A local candidate. ``state`` is ``pending``, ``rejected``, or the status of the change that applied it
    (``applied``, ``undone``, ``failed``, ``uncertain``)."""

    id: str
    type: str
    lane: str
    title: str
    body: str
    reason: str
    confidence_bp: int
    tags: list[str]
    applies_to: list[str]
    source_ref: str | None
    actor: str
    source: str
    state: str
    change_id: str | None
    decided_by: str | None
    decided_at: str | None
    decision_reason: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON (``destination: local``, ``confidence`` in [0, 1] next to the basis points)."""
        return {"destination": "local", **self.__dict__, "confidence": self.confidence_bp / 10_000}


_SELECT = "SELECT k.*, c.status AS change_status FROM local_candidate k LEFT JOIN change c ON c.id = k.change_id"


def _row(r: sqlite3.Row) -> Candidate:
    state = r["status"] if r["status"] != "applied" else (r["change_status"] or "applied")
    return Candidate(
        id=r["id"],
        type=r["type"],
        lane=r["lane"],
        title=r["title"],
        body=r["body"],
        reason=r["reason"],
        confidence_bp=r["confidence_bp"],
        tags=json.loads(r["tags_json"]),
        applies_to=json.loads(r["applies_to_json"]),
        source_ref=r["source_ref"],
        actor=r["actor"],
        source=r["source"],
        state=state,
        change_id=r["change_id"],
        decided_by=r["decided_by"],
        decided_at=r["decided_at"],
        decision_reason=r["decision_reason"],
        created_at=r["created_at"],
    )


def candidate_id(draft: Draft) -> str:
    """Deterministic id: ``local-<title slug>-<12 hex of BLAKE3 over type, lane, title and body hash>``."""
    h = blake3.blake3()
    for part in (draft.type, draft.lane, draft.title.strip(), content_hash(draft.body)):
        h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    return f"local-{concept_slug(draft.title)[:40].strip('-') or 'memory'}-{h.hexdigest()[:12]}"


def screen_local(draft: Draft, actor: str) -> None:
    """Raise :class:`Blocked` when a credential or threat detector (:data:`THREAT_CODES`) fires on any text the
    candidate would store, ``actor`` included, or :class:`Refusal` ``candidate_too_large`` when that text is too
    large to be checked whole. The texts are rendered as the ``repo`` destination's packet, so each is scanned
    where and as the repository path scans it."""
    probe = render_packet(
        packet_data(draft, "local-candidate", actor=actor, now="1970-01-01T00:00:00Z", target=None), draft.body.strip()
    )
    check_scannable(probe, "the local candidate")
    codes = sorted({f.code for f in analysis.analyze_text(probe, None).findings if f.code in THREAT_CODES})
    if codes:
        raise Blocked(codes, "the local candidate")


@dataclass
class Outcome:
    """The result of proposing a local candidate: the candidate and, when the policy applied it, the change."""

    candidate: Candidate
    change: ChangeResult | None

    def to_json(self) -> dict[str, Any]:
        """``{"candidate": …, "change": … or null}``."""
        return {"candidate": self.candidate.to_json(), "change": self.change.to_json() if self.change else None}


def propose_local(project_root: str | os.PathLike[str], draft: Draft, *, actor: str, source: str = "mcp") -> Outcome:
    """Store ``draft`` as a pending local candidate, then apply it when the promotion policy says so (see module
    docstring). Raises :class:`Refusal` (values, ``duplicate_content``) or :class:`Blocked` with nothing stored."""
    root = Path(project_root).resolve()
    check_values(draft)
    if draft.supersedes:
        raise Refusal("invalid_value", "`supersedes` names a repository record; local candidates cannot supersede")
    section, problems = load_section(root / ".memzoi", "promotion")
    # the configuration's `promotion` field is a PromotionSection (judge.config.MemzoiConfig.promotion)
    policy = cast(PromotionSection, section)
    if problems:  # an invalid mode must not quietly become `review` (or anything else the file does not say)
        raise Refusal(
            "invalid_config",
            f"{'; '.join(problems)}; the promotion policy cannot be read, so nothing was "
            "stored: fix the file (`memzoi check .memzoi/config.toml` names every problem)",
        )
    screen_actor(actor)
    screen_local(draft, actor)
    bp = confidence_bp(draft.confidence)
    cid = candidate_id(draft)
    body = draft.body.strip()
    wanted = content_hash(body)
    ledger = Ledger.for_project(root)
    with ledger.connect() as conn, ledger.transaction(conn):
        dup = conn.execute(
            "SELECT id FROM local_candidate WHERE body_hash = ? AND status = 'pending'", (wanted,)
        ).fetchone()
        if dup is None:
            dup = next((r["id"] for r in conn.execute(VISIBLE) if content_hash(r["body"]) == wanted), None)
        else:
            dup = dup[0]
        if dup is not None:
            raise Refusal("duplicate_content", f"the same body is already local memory `{dup}`; nothing was stored")
        if conn.execute("SELECT 1 FROM local_candidate WHERE id = ?", (cid,)).fetchone():
            n = 2
            while conn.execute("SELECT 1 FROM local_candidate WHERE id = ?", (f"{cid}-{n}",)).fetchone():
                n += 1
            cid = f"{cid}-{n}"
        conn.execute(
            "INSERT INTO local_candidate (id, type, lane, title, body, body_hash, reason, confidence_bp, tags_json,"
            " applies_to_json, source_ref, actor, source, status, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?)",
            (
                cid,
                draft.type,
                draft.lane,
                draft.title.strip(),
                body,
                wanted,
                draft.reason.strip(),
                bp,
                json.dumps([t.strip() for t in draft.tags]),
                json.dumps([p.strip() for p in draft.applies_to]),
                draft.source_ref,
                actor,
                source,
                now_utc(),
            ),
        )
    change = None
    if promotes(policy, bp):
        change = approve_local(root, cid, actor=f"promotion:{policy.mode}", source=source)
    cand = get_candidate(root, cid)
    assert cand is not None
    return Outcome(cand, change)


def get_candidate(project_root: str | os.PathLike[str], cid: str) -> Candidate | None:
    """One candidate by id, or ``None`` (never creates a ledger)."""
    ledger = Ledger.for_project(Path(project_root).resolve(), create=False)
    if not ledger.exists:
        return None

    def one(conn: sqlite3.Connection) -> Candidate | None:
        r = conn.execute(_SELECT + " WHERE k.id = ?", (cid,)).fetchone()
        return None if r is None else _row(r)

    return read_ledger(ledger, one)  # read-only where the home cannot be written


def list_candidates(project_root: str | os.PathLike[str], *, state: str | None = "pending") -> list[Candidate]:
    """Candidates in ``state`` (``None`` = all), oldest first."""
    ledger = Ledger.for_project(Path(project_root).resolve(), create=False)
    if not ledger.exists:
        return []
    rows = read_ledger(ledger, lambda conn: [_row(r) for r in conn.execute(_SELECT + " ORDER BY k.created_at, k.id")])
    return [c for c in rows if state is None or c.state == state]


def _pending(conn: sqlite3.Connection, cid: str) -> sqlite3.Row:
    # the ledger's connections make sqlite3.Row rows (memzoi.ledger.store: row_factory)
    r: sqlite3.Row | None = conn.execute(_SELECT + " WHERE k.id = ?", (cid,)).fetchone()
    if r is None:
        raise Refusal("candidate_not_found", f"no local candidate `{cid}`; see `memzoi local pending`")
    if r["status"] != "pending":
        raise Refusal("candidate_resolved", f"local candidate `{cid}` is already {_row(r).state}")
    return r


def approve_local(project_root: str | os.PathLike[str], cid: str, *, actor: str, source: str = "cli") -> ChangeResult:
    """Apply the pending candidate ``cid`` as one ledgered change creating the private local record (undo hides
    it again). Raises :class:`Refusal` (``candidate_not_found``, ``candidate_resolved``)."""
    root = Path(project_root).resolve()

    def build(r: Path) -> ChangePlan:
        ledger = Ledger.for_project(r)
        with ledger.connect() as conn:
            row = _pending(conn, cid)
        values: LocalRecordValues = {
            "id": concept_slug(row["title"]) or "local-memory",
            "type": row["type"],
            "lane": row["lane"],
            "title": row["title"],
            "body": row["body"],
            "tags": json.loads(row["tags_json"]),
            "applies_to": json.loads(row["applies_to_json"]),
            "sensitivity": "local-only",
            "content_class": "local_only_state",
            "source_kind": row["source"],
            "source_ref": row["source_ref"],
            "proposal_id": cid,
        }
        insert = _insert(values)

        def effects(conn: sqlite3.Connection, change_id: str) -> None:
            done = conn.execute(
                "UPDATE local_candidate SET status = 'applied', change_id = ?, decided_by = ?, decided_at = ? "
                "WHERE id = ? AND status = 'pending'",
                (change_id, actor, now_utc(), cid),
            ).rowcount
            if done != 1:  # decided meanwhile by another process: the transaction rolls back
                raise Refusal("candidate_resolved", f"local candidate `{cid}` was decided meanwhile")
            insert(conn, change_id)

        return ChangePlan(
            OPERATION,
            [],
            reason=row["reason"],
            summary=f"apply local candidate {cid}",
            details={"candidate_id": cid, "local_record": values["id"], "client": row["actor"]},
            db_effects=effects,
        )

    return run_change(root, build, actor=actor, source=source)


def reject_local(project_root: str | os.PathLike[str], cid: str, *, reason: str, actor: str) -> Candidate:
    """Mark the pending candidate ``cid`` rejected with ``reason``. Raises :class:`Refusal`
    (``reason_required``, ``candidate_not_found``, ``candidate_resolved``)."""
    if not reason.strip():
        raise Refusal("reason_required", "give the reason the candidate is rejected (--reason)")
    root = Path(project_root).resolve()
    ledger = Ledger.for_project(root)
    with ledger.connect() as conn, ledger.transaction(conn):
        _pending(conn, cid)
        conn.execute(
            "UPDATE local_candidate SET status = 'rejected', decided_by = ?, decided_at = ?, "
            "decision_reason = ? WHERE id = ?",
            (actor, now_utc(), reason.strip(), cid),
        )
    out = get_candidate(root, cid)
    assert out is not None
    return out
