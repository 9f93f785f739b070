"""Proposing, applying, rejecting and undoing resident-memory candidates, at most once (reference
``zuno-memory.md`` §1, §3, §5).

Every operation holds memzoi's lock of its resident file and first reconciles that file's in-flight candidates
(:mod:`.reconcile`); every write also holds the writer lock Zuno takes (:func:`.store.write_lock`) from before
the file is read until the outcome is recorded. ``propose`` validates the operation against the current file exactly as an apply would
(malformed operation, reason, confidence, drift, locator, threats, cap), records a ``pending`` candidate, and
asks the promotion policy (:mod:`memzoi.base.promotion`, ``[promotion]`` in ``.memzoi/config.toml``) whether to apply
it at once. Before a write to a file that carries a hand edit, its bytes are copied to a ``.bak.<unix-seconds>``
file beside it (:func:`keep_hand_edits`). ``apply`` records ``applying`` with the before and after entries and
the file's layout (line ending, byte order mark: :mod:`.encoding`), replaces the file exactly
(:meth:`.store.ResidentStore.replace_exact`) and records ``applied``; a failed write is classified from the file
(never retried). ``undo`` is the same with the snapshots swapped. Steps are reported to the ledger's fault hook
(``locked``, ``planned``, ``recorded``, ``apply:temp``, ``apply:renamed``, ``apply:written``, ``committed``; ``undo:``
likewise) so crash tests can stop the process at each one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.promotion import confidence_bp, promotes
from ..base.utf8 import utf8_bytes
from ..base.vocabulary import RECOVERY_MODES
from ..judge.config_model import MemzoiConfig
from ..ledger import Refusal, preview_fingerprint
from ..ledger.model import rejection_reason
from ..ledger.store import _step as step  # the ledger's fault hook: one hook drives the crash tests of both
from ..read.text import rust_trim
from . import candidates as db
from .candidate_write import (
    acted,
    apply_locked,
    find_candidate,
    keep_hand_edits,
    load_candidate,
    locked_session,
    operation_of,
    owned_file,
    preview_file,
    recorded_layout,
    refuse_undecidable,
    write_entries,
)
from .candidates import Candidate
from .encoding import Layout
from .format import serialize
from .locator import check_cap, parse_operation, project as project_entries, refuse_unencodable
from .reconcile import reconcile_locked
from .scope import project_config, resident_file
from .store import ResidentStore, resident_lock, write_lock
from .threats import refuse_secret_ids, refuse_threats

#: ``--source`` values; Zuno's ``tool`` is accepted as ``foreground_tool``.
SOURCE_ALIASES = {"tool": "foreground_tool"}


@dataclass
class Proposed:
    """What ``propose`` did: the candidate (as it is now), whether it is new, whether promotion applied it, and
    ``held``: why it waits for a human although ``[promotion]`` would have applied it (:func:`_promotable`)."""

    candidate: Candidate
    inserted: bool
    promoted: bool
    held: str | None = None


def fingerprint(scope: str, action: str, content: str | None, old_text: str | None) -> str:
    """Hex SHA-256 of scope, action, trimmed content and trimmed locator joined by NUL (Zuno
    ``proposal_fingerprint``); identifies a reflection proposal for idempotent inserts."""
    parts = [scope, action, rust_trim(content or ""), rust_trim(old_text or "")]
    return hashlib.sha256(utf8_bytes("\0".join(parts))).hexdigest()


def preview_apply(project_root: str | Path, candidate_id: str, *, config: MemzoiConfig | None = None) -> dict[str, Any]:
    """What approving the pending or failed candidate ``candidate_id`` would write, without writing or locking
    (the review flow's diff, issue 28): ``{"operation": "approve", "summary", "reason", "candidateId", "files":
    [{"path", "before", "after"}], "previewed"}`` with the resident file's absolute ``path`` and its text before and
    after; ``previewed`` is the fingerprint :func:`apply` takes (:func:`.candidate_write.acted`).
    Raises :class:`Refusal` exactly as the approve would before writing (unknown, foreign or decided candidate,
    locator, threat scan, cap)."""

    root = Path(project_root).resolve()
    cand = find_candidate(candidate_id)
    file = owned_file(root, cand, config)
    refuse_undecidable(cand, "approve")
    store = ResidentStore(file)
    op = operation_of(cand)
    after = project_entries(store.entries, op)
    refuse_threats(after, file.accepted)
    check_cap(file.scope, after, file.cap, store.entries)
    return {
        "operation": "approve",
        "summary": f"approve {cand.action} candidate {cand.id} in {file.scope} memory",
        "reason": cand.reason,
        "candidateId": cand.id,
        "files": [preview_file(store, serialize(after))],
        "previewed": preview_fingerprint(acted(store, op)),
    }


#: Why an agent's global-scope candidate waits although ``[promotion]`` would apply it (see :func:`_promotable`).
GLOBAL_HELD = (
    "an agent's candidate for the global file always waits for a human: [promotion] in the repository's "
    ".memzoi/config.toml cannot write the memory every other checkout reads"
)


def _promotable(cand: Candidate) -> bool:
    """Whether the project's ``[promotion]`` may apply ``cand`` at once.

    A deliberate difference from Zuno, whose ``automatic``/``high_confidence`` promote every source (reference
    §5): an agent's (``foreground_tool``/``reflection``) proposal for the *global* file always waits for a human.
    In Zuno the policy is the user's own setting; here it lives in ``.memzoi/config.toml``, which the repository
    carries, so a cloned repository (or an agent it has prompt-injected) could otherwise write unreviewed into the
    user's memory of every other checkout. The user's own global proposals and all project ones follow the policy.
    """
    return cand.scope == "project" or cand.source == "user"


def propose(
    project_root: str | Path,
    *,
    scope: str,
    action: str,
    content: str | None = None,
    old_text: str | None = None,
    reason: str,
    confidence: float,
    source: str = "user",
    session_id: str | None = None,
    message_id: str | None = None,
    actor: str,
    config: MemzoiConfig | None = None,
) -> Proposed:
    """Validate and record a candidate, then apply it when the promotion policy says so (Zuno ``propose``; an
    agent's global-scope candidate always waits for a human, see :func:`_promotable`).

    ``confidence`` is a number in [0, 1] (stored in basis points); ``source`` is ``user``, ``foreground_tool`` or
    ``reflection`` (a reflection proposal needs ``session_id`` and ``message_id``, and one with the same session,
    message and fingerprint returns the first candidate without promoting it again; so does any proposal of the
    same change, action, content and locator, as a pending candidate of the same file). Raises :class:`Refusal`
    when the proposal is invalid (nothing recorded) or when its promotion fails (the candidate stays ``failed`` or
    ``uncertain``, and the message names it).
    """
    root = Path(project_root).resolve()
    config = config or project_config(root, ("resident", "promotion"))
    op = parse_operation(action, content, old_text)
    why = rust_trim(reason or "")
    refuse_unencodable(reason=why, session_id=session_id, message_id=message_id, actor=actor)
    refuse_secret_ids(session_id=session_id, message_id=message_id)
    if not why:
        raise Refusal("invalid_candidate", "reason must not be empty")
    try:
        bp = confidence_bp(confidence)
    except (TypeError, ValueError):
        raise Refusal("invalid_candidate", "confidence must be between 0 and 1") from None
    source = SOURCE_ALIASES.get(source, source)
    if source not in db.SOURCES:
        raise Refusal("invalid_candidate", f"source must be one of {', '.join(db.SOURCES)}")
    if source == "reflection" and not (session_id and message_id):
        raise Refusal("invalid_candidate", "a reflection proposal needs its source session and message ids")
    file = resident_file(root, scope, config)
    refuse_threats([why], file.accepted, where="in the reason")
    with locked_session(file) as conn:
        ResidentStore(file).preview(op, keep=False)  # a refused proposal writes nothing, no backup either
        same = db.pending_same(conn, str(file.path), op.action, op.content, op.old_text)
        if same is not None:  # de-duplicated by content and locator: one candidate for one change
            return Proposed(same, False, False)
        now = db.now_ms()
        cand = Candidate(
            id=db.new_id(),
            scope=scope,
            target_path=str(file.path),
            action=op.action,
            content=op.content,
            old_text=op.old_text,
            reason=why,
            confidence=bp,
            source=source,
            source_session_id=session_id,
            source_message_id=message_id,
            actor=actor,
            status="pending",
            time_created=now,
            time_updated=now,
            fingerprint=fingerprint(scope, op.action, op.content, op.old_text) if source == "reflection" else None,
        )
        cand, inserted = db.insert(conn, cand)
        if not inserted or not promotes(config.promotion, bp):
            return Proposed(cand, inserted, False)
        if not _promotable(cand):
            return Proposed(cand, inserted, False, GLOBAL_HELD)
        return Proposed(apply_locked(conn, root, cand, f"promotion:{config.promotion.mode}", config), True, True)


def apply(
    project_root: str | Path,
    candidate_id: str,
    *,
    actor: str,
    config: MemzoiConfig | None = None,
    previewed: str | None = None,
) -> Candidate:
    """Approve and apply a ``pending``/``failed`` candidate at most once; returns it ``applied``. Raises
    :class:`Refusal` (validation: the candidate becomes ``failed``; write: ``failed``/``uncertain``;
    ``preview_stale``, nothing recorded, when ``previewed``, :func:`preview_apply`'s fingerprint, is given and the
    file or the candidate changed since that preview; without it the file is read as it is, as before)."""
    root = Path(project_root).resolve()
    cand = find_candidate(candidate_id)
    with locked_session(owned_file(root, cand, config)) as conn:
        return apply_locked(conn, root, load_candidate(conn, cand.id), actor, config, previewed)


def refuse_undecided_elsewhere(
    project_root: str | Path, candidate_id: str, decision: str, *, config: MemzoiConfig | None = None
) -> None:
    """Refuse ``decision`` (``approve``, ``edit``, ``reject``, ``undo``, ``recover``) on the candidate
    ``candidate_id`` of this project when its state forbids it (:func:`.candidate_write.refuse_undecidable`: e.g.
    approved meanwhile by another editor or the CLI), without taking a lock or recording anything. A caller that
    checks something of its own before the decision (the server's open-buffer check) asks this first, so the
    candidate's state is the reason given; the decision itself checks again under the file's lock. Raises
    :class:`Refusal` (``candidate_not_found``, ``foreign_candidate``, or the decision's code)."""
    cand = find_candidate(candidate_id)
    owned_file(Path(project_root).resolve(), cand, config)
    refuse_undecidable(cand, decision)


def undo(project_root: str | Path, candidate_id: str, *, actor: str, config: MemzoiConfig | None = None) -> Candidate:
    """Restore the exact before entries of an ``applied`` candidate at most once (reference §1, §3 "Undo").

    As in Zuno, ``undoing`` is recorded before the file is touched and the write itself carries the precondition
    (the file must hold the candidate's after entries, no drift). When the precondition fails nothing is written
    (a hand edit is never overwritten, nothing is replayed) and the file settles the candidate (Zuno
    ``reconcile_undo_status``): it holds the before entries → ``undone`` (e.g. the entry was deleted by hand; the
    candidate is returned); the after entries → ``applied`` again; anything else → ``uncertain``, kept as it is
    with an explicit recovery offered. Raises :class:`Refusal` ``not_undoable`` (not applied, or no snapshots;
    nothing recorded), ``unreadable``/``unsafe_path`` (nothing recorded), or the write's refusal
    (``state_mismatch``, ``external_drift``, …) naming the status the candidate is left in.
    """
    root = Path(project_root).resolve()
    cand = find_candidate(candidate_id)
    file = owned_file(root, cand, config)
    with locked_session(file) as conn:
        cand = load_candidate(conn, cand.id)
        refuse_undecidable(cand, "undo")
        assert cand.before is not None and cand.after is not None  # refused above otherwise
        with write_lock(file.path):
            store = ResidentStore(file)  # an unreadable file refuses here, before anything is recorded
            keep_hand_edits(conn, store, cand.before)
            store.layout = store.layout.fill(Layout.from_json(cand.layout))  # the layout it wrote: exact bytes back
            step("planned")
            if not db.begin_undo(conn, cand.id, actor):
                raise Refusal("not_undoable", f"candidate {cand.id} changed meanwhile; see `memzoi resident list`")
            step("recorded")
            write_entries(conn, store, cand, cand.after, cand.before, "undo")
        return load_candidate(conn, cand.id)


def reject(
    project_root: str | Path, candidate_id: str, *, actor: str, reason: str, config: MemzoiConfig | None = None
) -> Candidate:
    """Reject a ``pending``/``failed`` candidate with a reason (nothing is written to the resident file).

    Like every decision it is refused (``foreign_candidate``) for a candidate of another project's file (Zuno
    ``ensure_owned_path``, reference §1 ``target_path``): a project must not be able to decide, even negatively,
    what another project's agents proposed. Raises :class:`Refusal` ``invalid_candidate`` without a reason,
    ``candidate_not_found``, ``not_rejectable`` unless the candidate is ``pending`` or ``failed``.
    """
    why = rejection_reason(reason, code="invalid_candidate")  # the one rule, shared with proposals
    refuse_unencodable(reason=why, actor=actor)
    root = Path(project_root).resolve()
    cand = find_candidate(candidate_id)
    with locked_session(owned_file(root, cand, config)) as conn:
        refuse_undecidable(load_candidate(conn, cand.id), "reject")
        if not db.reject(conn, cand.id, actor, why):  # decided between the read and this guarded write
            refuse_undecidable(load_candidate(conn, cand.id), "reject")
        return load_candidate(conn, cand.id)


def recover(
    project_root: str | Path,
    candidate_id: str,
    mode: str,
    *,
    actor: str,
    reason: str | None = None,
    config: MemzoiConfig | None = None,
) -> Candidate:
    """Settle an ``uncertain`` candidate explicitly, as a new ``recover`` candidate applied at once.

    ``restore-before`` writes the candidate's before entries (it becomes ``failed``, or ``undone`` when an undo
    was in flight), ``complete-after`` its after entries (``applied``), ``accept`` keeps the file (``failed``).
    The current bytes are copied to a ``.bak.<unix-seconds>`` file before a write, and the recovery candidate's
    diagnostic names that file (the hand edit a ``complete-after`` or ``restore-before`` replaced is there).
    Returns the recovery candidate.
    """
    if mode not in RECOVERY_MODES:
        raise Refusal("invalid_recovery", f"recovery mode must be one of {', '.join(RECOVERY_MODES)}")
    root = Path(project_root).resolve()
    cand = find_candidate(candidate_id)
    file = owned_file(root, cand, config)
    with locked_session(file) as conn:
        cand = load_candidate(conn, cand.id)
        refuse_undecidable(cand, "recover")
        with write_lock(file.path):
            store = ResidentStore(file)
            store.check_drift()
            target = {"restore-before": cand.before, "complete-after": cand.after, "accept": store.entries}[mode]
            if target is None:
                raise Refusal("invalid_recovery", f"candidate {cand.id} has no snapshot for {mode}; use accept")
            saved = store.keep_copy() if target != store.entries and store.exists else None
            note = f"the file's bytes before this recovery are kept in {saved}" if saved is not None else None
            store.layout = store.layout.fill(Layout.from_json(cand.layout) or recorded_layout(conn, file))
            now = db.now_ms()
            rec = Candidate(
                id=db.new_id(),
                scope=cand.scope,
                target_path=cand.target_path,
                action="recover",
                content=None,
                old_text=None,
                reason=rust_trim(reason or "") or f"{mode} for uncertain candidate {cand.id}",
                confidence=10_000,
                source="user",
                source_session_id=None,
                source_message_id=None,
                fingerprint=None,
                actor=actor,
                status="pending",
                time_created=now,
                time_updated=now,
                recovers=cand.id,
                recovery_mode=mode,
            )
            db.insert(conn, rec)
            if not db.begin_apply(conn, rec.id, store.entries, target, actor, store.layout.to_json()):
                raise Refusal("not_applicable", f"recovery candidate {rec.id} could not start; retry")
            step("recorded")
            write_entries(conn, store, rec, store.entries, target, "apply", note)
        return load_candidate(conn, rec.id)


def reconcile(project_root: str | Path, config: MemzoiConfig | None = None) -> list[Any]:
    """Classify the in-flight candidates of both resident files of the project (never replays a write); returns
    :class:`.reconcile.Reconciled` items."""
    root = Path(project_root).resolve()
    config = config or project_config(root)
    out = []
    for scope in ("global", "project"):
        file = resident_file(root, scope, config)
        with resident_lock(file.path), db.connect() as conn:
            out += reconcile_locked(conn, file.path)
    return out
