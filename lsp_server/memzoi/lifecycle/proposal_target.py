"""The records a proposal being made acts on and would create, checked when it is made.

Memzoi checks a target when a packet is applied (reference §2.5, ``apply.rs``: it must exist and be ``active``);
:func:`~memzoi.lifecycle.apply.load_target` gives those refusals with advice for a pending packet (fix its target or
reject it). A proposal being made (``memzoi supersede``/``tombstone``, the editor's Supersede…/Tombstone…, MCP
``propose_memory``) has no packet yet, so the same checks refuse it with advice for the one proposing: nothing was
written, and a superseded record names the record that replaced it, the one to propose against.

:func:`check_record_free` refuses a ``create`` or ``supersede`` whose record could never be written (its
title's record id exists, or is the id of the record it supersedes).
"""

from __future__ import annotations

from pathlib import Path

from ..base.views import Frontmatter
from ..judge.recordslot import created_record_id, record_taken_reason
from ..ledger import Refusal, now_utc, read_file_state
from .apply import load_target
from .common import Loaded, load, record_rel
from .layout import RECORDS


def successors(root: Path, record_id: str) -> list[str]:
    """The ids of the records whose ``supersedes`` names ``record_id`` (the records that replaced it), sorted.
    Reads only the record files that contain the id's text; unreadable or invalid files are skipped."""
    base = root / RECORDS
    needle = record_id.encode("utf-8", "surrogatepass")
    found: list[str] = []
    for path in sorted(base.rglob("*.md")) if base.is_dir() else []:
        rel = path.relative_to(root).as_posix()
        raw = read_file_state(root, rel)
        if raw is None or needle not in raw:
            continue
        try:
            data = load(root, rel, missing_code="target_missing", what="a record").analysis.document.data
        except (Refusal, AttributeError):
            continue
        if isinstance(data, dict) and Frontmatter(data).supersedes == record_id:
            found.append(rel[len(RECORDS) + 1 : -3])
    return found


def load_proposal_target(root: Path, target_id: str) -> Loaded:
    """The active record ``target_id`` a proposal being made supersedes or tombstones, with Memzoi's target
    checks (:func:`~memzoi.lifecycle.apply.load_target`). Raises :class:`Refusal`: ``target_missing`` (no such
    record) and ``proposal_target_inactive`` (its status is not ``active``; the message names the records that
    replaced a superseded one) saying that nothing was written; ``target_invalid`` and the target's own blocking
    findings as :func:`load_target` gives them."""
    rel = record_rel(target_id)
    try:
        return load_target(root, target_id, scope_kind=None, scope_id=None, proposed_at=now_utc(precise=False))
    except Refusal as err:
        if err.code == "target_missing":
            raise Refusal(
                "target_missing",
                f"there is no record `{target_id}` ({rel}); nothing was written: name an "
                "existing record by its id, the path below .memzoi/records without .md",
                rel,
            ) from None
        if err.code != "proposal_target_inactive":
            raise
    status = load(root, rel, missing_code="target_missing", what="the record").data.get("status")
    later = successors(root, target_id)
    way = (
        f"propose against {', '.join(f'`{s}`' for s in later)}, which replaced it"
        if later
        else "Memzoi supersedes and tombstones only active records"
    )
    raise Refusal(
        "proposal_target_inactive", f"record `{target_id}` is {status}, not active; nothing was written: {way}", rel
    )


def check_record_free(root: Path, title: str, *, target_id: str | None = None) -> None:
    """Refuse (``record_exists``) a ``create`` or ``supersede`` proposal whose record could never be written
    (:mod:`memzoi.judge.recordslot`: the rule and its words, which a pending packet's ``record_exists`` finding
    shares). Such a packet would wait for review and then never apply (``blocked: record_exists``). The message
    names record ids that already exist, never new text. ``target_id``: the record a supersede replaces."""
    record_id = created_record_id("supersede" if target_id else "create", title)
    if not record_id:  # Memzoi then uses the packet's file id, which is always fresh
        return
    rel = record_rel(record_id)
    same = record_id == target_id
    if not same and read_file_state(root, rel) is None:
        return
    reason = record_taken_reason(record_id, same_as_target=same, supersede=bool(target_id))
    raise Refusal("record_exists", f"{reason}; nothing was written", None if same else rel)
