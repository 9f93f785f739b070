"""The one-line messages of lifecycle changes and resident decisions, for every surface that reports a change to a
person (the editors' toasts and command lines, the server's ``memzoi/changed`` notification).

A message's first line says what happened and to what, short enough for one 120-column Neovim command line
(:data:`MAX_LINE`), e.g. ``Applied "Lint before pushing" -> records/lint-before-pushing.md``; the change id and the
files go to the detail. Titles come from the files the change wrote; a detected secret is never shown (titles are
scrubbed, paths and ids shown as :mod:`memzoi.judge.pathsafety` shows them).
"""

from __future__ import annotations

from typing import Any

from ..judge import pathsafety
from ..ledger import ChangeResult, FileChange
from ..read.document import frame
from ..safety.redact import scrub

#: Longest first line of a message (a Neovim command line of 120 columns without a hit-enter prompt).
MAX_LINE = 110
#: Longest title quoted in a first line.
MAX_TITLE = 48

#: Past-tense verb of each operation (the ledger's operation names).
VERBS = {
    "apply": "Applied",
    "reject": "Rejected",
    "route_local": "Routed to local memory",
    "supersede": "Proposed a supersede of",
    "tombstone": "Proposed a tombstone of",
    "reattest": "Re-attested",
    "materialize": "Materialized",
    "recover": "Recovered",
    "local_add": "Added local record",
    "local_candidate": "Applied local candidate",
}


def change_label(change_id: str) -> str:
    """How a surface names the ledger change ``change_id`` in a label (a code action's title, a toast): the full
    id, as ``memzoi history`` prints it and ``memzoi undo`` takes it. Change ids are time-ordered
    (``chg_`` + 12 hex digits of milliseconds + 12 random ones, :mod:`memzoi.ledger.store`), so any prefix short
    enough for a label (``chg_01a243ff``) is shared by every change of a session and names none of them."""
    return change_id.strip()


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _title_of(data: Any) -> str | None:
    """The scrubbed ``title`` of a file's bytes, or ``None``."""
    if not isinstance(data, bytes):
        return None

    doc = frame(data.decode("utf-8", errors="replace"))
    title = doc.data.get("title") if isinstance(doc.data, dict) else None
    return scrub(str(title)) if isinstance(title, str) and title.strip() else None


def _shown(rel: str) -> str:
    shown = pathsafety.shown_path(rel)
    return shown[len(".memzoi/") :] if shown.startswith(".memzoi/") else shown


def _main_file(result: ChangeResult) -> FileChange | None:
    """The file a person looks for after the change: the one written (not deleted, not left unchanged), a record
    first."""
    written = [f for f in result.files if f.after is not None and f.change != "unchanged"]
    for f in written:
        if "/records/" in f"/{f.path}":
            return f
    return written[0] if written else (result.files[0] if result.files else None)


def _undone_subject(result: ChangeResult) -> FileChange | None:
    """The file an undone change was about: the record the change wrote (the undo deletes it: an applied create or
    supersede), else a record the undo puts back (a tombstone, a materialized update), else the main file. A
    supersede's undo also restores the old record, which is not the change's subject (newuser5 D6)."""
    records = [f for f in result.files if "/records/" in f"/{f.path}" and f.before is not None]
    for f in records:
        if f.after is None:
            return f
    return records[0] if records else _main_file(result)


def change_message(result: ChangeResult) -> tuple[str, str]:
    """``(message, detail)`` of a ledgered change or undo: ``message`` is one line of at most :data:`MAX_LINE`
    characters (what happened, to what: the title the change wrote or removed, and the file a person opens next);
    ``detail`` names the change id, its status and every file with what the change did to it
    (:attr:`~memzoi.ledger.FileChange.change`). An undo names the undone change's own subject (its title as the
    change left it) and, when the undo makes another record active again (a supersede's), says so:
    ``Undid apply of "New title" (records/old.md is active again)``."""
    main = _main_file(result)
    subject = _undone_subject(result) if result.status == "undone" else main
    title = None
    if subject is not None:
        # An undo's ``before`` is what the change wrote, so its title comes first.
        first, second = (
            (subject.before, subject.after) if result.status == "undone" else (subject.after, subject.before)
        )
        title = _title_of(first) or _title_of(second)
    target = _shown(main.path) if main is not None else ""
    verb = VERBS.get(result.operation, result.operation.replace("_", " ").capitalize() or "Changed")
    if result.status == "undone":
        verb = f"Undid {result.operation.replace('_', ' ')} of"
    what = f'"{_short(title, MAX_TITLE)}"' if title else ""
    parts = [verb, what, "->" if what and target else "", target]
    if main is not None and subject is not main and "/records/" in f"/{main.path}":
        parts = [verb, what, f"({target} is active again)"]
    line = " ".join(p for p in parts if p)
    if len(line) > MAX_LINE:
        line = _short(line, MAX_LINE)
    # Each file worded as the CLI words it (FileChange.change): a file a recovery leaves as it is reads unchanged.
    files = ", ".join(f"{f.change} {_shown(f.path)}" for f in result.files)
    detail = f"change {result.change_id} ({result.operation}, {result.status})" + (f"; files: {files}" if files else "")
    return line, detail


#: Resident decisions: candidate status after the call -> verb.
RESIDENT_VERBS = {"applied": "Approved", "rejected": "Rejected", "undone": "Undid", "failed": "Could not apply"}


def resident_message(
    action: str,
    status: str,
    scope: str,
    preview: str,
    candidate_id: str,
    used: int | None = None,
    cap: int | None = None,
) -> tuple[str, str]:
    """``(message, detail)`` of a resident candidate decision (approve, reject, undo, recover): e.g. ``Approved add
    "Use pnpm…" in project memory (1,234/2,000 chars)``; the candidate id goes to the detail."""
    verb = RESIDENT_VERBS.get(status, status.capitalize())
    usage = f" ({used:,}/{cap:,} chars)" if used is not None and cap else ""
    line = f'{verb} {action} "{_short(preview, 40)}" in {scope} memory{usage}'
    return _short(line, MAX_LINE), f"candidate {candidate_id} ({action}, {status})"


__all__ = ["MAX_LINE", "change_message", "resident_message"]
