"""Re-attest a hand-edited record: an explicit, ledgered decision that the record's current content is reviewed.

The record's current content (without its stale ``materialization:`` block) becomes an ``update`` candidate
whose expected prior revision is the file's revision as Memzoi reads it now; plan and decision are derived with
Memzoi's deterministic identities (decision time = now) and only the record's ``materialization`` block is
rewritten; its other lines (comments, a hand-written ``description``, the body, trailing blank lines, line endings)
stay as written (:mod:`.materialize` does every check; ``hand_edit_conflict`` when a hand edit sits inside the
block). The candidate, plan and decision ids are kept with the
change in the ledger.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..ledger import ChangePlan, ChangeResult, Refusal, run_change
from ..models import RecordFrontmatter
from ..render import RECORD_ORDER
from .common import describe, edited, errors, load, record_ref, record_rel
from .materialize import build_candidate, decision_now, derive_decision, derive_plan, plan_materialize

#: Findings a re-attestation is meant to settle; any other error blocks it.
SETTLED = frozenset({"stale_attestation"})


def plan_reattest(root: Path, record: str, *, reason: str | None = None) -> ChangePlan:
    """Validate the record and compute the re-attested file (see module docstring)."""
    rid = record_ref(root, record)
    rel = record_rel(rid)
    loaded = load(root, rel, missing_code="record_not_found", what=f"record `{rid}`")
    blocking = [f for f in errors(loaded.analysis) if f.code not in SETTLED]
    if blocking or not isinstance(loaded.analysis.model, RecordFrontmatter):
        raise Refusal(blocking[0].code if blocking else "invalid_record",
                      f"{rel}: cannot re-attest: {describe(blocking) or 'not a valid record'}; fix the record first", rel)
    data = loaded.data
    attested = "materialization" in data
    if attested and not any(f.code == "stale_attestation" for f in loaded.analysis.findings):
        raise Refusal("already_current", f"{rel}: the attestation already matches the record; nothing to re-attest", rel)
    # The draft is the record as it stands without its attestation, its line endings and hand edits kept (a CRLF
    # body stays CRLF, so the new attestation covers the body the file keeps). Memzoi keys the record by its path
    # and writes that id (the draft names its output by id).
    changes = {k: v for k, v in (("materialization", None), ("id", rid)) if data.get(k) != v}
    draft = edited(rel, loaded.analysis.document, changes, RECORD_ORDER)
    candidate = build_candidate(root, draft, action="update")
    plan = derive_plan(candidate)
    decision = derive_decision(plan, decision_now())
    change = plan_materialize(root, candidate, plan, decision, operation="reattest",
                              reason=reason or ("re-attest after a hand edit" if attested else "attest a reviewed record"))
    change.details["previously_attested"] = attested
    return change


def reattest(project_root: str | os.PathLike[str], record: str, *, actor: str, source: str = "cli",
             reason: str | None = None) -> ChangeResult:
    """Re-attest ``record`` (id or path) as one ledgered change. Raises :class:`~memzoi.ledger.Refusal`."""
    return run_change(project_root, lambda root: plan_reattest(root, record, reason=reason), actor=actor,
                      source=source)
