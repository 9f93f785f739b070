"""The record a proposal's apply would create, and why it may be taken: one rule for the propose-time refusal
(:func:`memzoi.lifecycle.proposal_target.check_record_free`) and the ``record_exists`` finding a pending packet gets
in ``memzoi check``, the editor and MCP (:mod:`memzoi.project.crossfile`).

Memzoi's apply of a ``create`` or ``supersede`` proposal writes ``.memzoi/records/<concept slug of the title>.md``
with create-new, so an existing record there is a conflict, and a supersede's replacement id must differ from its
target's (reference ``memzoi-format.md`` §2.5, ``apply.rs``); such a packet can never be applied.
"""

from __future__ import annotations

from .legacy import concept_slug, record_name_bytes


def created_record_id(action: str | None, title: str | None) -> str | None:
    """The id of the record applying a proposal with ``action`` and ``title`` would create: the title's concept
    slug (:func:`~memzoi.judge.legacy.concept_slug`) for ``create`` and ``supersede``; ``None`` for other actions,
    an empty slug (Memzoi then names the record after the packet's file id, always fresh) or a title too long for
    a file name (the packet's own ``title_too_long`` finding, :mod:`memzoi.judge.validate`)."""
    if action not in ("create", "supersede") or not title or not title.strip():
        return None
    if record_name_bytes(title) is not None:
        return None
    return concept_slug(title.strip()) or None


def record_taken_reason(record_id: str, *, same_as_target: bool, supersede: bool) -> str:
    """Why the record ``record_id`` a proposal would create is taken, and what to do, in words for a person or an
    agent (names only record ids and paths, never new text). ``same_as_target``: the id is the supersede target's
    own; else a record with that id exists. ``supersede``: the proposal is a supersede (the advice differs)."""
    if same_as_target:
        return (
            f"a new title is needed: this one gives the record id `{record_id}` of the record it supersedes, and "
            "Memzoi needs the replacement to have its own id (say what changed in the title)"
        )
    need = (
        "another title is needed"
        if supersede
        else f"another title is needed, or a supersede of `{record_id}` (with a title of its own)"
    )
    return (
        f"{need}: .memzoi/records/{record_id}.md already exists and applying this proposal would create it again "
        "(Memzoi creates a record only where none is)"
    )
