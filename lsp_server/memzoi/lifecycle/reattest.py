"""Re-attest a hand-edited record: an explicit, ledgered decision that the record's current content is reviewed.

The record's current content (without its stale ``materialization:`` block) becomes an ``update`` candidate
whose expected prior revision is the file's revision as Memzoi reads it now; plan and decision are derived with
Memzoi's deterministic identities (decision time = now) and only the record's ``materialization`` block is
rewritten; its other lines (comments, a hand-written ``description``, the body, trailing blank lines, line endings)
stay as written (:mod:`.materialize` does every check; ``hand_edit_conflict`` when a hand edit sits inside the
block). The candidate, plan and decision ids are kept with the
change in the ledger.

Memzoi attests only what its direct materialization can write (reference §5.1, §5.4): an ``update`` candidate
must be ``active`` and carries no ``supersedes_id``, and a supersede needs a multi-record transaction. So a record
that is no longer active is refused (``record_not_active``, naming the file and what to do), and the replacement
a supersede created (it carries ``supersedes``) cannot take an attestation: re-attesting it records the reviewed
hand edit as one ledgered change that keeps the file's bytes as they are (``details.attested`` is false), which
settles ``ledger_drift``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, file_ledger_state, run_change
from ..models import RecordFrontmatter
from ..read.render import RECORD_ORDER
from .common import Loaded, edited, load, record_ref, record_rel
from .materialize import decision_now, derive_decision, derive_plan, plan_materialize
from .materialize_candidate import build_candidate
from .readiness import NOT_ACTIVE, describe, record_blockers


def plan_reattest(root: Path, record: str, *, reason: str | None = None) -> ChangePlan:
    """Validate the record and compute the re-attested file (see module docstring)."""
    rid = record_ref(root, record)
    rel = record_rel(rid)
    loaded = load(root, rel, missing_code="record_not_found", what=f"record `{rid}`")
    valid = isinstance(loaded.analysis.model, RecordFrontmatter)
    status = loaded.data.get("status") if valid else None
    # The one rule the editor's Re-attest action is disabled by (memzoi.lifecycle.readiness.record_blockers).
    blockers = record_blockers(loaded.analysis.findings, operation="reattest", status=status)
    blocking = [b for b in blockers if b.code != NOT_ACTIVE]
    if blocking or not valid:
        raise Refusal(
            blocking[0].code if blocking else "invalid_record",
            f"{rel}: cannot re-attest: {describe(blocking) or 'not a valid record'}; fix the record first",
            rel,
        )
    data = loaded.data
    attested = "materialization" in data
    if blockers:  # only record_not_active is left
        raise Refusal(
            NOT_ACTIVE,
            f"{rel}: cannot re-attest a `{data.get('status')}` record: Memzoi attests "
            "only active records; put back the content its last change wrote (`memzoi history "
            f"{rel}`), or edit the record that replaced it instead",
            rel,
        )
    if data.get("supersedes") is not None and not attested:
        return _accept_supersede_replacement(root, loaded, rid, reason)
    if attested and not any(f.code == "stale_attestation" for f in loaded.analysis.findings):
        raise Refusal(
            "already_current", f"{rel}: the attestation already matches the record; nothing to re-attest", rel
        )
    # The draft is the record as it stands without its attestation, its line endings and hand edits kept (a CRLF
    # body stays CRLF, so the new attestation covers the body the file keeps). Memzoi keys the record by its path
    # and writes that id (the draft names its output by id).
    changes = {k: v for k, v in (("materialization", None), ("id", rid)) if data.get(k) != v}
    draft = edited(rel, loaded.analysis.document, changes, RECORD_ORDER)
    candidate = build_candidate(root, draft, action="update")
    plan = derive_plan(candidate)
    decision = derive_decision(plan, decision_now())
    change = plan_materialize(
        root,
        candidate,
        plan,
        decision,
        operation="reattest",
        reason=reason or ("re-attest after a hand edit" if attested else "attest a reviewed record"),
    )
    change.details["previously_attested"] = attested
    return change


def _accept_supersede_replacement(root: Path, loaded: Loaded, rid: str, reason: str | None) -> ChangePlan:
    """The ledgered acceptance of a hand edit to a supersede's replacement record (see the module docstring)."""
    rel = loaded.rel
    state = file_ledger_state(root, rel, loaded.raw)
    if state["last"] is not None and not state["drift"]:
        raise Refusal("already_current", f"{rel}: the file is as its last change wrote it; nothing to re-attest", rel)
    return ChangePlan(
        operation="reattest",
        files=[FileChange(rel, loaded.raw, loaded.raw)],
        reason=reason or "accept a reviewed hand edit",
        summary=f"accept the reviewed content of {rid} (a supersede's replacement: Memzoi gives it no attestation)",
        details={"record_id": rid, "previously_attested": False, "attested": False},
    )


def reattest(
    project_root: str | os.PathLike[str],
    record: str,
    *,
    actor: str,
    source: str = "cli",
    reason: str | None = None,
    previewed: str | None = None,
) -> ChangeResult:
    """Re-attest ``record`` (id or path) as one ledgered change. Raises :class:`~memzoi.ledger.Refusal`
    (``preview_stale`` when the record changed since the preview ``previewed`` was shown)."""
    return run_change(
        project_root,
        lambda root: plan_reattest(root, record, reason=reason),
        actor=actor,
        source=source,
        previewed=previewed,
    )
