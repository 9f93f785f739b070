"""The ledger's values: statuses, refusals, file changes, plans, results and history records."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import blake3

from ..base.utf8 import storable

# Re-exported (the ledger's name for them).
from ..base.vocabulary import RECOVERY_MODES as RECOVERY_MODES
from ..judge.pathsafety import bears_secret, shown_local_path, shown_path, with_shown_paths

STATUSES = ("applying", "applied", "undoing", "undone", "failed", "uncertain")
SOURCES = ("editor", "cli", "mcp")
RECONCILED = "reconciled after process restart without replay"
#: The code of a change refused because it touches a file of an uncertain change (settle that one first).
UNCERTAIN_CHANGE = "uncertain_change"


class Refusal(Exception):
    """An operation refused to run; nothing was written.

    ``code`` is a stable snake_case reason (a SPEC §4 finding code where one fits, e.g.
    ``sensitivity_not_repo_safe``, or a lifecycle code such as ``external_drift``, ``target_missing``);
    ``message`` says what is wrong and what to do; ``path`` names the file when there is one.
    """

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        if path and bears_secret(path):  # never print or store a secret-bearing path (memzoi.judge.pathsafety)
            shown = shown_path(path)
            message, path = message.replace(path, shown), shown
        message = storable(message)  # a quoted id may hold a lone surrogate (a YAML escape): printable, storable
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path

    @classmethod
    def of_local_path(cls, code: str, message: str, path: str | os.PathLike[str]) -> Refusal:
        """A refusal about ``path``, a path of this machine that is no project file (a resident file, its lock):
        ``message`` with ``path`` and its folders spelled as :func:`~memzoi.judge.pathsafety.with_shown_paths`
        spells them and ``path`` as :func:`~memzoi.judge.pathsafety.shown_local_path` shows it (any folder's name
        may bear a secret, which the constructor's last-name rule would miss)."""
        return cls(code, with_shown_paths(message, path), shown_local_path(path))

    def to_json(self) -> dict[str, Any]:
        """``{"error": {"code", "message"}}`` (SPEC §8), plus ``path`` when known."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path:
            err["path"] = self.path
        return {"error": err}


class Purged:
    """Bytes the ledger deliberately does not keep (they held a secret, or a rejection purged them): only their
    BLAKE3 digest (hex) and size in bytes. Compares equal to exactly those bytes, so drift checks,
    reconciliation and classification work as with the bytes themselves; they can never be written back."""

    __slots__ = ("digest", "size")

    def __init__(self, digest: str, size: int) -> None:
        self.digest = digest
        self.size = size

    @classmethod
    def of(cls, data: bytes) -> Purged:
        """The digest and size of ``data``."""
        return cls(blake3.blake3(data).hexdigest(), len(data))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Purged):
            return (self.digest, self.size) == (other.digest, other.size)
        if isinstance(other, (bytes, bytearray, memoryview)):
            return len(other) == self.size and blake3.blake3(bytes(other)).hexdigest() == self.digest
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.digest, self.size))

    def __repr__(self) -> str:
        return f"Purged({self.digest[:12]}…, {self.size} bytes)"


def rejection_reason(reason: str | None, *, code: str = "reason_required") -> str:
    """The one rule for the reason of a rejection, of a proposal packet and of a resident candidate alike (issue
    28): required, trimmed as Zuno trims (:func:`memzoi.read.text.rust_trim`). ``code`` is the refusal's reason code:
    Memzoi's ``reason_required`` for packets, Zuno's ``invalid_candidate`` for resident candidates. Raises
    :class:`Refusal` with one piece of advice."""
    from ..read.text import rust_trim  # noqa: PLC0415 lazy: start-up

    why = rust_trim(reason or "")
    if not why:
        raise Refusal(code, "a rejection needs a reason: say why; it is recorded with the decision")
    return why


@dataclass(frozen=True)
class FileChange:
    """One file of a change: ``path`` is ``/``-separated and relative to the project root; ``before`` and
    ``after`` are the exact bytes, ``None`` meaning the file is absent, or :class:`Purged` when the ledger keeps
    only the digest and size of bytes that held a secret.

    ``before_mode`` and ``after_mode`` are the permission bits (``0o777`` at most) the file has in each state, or
    ``None`` (absent, or not known: rows an older ledger wrote). A plan sets ``after_mode`` on a file it creates
    from another (a packet moved to ``resolved/``: the packet's bits, so no permission is widened); the change
    engine records every present file's ``before_mode`` and gives a re-created file its recorded mode (undo,
    rollback, recovery), the umask's mode when none is known. They take no part in equality."""

    path: str
    before: bytes | None | Purged
    after: bytes | None | Purged
    before_mode: int | None = field(default=None, compare=False)
    after_mode: int | None = field(default=None, compare=False)

    @property
    def purged(self) -> bool:
        """True when the ledger keeps only the digest of the before or after bytes."""
        return isinstance(self.before, Purged) or isinstance(self.after, Purged)

    @property
    def change(self) -> str:
        """What the change does to the file, in the one wording every text surface uses (the CLI's change and
        history output, the editor's answer): ``created``, ``deleted``, ``modified``, or ``unchanged`` when both
        sides are the same state (absent before and after, or the same bytes: the files a recovery lists but
        leaves as they are)."""
        if self.before == self.after:
            return "unchanged"
        return "created" if self.before is None else "deleted" if self.after is None else "modified"

    def to_json(self) -> dict[str, Any]:
        """``{"path", "before": "present|absent", "after": "present|absent", "change"}`` (SPEC §8, with ``change``
        the word of :attr:`change`, as preview and history give it), plus ``"purged": ["before"|"after", ...]``
        when the ledger keeps only the digest and size of those bytes."""
        out: dict[str, Any] = {
            "path": self.path,
            "before": "absent" if self.before is None else "present",
            "after": "absent" if self.after is None else "present",
            "change": self.change,
        }
        purged = [k for k in ("before", "after") if isinstance(getattr(self, k), Purged)]
        if purged:
            out["purged"] = purged
        return out


def in_write_order(
    files: list[FileChange], *, forward: bool
) -> list[tuple[FileChange, bytes | None | Purged, bytes | None | Purged]]:
    """``(file, from, to)`` of every file of a change in the order the change engine writes them (``forward``: from
    the before to the after bytes; else an undo's after to before): every file that comes to exist (created or
    rewritten) first, deletions last, each group in the plan's order. So the content a change moves (the packet an
    undo re-creates, the record and resolved copy an apply writes) is on disk at every point of a crash, and no
    deletion a user might commit comes before its replacement exists."""
    pairs = [(f, f.before, f.after) if forward else (f, f.after, f.before) for f in files]
    return sorted(pairs, key=lambda p: p[2] is None)  # stable: the plan's order holds within each group


@dataclass
class ChangePlan:
    """Everything a change will do, computed and validated before anything is recorded.

    ``db_effects(conn, change_id)`` runs inside the transaction that records the change ``applying`` (runtime
    rows, e.g. a private local record, whose visibility follows the change's status). ``details`` is small JSON
    kept with the change (proposal id, record id, …) for history and hovers.
    """

    operation: str
    files: list[FileChange]
    reason: str | None = None
    summary: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    db_effects: Callable[[sqlite3.Connection, str], None] | None = None
    #: Paths whose before bytes the change removes on purpose so that they are gone (a non-repo-safe packet
    #: rejected into a hash receipt): the ledger keeps only their digest and size, and undo is refused.
    purge: frozenset[str] = frozenset()
    #: Files the change reads but does not write, with the bytes it read (``None``: absent): a preview's
    #: fingerprint covers them too (:mod:`.previewed`).
    reads: dict[str, bytes | None] = field(default_factory=dict)
    #: What else decides the write, from outside the project's files (a materialization's three artifacts, the
    #: text it writes): ``{label: digest}``, covered by a preview's fingerprint too (:mod:`.previewed`).
    decides: dict[str, str] = field(default_factory=dict)
    #: The id of a change whose files this one puts back at their before bytes (a recovery ``restore-before``):
    #: the folders that change created are removed once written, while empty (:mod:`memzoi.ledger.folders`).
    restores: str | None = None


@dataclass
class ChangeResult:
    """The outcome of a change or an undo: its id, final status and files."""

    change_id: str
    status: str
    files: list[FileChange]
    operation: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"change_id", "status", "files": [...]}`` (SPEC §8), plus ``operation`` and ``details``."""
        return {
            "change_id": self.change_id,
            "status": self.status,
            "files": [f.to_json() for f in self.files],
            "operation": self.operation,
            "details": self.details,
        }


@dataclass
class ChangeRecord:
    """A ledger row with its files (history, hover, recovery)."""

    id: str
    seq: int
    operation: str
    actor: str
    source: str
    reason: str | None
    summary: str
    status: str
    phase: str
    diagnostic: str | None
    details: dict[str, Any]
    created_at: str
    updated_at: str
    applied_at: str | None
    undone_at: str | None
    undo_actor: str | None
    undo_source: str | None
    files: list[FileChange]

    def to_json(self) -> dict[str, Any]:
        """History entry: the SPEC §8 change fields plus actor, source, reason and timestamps."""
        return {
            "change_id": self.id,
            "status": self.status,
            "files": [f.to_json() for f in self.files],
            "operation": self.operation,
            "actor": self.actor,
            "source": self.source,
            "reason": self.reason,
            "summary": self.summary,
            "diagnostic": self.diagnostic,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "applied_at": self.applied_at,
            "undone_at": self.undone_at,
            "undo_actor": self.undo_actor,
            "undo_source": self.undo_source,
            "details": self.details,
        }


@dataclass(frozen=True)
class Reconciled:
    """One in-flight change classified by :func:`reconcile`."""

    change_id: str
    previous: str
    status: str


def unsettled(change: ChangeRecord, where: str = "touching this file") -> str:
    """What to say of the ``uncertain`` ``change`` (or of one still ``applying``/``undoing`` that reconciliation would
    make uncertain) to a file it touches: the ``ledger_uncertain`` finding, the ``uncertain_change`` refusal of any
    other change of the file and the editor's disabled actions all say this, and how to settle it (SPEC §6).
    ``where`` names the files (``memzoi doctor`` says how many)."""
    how = (
        f"`memzoi reconcile --recover {change.id} restore-before|complete-after|accept` "
        "(or the editor's Recover actions)"
    )
    if change.status in ("applying", "undoing"):
        state = (
            f"was left {change.status} by a process that ended, and its files match neither its before nor its "
            "after snapshot"
        )
        how = f"run `memzoi reconcile`, then settle it with {how}"
    else:
        state = "could not be classified after a crash (uncertain)"
        how = f"settle it before any other change of its files with {how}"
    return f"change {change.id} ({change.operation}) {where} {state}: {how}"
