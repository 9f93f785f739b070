"""How one resident-memory candidate reaches its file (reference ``zuno-memory.md`` §1, §3): the file's lock and a
candidate-database session that first reconciles in-flight rows, the ownership rule (Zuno ``ensure_owned_path``),
the exact write with its outcome recorded and a failed write classified from the file, the ``.bak`` copy of a hand
edit before a write, and the locked apply. The operations built on it (propose, apply, undo, reject, recover):
:mod:`.service` and :mod:`.decisions`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import blake3

from ..judge.config_model import MemzoiConfig
from ..ledger import ChangePlan, FileChange, Refusal
from ..ledger.previewed import check_previewed
from ..ledger.store import _step as step  # the ledger's fault hook: one hook drives the crash tests of both
from . import candidates as db
from .candidates import Candidate
from .encoding import Layout
from .locator import Operation, parse_operation
from .reconcile import classify, current_entries, reconcile_locked, recovery_hint
from .scope import ResidentFile, resident_file
from .store import ResidentStore, resident_lock, write_lock
from .views import hand_edited, last_written

#: What a reviewed decision's fingerprint keys the operation it writes by (:func:`acted`).
OPERATION_LABEL = "the candidate's operation"

#: Each decision on a candidate: (refusal code, statuses it acts on, the rule's wording).
DECISIONS = {
    "approve": ("not_applicable", db.OPEN, "only a pending or failed candidate can be approved"),
    "edit": ("not_editable", db.OPEN, "only a pending or failed add or replace can be edited"),
    "reject": ("not_rejectable", db.OPEN, "only a pending or failed candidate can be rejected"),
    "undo": ("not_undoable", ("applied",), "only an applied candidate can be undone"),
    "recover": ("not_uncertain", ("uncertain",), "only uncertain candidates need recovery"),
}


def when(ms: int | None) -> str | None:
    """A candidate's time (milliseconds since the epoch) as ``2026-07-06 12:00:00Z``, or ``None`` when unknown."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ") if ms else None


def state_of(cand: Candidate) -> str:
    """``cand``'s status as a refusal states it, with who decided and when for a decided one: ``already applied
    (by bob at 2026-07-06 12:00:00Z)``, ``pending``."""
    who = cand.undone_by if cand.status == "undone" else cand.decided_by
    at = when(cand.time_applied if cand.status == "applied" else cand.time_updated)
    if cand.status not in ("applied", "rejected", "undone"):
        return cand.status
    return f"already {cand.status}" + (f" (by {who} at {at})" if who and at else "")


def refuse_undecidable(cand: Candidate, decision: str) -> None:
    """Refuse the ``decision`` (a key of :data:`DECISIONS`) on ``cand`` in its current state: the one rule every
    decision checks first, before anything about the file (the server asks it before its open-buffer check, so a
    candidate decided elsewhere is named as such, not as a file to reload: newuser5 D8). Raises :class:`Refusal`
    with the decision's code, naming the candidate's state (:func:`state_of`); an undo also needs both
    snapshots, an approve a candidate that is not a recovery, an edit an ``add`` or ``replace``."""
    code, statuses, rule = DECISIONS[decision]
    if cand.action == "recover" and decision == "approve":
        raise Refusal(code, f"{cand.id} is a recovery; choose a recovery for {cand.recovers} instead")
    if decision == "edit" and cand.action not in ("add", "replace"):
        raise Refusal(code, f"candidate {cand.id} is a {cand.status} {cand.action}; {rule}")
    if cand.status not in statuses or (decision == "undo" and (cand.before is None or cand.after is None)):
        raise Refusal(code, f"candidate {cand.id} is {state_of(cand)}; {rule}")


@contextmanager
def locked_session(file: ResidentFile) -> Iterator[sqlite3.Connection]:
    """The file's lock and a candidate-database connection, after reconciling the file's in-flight rows."""
    with resident_lock(file.path):
        step("locked")
        with db.connect() as conn:
            reconcile_locked(conn, file.path)
            yield conn


def operation_of(cand: Candidate) -> Operation:
    """The resident-file operation ``cand`` proposes (:func:`.locator.parse_operation`)."""
    return parse_operation(cand.action, cand.content, cand.old_text)


def owned_file(root: Path, cand: Candidate, config: MemzoiConfig | None) -> ResidentFile:
    """The candidate's resident file, refused (``foreign_candidate``) when it belongs to another file than this
    project's file of its scope (Zuno ``ensure_owned_path``)."""
    file = resident_file(root, cand.scope, config)
    if cand.target_path != str(file.path):
        raise Refusal(
            "foreign_candidate",
            f"candidate {cand.id} belongs to {cand.target_path}, not {file.path}; run the command from that project",
        )
    return file


def load_candidate(conn: sqlite3.Connection, candidate_id: str) -> Candidate:
    """The candidate ``candidate_id`` read in ``conn``. Raises :class:`Refusal` ``candidate_not_found``."""
    cand = db.get(conn, candidate_id)
    if cand is None:
        raise Refusal("candidate_not_found", f"no resident-memory candidate {candidate_id}; see `memzoi resident list`")
    return cand


def find_candidate(candidate_id: str) -> Candidate:
    """The candidate ``candidate_id`` (its own read-only connection, :func:`.candidates.read`). Raises
    :class:`Refusal` ``candidate_not_found``."""
    cand = db.read(lambda conn: db.get(conn, candidate_id), None)
    if cand is None:
        raise Refusal("candidate_not_found", f"no resident-memory candidate {candidate_id}; see `memzoi resident list`")
    return cand


def write_entries(
    conn: sqlite3.Connection,
    store: ResidentStore,
    cand: Candidate,
    source: list[str],
    target: list[str],
    phase: str,
    diagnostic: str | None = None,
) -> str:
    """Replace ``source`` by ``target`` (the row is already ``applying``/``undoing``) and record the outcome,
    with ``diagnostic`` recorded on a write that landed (where the bytes it replaced are kept, say); a failed
    write is classified from the file, recorded, and raised unless the file holds ``target``."""
    done = "applied" if phase == "apply" else "undone"
    before, after = (source, target) if phase == "apply" else (target, source)
    try:
        store.replace_exact(source, target, hook=lambda name: step(f"{phase}:{name}"))
    except (Refusal, OSError) as err:
        status = classify(phase, current_entries(store.file.path), before, after)
        text = err.message if isinstance(err, Refusal) else f"{store.file.path}: {err.strerror or err}"
        if status == done:  # the file already holds the target entries (a write that landed, or a hand edit)
            note = f"{text}; the file holds the {'after' if phase == 'apply' else 'before'} entries, so it is {done}"
        elif status == "uncertain":
            note = f"{text}; {recovery_hint(cand.id)}"
        else:
            note = text
        db.set_status(conn, cand.id, status, note)
        if status == done:
            return status
        code = err.code if isinstance(err, Refusal) else "write_failed"
        raise Refusal(code, f"{note}; candidate {cand.id} is now {status}", str(store.file.path)) from None
    step(f"{phase}:written")
    db.set_status(conn, cand.id, done, diagnostic)
    step("committed")
    return done


def keep_hand_edits(conn: sqlite3.Connection, store: ResidentStore, target: list[str]) -> None:
    """Copy the file's bytes to a ``.bak.<unix-seconds>`` file before a write to ``target`` when the file carries
    a hand edit no reviewed write has seen (:func:`.views.hand_edited`): bytes no review saw are then never only in
    the file a write replaces. A no-op write (``target`` equals the entries) copies nothing."""
    if (
        store.exists
        and target != store.entries
        and hand_edited(store.entries, db.list_for_paths(conn, [str(store.file.path)]))
    ):
        store.keep_copy()


def preview_file(store: ResidentStore, after: str) -> dict[str, Any]:
    """The file entry of a resident preview: ``{"path", "before", "after", "change"}``, the file's absolute
    ``path``, its text before (``None``: absent) and ``after`` (detected secrets redacted), and ``change``, the word
    of :attr:`memzoi.ledger.FileChange.change` (the texts compared before redaction)."""
    from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    before = store.text if store.exists else None
    word = FileChange(str(store.file.path), None if before is None else before.encode(), after.encode()).change
    return {
        "path": str(store.file.path),
        "before": None if before is None else scrub(before),
        "after": scrub(after),
        "change": word,
    }


def acted(store: ResidentStore, op: Operation, operation: str = "approve") -> ChangePlan:
    """What writing ``op`` to ``store``'s file acts on, as a preview's fingerprint covers it
    (:mod:`memzoi.ledger.previewed`, the one fingerprint of every reviewed change): the file's bytes (or its absence)
    as loaded, and the operation (action, content, locator) under :data:`OPERATION_LABEL`. Nothing is ledgered:
    the plan only carries what the review showed."""
    shown = json.dumps([op.action, op.content, op.old_text], ensure_ascii=False).encode("utf-8", "surrogatepass")
    decides = {OPERATION_LABEL: blake3.blake3(shown).hexdigest()}
    return ChangePlan(operation, [], reads={str(store.file.path): store.data}, decides=decides)


def check_acted(store: ResidentStore, op: Operation, previewed: str | None, operation: str = "approve") -> None:
    """Refuse writing ``op`` to ``store``'s file when ``previewed`` (a preview's fingerprint, :func:`acted`) is given
    and the file or the operation differs from what that preview showed (``preview_stale``, nothing recorded or
    written; the file named as a path of this machine). ``None`` checks nothing (the CLI, an older client)."""
    try:
        check_previewed(acted(store, op, operation), previewed)
    except Refusal as err:
        if err.path is None:
            raise
        raise Refusal.of_local_path(err.code, err.message, store.file.path) from None


def recorded_layout(conn: sqlite3.Connection, file: ResidentFile) -> Layout | None:
    """The layout recorded by the candidate that last wrote ``file`` (:func:`.views.last_written`), if any."""
    last = last_written(db.list_for_paths(conn, [str(file.path)]))
    return None if last is None else Layout.from_json(last[0].layout)


def apply_locked(
    conn: sqlite3.Connection,
    root: Path,
    cand: Candidate,
    actor: str,
    config: MemzoiConfig | None,
    previewed: str | None = None,
    operation: str = "approve",
) -> Candidate:
    """Apply ``cand`` (``pending``/``failed``) in the locked session ``conn`` at most once and return it ``applied``.
    Raises :class:`Refusal` (validation: the candidate becomes ``failed``; write: ``failed``/``uncertain``;
    ``preview_stale`` when the file or the candidate differs from the preview ``previewed`` showed: nothing
    recorded, the candidate unchanged, :func:`check_acted`)."""
    file = owned_file(root, cand, config)
    refuse_undecidable(cand, "approve")
    with write_lock(file.path):  # before the file is read: Zuno's writers must not change it until it is recorded
        store = ResidentStore(file)
        check_acted(store, operation_of(cand), previewed, operation)  # under both locks, before anything is recorded
        try:
            after = store.preview(operation_of(cand))
        except Refusal as err:
            db.set_status(conn, cand.id, "failed", err.message)
            raise Refusal(err.code, f"{err.message} (candidate {cand.id} is now failed)", err.path) from None
        keep_hand_edits(conn, store, after)
        store.layout = store.layout.fill(recorded_layout(conn, file))
        step("planned")
        if not db.begin_apply(conn, cand.id, store.entries, after, actor, store.layout.to_json()):
            raise Refusal("not_applicable", f"candidate {cand.id} changed meanwhile; see `memzoi resident list`")
        step("recorded")
        write_entries(conn, store, cand, store.entries, after, "apply")
    return load_candidate(conn, cand.id)
