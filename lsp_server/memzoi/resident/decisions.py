"""A reviewer's two shortcuts (reference ``zuno-memory.md`` §7, Zuno's ``/memory`` view ``e`` and ``x x``):

- :func:`edit_and_apply`: approve a candidate with edited content. The edit is validated like a proposal
  (operation, threats, locator, cap, drift) against the current file before anything is recorded, the proposed
  content is kept in ``original_content`` beside the edited ``content`` (Zuno ``service.edit`` keeps the locator,
  reason and confidence, clears the fingerprint and diagnostic), then the candidate is applied at most once.
- :func:`remove_entry`: remove one entry as a single audited step: a new ``remove`` candidate (source ``user``,
  the entry's full text as locator, confidence 1.0, Zuno ``remove_entry``) is recorded and applied under one hold
  of the file's locks, so there is never a second approval to wait for. A crash is reconciled like any apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..judge.config_model import MemzoiConfig
from ..ledger import Refusal
from ..read.text import rust_trim
from . import candidate_write, candidates as db
from .candidates import Candidate
from .format import serialize
from .locator import Operation, locate, parse_operation, preview as short, refuse_unencodable
from .scope import ResidentFile, project_config, resident_file
from .store import ResidentStore

#: Zuno's reason for a removal from ``/memory``.
REMOVE_REASON = "removed by the user"


def edit_and_apply(
    project_root: str | Path,
    candidate_id: str,
    content: str,
    *,
    actor: str,
    config: MemzoiConfig | None = None,
    previewed: str | None = None,
) -> Candidate:
    """Replace the content of the ``pending``/``failed`` ``add``/``replace`` candidate ``candidate_id`` with
    ``content`` and apply it (see the module docstring). Returns the candidate, ``applied``. Raises
    :class:`Refusal`: ``not_editable`` (another action or status), the proposal's validation refusals (nothing
    recorded), ``preview_stale`` when ``previewed`` (:func:`preview_edit`'s fingerprint) is given and the file or
    the edited operation differs from that preview (nothing recorded), or the apply's (the candidate then
    ``failed``/``uncertain``, its edit kept)."""
    root = Path(project_root).resolve()
    cand = candidate_write.find_candidate(candidate_id)
    file = candidate_write.owned_file(root, cand, config)
    with candidate_write.locked_session(file) as conn:
        cand = candidate_write.load_candidate(conn, cand.id)
        candidate_write.refuse_undecidable(cand, "edit")
        op = parse_operation(cand.action, content, cand.old_text)
        refuse_unencodable(content=op.content)
        store = ResidentStore(file)
        candidate_write.check_acted(store, op, previewed)  # before the edit is recorded; again under the write lock
        store.preview(op)  # validated like a proposal, before anything is recorded
        if op.content != cand.content and not db.edit_content(conn, cand.id, op.content or ""):
            raise Refusal("not_editable", f"candidate {cand.id} changed meanwhile; see `memzoi resident list`")
        edited = candidate_write.load_candidate(conn, cand.id)
        return candidate_write.apply_locked(conn, root, edited, actor, config, previewed)


def remove_entry(
    project_root: str | Path,
    scope: str,
    locator: str,
    *,
    actor: str,
    reason: str | None = None,
    session_id: str | None = None,
    config: MemzoiConfig | None = None,
    previewed: str | None = None,
) -> Candidate:
    """Remove the entry of ``scope`` that ``locator`` selects (a substring of exactly one distinct entry) as one
    audited step: a ``remove`` candidate recorded and applied together (see the module docstring). Returns the
    candidate, ``applied``. Raises :class:`Refusal` (``no_match``, ``ambiguous_locator``, drift, ``preview_stale``
    when ``previewed``, :func:`preview_remove`'s fingerprint, is given and the file changed since, …) with nothing
    recorded, or the apply's refusal naming the candidate's status."""
    root = Path(project_root).resolve()
    config = config or project_config(root)
    why = rust_trim(reason or "") or REMOVE_REASON
    refuse_unencodable(reason=why, old_text=locator, actor=actor)
    file = resident_file(root, scope, config)
    with candidate_write.locked_session(file) as conn:
        store = ResidentStore(file)
        entry = store.entries[locate(store.entries, rust_trim(locator or ""))] if rust_trim(locator or "") else ""
        op = parse_operation("remove", None, entry)
        candidate_write.check_acted(store, op, previewed, "removal")
        store.preview(op)
        now = db.now_ms()
        cand = Candidate(
            id=db.new_id(),
            scope=scope,
            target_path=str(file.path),
            action="remove",
            content=None,
            old_text=op.old_text,
            reason=why,
            confidence=10_000,
            source="user",
            source_session_id=session_id,
            source_message_id=None,
            fingerprint=None,
            actor=actor,
            status="pending",
            time_created=now,
            time_updated=now,
        )
        db.insert(conn, cand)
        return candidate_write.apply_locked(conn, root, cand, actor, config, previewed, "removal")


def _preview(
    file: ResidentFile,
    store: ResidentStore,
    op: Operation,
    operation: str,
    summary: str,
    reason: str,
    candidate_id: str | None,
) -> dict[str, Any]:
    """The preview's answer, with ``previewed``: the fingerprint of the file's bytes and ``op``
    (:func:`.candidate_write.acted`) the decision takes back."""
    from ..ledger import preview_fingerprint  # noqa: PLC0415 lazy: start-up

    after = store.preview(op, keep=False)  # a preview writes nothing, no drift backup either
    kind = "removal" if operation == "remove_entry" else "approve"

    return {
        "operation": operation,
        "summary": summary,
        "reason": reason,
        "candidateId": candidate_id,
        "files": [candidate_write.preview_file(store, serialize(after))],
        "previewed": preview_fingerprint(candidate_write.acted(store, op, kind)),
    }


def preview_edit(
    project_root: str | Path, candidate_id: str, content: str, *, config: MemzoiConfig | None = None
) -> dict[str, Any]:
    """What :func:`edit_and_apply` would write, without writing or locking (the editor's review diff): the shape
    of :func:`.service.preview_apply` with ``operation`` ``approve``. Raises :class:`Refusal` as the edit would
    before writing."""
    root = Path(project_root).resolve()
    cand = candidate_write.find_candidate(candidate_id)
    file = candidate_write.owned_file(root, cand, config)
    candidate_write.refuse_undecidable(cand, "edit")
    op = parse_operation(cand.action, content, cand.old_text)
    refuse_unencodable(content=op.content)
    store = ResidentStore(file)
    return _preview(
        file,
        store,
        op,
        "approve",
        f"approve edited {cand.action} candidate {cand.id} in {file.scope} memory",
        cand.reason,
        cand.id,
    )


def preview_remove(
    project_root: str | Path, scope: str, locator: str, *, config: MemzoiConfig | None = None
) -> dict[str, Any]:
    """What :func:`remove_entry` would write, without writing or locking: ``operation`` ``remove_entry``, the
    file before and after. Raises :class:`Refusal` as the removal would before writing."""
    root = Path(project_root).resolve()
    file = resident_file(root, scope, config or project_config(root))
    store = ResidentStore(file)
    op = parse_operation("remove", None, rust_trim(locator or ""))
    store.preview(op, keep=False)
    removed = store.entries[locate(store.entries, op.old_text or "")]
    op = parse_operation("remove", None, removed)  # what remove_entry records: the entry's full text
    return _preview(
        file, store, op, "remove_entry", f"remove `{short(removed)}` from {file.scope} memory", REMOVE_REASON, None
    )
