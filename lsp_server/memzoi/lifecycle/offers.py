"""Which lifecycle operations a file offers, and why one cannot run now: the one rule behind the editor's code
actions on records and packets (each surface only names and draws them).

* A pending packet offers Review first (the safe default: the clients show the exact diff of every file the
  change writes, then Apply or Cancel; issue 28), then Apply (and its preview) as the can-apply rule (:mod:`memzoi.lifecycle.readiness`)
  says, Reject always (blocked only while an uncertain change touches the packet: ``Readiness.held``), and Route
  to local memory where the git-plane gate is what blocks it.
* An active record offers Supersede and Tombstone (each with a preview); a record whose reviewed content changed
  after its attestation or its last ledgered write (``stale_attestation``, ``ledger_drift``) offers Re-attest,
  with a preview of the hand edit it accepts. Each is blocked, with every reason, by the rule its command refuses
  by (:func:`memzoi.lifecycle.readiness.record_blockers`: a finding that blocks a write, such as a credential, or
  a record that is not active, or an uncertain change touching it: ``uncertain_change``).
* Any file offers Undo of its last applied change while the ledger can still restore its exact before bytes, and
  each recovery mode of every uncertain change touching it (:data:`memzoi.ledger.model.RECOVERY_MODES`).

Every operation acts on the file on disk, so an open document with unsaved edits blocks them all, with that
reason; so does a path the ledger never writes (a symlink in it: :func:`path_blocker`, the check every lifecycle
command refuses by).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.findings import Finding
from ..base.views import Frontmatter
from ..judge.workspace import Role
from ..ledger.model import RECOVERY_MODES, ChangeRecord, Refusal
from ..ledger.store import safe_path
from ..ledger.view import FileLedger
from .readiness import INACTIVE as INACTIVE_OF, NOT_ACTIVE, Readiness, describe, record_blockers

UNSAVED = "save the file first: lifecycle changes act on the file on disk"
INACTIVE = f"{NOT_ACTIVE}: {INACTIVE_OF['reattest']}"
#: Codes saying a record's reviewed content changed since it was attested or last written by the ledger.
REATTEST_CODES = frozenset({"stale_attestation", "ledger_drift"})


@dataclass(frozen=True)
class Offer:
    """One operation a file offers: ``operation`` (``review``, ``apply``, ``reject``, ``route_local``, ``supersede``,
    ``tombstone``, ``reattest``, ``undo``, ``recover``), ``blocked`` (why it cannot run now, ``None`` when it can),
    ``preview`` (a preview of it is offered too, with the same blocker), and for ``undo``/``recover`` the
    ``change`` it acts on and the recovery ``mode``."""

    operation: str
    blocked: str | None = None
    preview: bool = False
    change: ChangeRecord | None = None
    mode: str | None = None


def packet_offers(readiness: Readiness, unsaved: str | None) -> list[Offer]:
    """Review (first: the preferred action), Apply (with preview), Reject and, where it fits, Route to local
    memory for a pending packet."""
    apply_blocked = "; ".join(r for r in (unsaved, readiness.blocked_reason()) if r) or None
    # An uncertain change touching the packet blocks a reject too (the ledger refuses it: readiness.held).
    reject_blocked = "; ".join(r for r in (unsaved, describe(readiness.held)) if r) or None
    out = [Offer("review", unsaved), Offer("apply", apply_blocked, preview=True), Offer("reject", reject_blocked)]
    if readiness.can_route_local:
        out.append(Offer("route_local", unsaved))
    return out


def record_offers(data: Mapping[str, Any], findings: Iterable[Finding], unsaved: str | None) -> list[Offer]:
    """Supersede and Tombstone (with previews) for an active record; Re-attest when its content changed since
    review (see the module docstring)."""
    found = list(findings)
    status = Frontmatter(data).status
    out = []
    if status == "active":
        out += [Offer(op, _blocked(unsaved, found, op, status), preview=True) for op in ("supersede", "tombstone")]
    if any(f.code in REATTEST_CODES for f in found):
        out.append(Offer("reattest", _blocked(unsaved, found, "reattest", status), preview=True))
    return out


def _blocked(unsaved: str | None, findings: list[Finding], operation: str, status: str | None) -> str | None:
    """Every reason ``operation`` cannot run (``code: message; …``), ``None`` when it can."""
    reasons = describe(record_blockers(findings, operation=operation, status=status))
    return "; ".join(r for r in (unsaved, reasons) if r) or None


def path_blocker(root: Path, rel: str) -> str | None:
    """Why no lifecycle change can write the project file ``rel`` under ``root`` (``code: message``: a symlink in
    its path), ``None`` when the ledger may write it: the check every command refuses by
    (:func:`memzoi.ledger.safe_path`). Only ``lstat`` calls; the file is not read."""
    try:
        safe_path(root, rel)
    except Refusal as err:  # the message shows a secret-bearing path redacted (Refusal)
        return f"{err.code}: {err.message}"
    return None


def ledger_offers(
    ledger: FileLedger, undo_available: Callable[[ChangeRecord], bool], unsaved: str | None
) -> list[Offer]:
    """Undo of the file's last applied change while it can be undone, then every recovery mode of each uncertain
    change touching the file (oldest first)."""
    out = []
    if ledger.last is not None and undo_available(ledger.last):
        out.append(Offer("undo", unsaved, change=ledger.last))
    for change in ledger.uncertain:
        out += [Offer("recover", unsaved, change=change, mode=mode) for mode in RECOVERY_MODES]
    return out


def file_offers(
    role: Role,
    data: Mapping[str, Any],
    findings: Iterable[Finding],
    readiness: Readiness | None,
    ledger: FileLedger | None,
    undo_available: Callable[[ChangeRecord], bool],
    *,
    unsaved: bool,
    unwritable: str | None = None,
) -> list[Offer]:
    """Every offer of one file, in the order a menu lists them.

    ``role``: where the file sits; ``data``: its frontmatter mapping; ``findings``: its verdict's findings;
    ``readiness``: the can-apply answer for a pending packet (``None`` otherwise); ``ledger``: the ledger's facts of
    the file (``None`` outside a project); ``undo_available``: whether a change can still be undone exactly;
    ``unsaved``: the open document differs from the file on disk; ``unwritable``: why the ledger never writes the
    file (:func:`path_blocker`), which blocks every offer.
    """
    why = "; ".join(r for r in (UNSAVED if unsaved else None, unwritable) if r) or None
    out: list[Offer] = []
    if readiness is not None:
        out += packet_offers(readiness, why)
    elif role is Role.RECORD:
        out += record_offers(data, findings, why)
    if ledger is not None:
        out += ledger_offers(ledger, undo_available, why)
    return out
