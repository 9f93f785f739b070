"""Which lifecycle operations a file offers, and why one cannot run now: the one rule behind the editor's code
actions on records and packets (each surface only names and draws them).

* A pending packet offers Review first (the safe default: the clients show the exact diff of every file the
  change writes, then Apply or Cancel; issue 28), then Apply (and its preview) as the can-apply rule (:mod:`memzoi.lifecycle.readiness`)
  says, Reject always, and Route to local memory where the git-plane gate is what blocks it.
* An active record offers Supersede and Tombstone (each with a preview), blocked while the record has errors
  (Memzoi supersedes and tombstones only a valid active record); a record whose reviewed content changed after
  its attestation or its last ledgered write (``stale_attestation``, ``ledger_drift``) offers Re-attest, with a
  preview of the hand edit it accepts.
* Any file offers Undo of its last applied change while the ledger can still restore its exact before bytes, and
  each recovery mode of every uncertain change touching it (:data:`memzoi.ledger.model.RECOVERY_MODES`).

Every operation acts on the file on disk, so an open document with unsaved edits blocks them all, with that
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..base.findings import Finding, Severity
from ..base.views import Frontmatter
from ..judge.workspace import Role
from ..ledger.model import RECOVERY_MODES, ChangeRecord
from ..ledger.view import FileLedger
from .readiness import Readiness

UNSAVED = "save the file first: lifecycle changes act on the file on disk"
INACTIVE = "only an active record can be re-attested: put back what its last change wrote instead"
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
    apply_blocked = unsaved or (None if readiness.can_apply else readiness.statement())
    out = [Offer("review", unsaved), Offer("apply", apply_blocked, preview=True), Offer("reject", unsaved)]
    if readiness.can_route_local:
        out.append(Offer("route_local", unsaved))
    return out


def record_offers(data: Mapping[str, Any], findings: Iterable[Finding], unsaved: str | None) -> list[Offer]:
    """Supersede and Tombstone (with previews) for an active record; Re-attest when its content changed since
    review (see the module docstring)."""
    found = list(findings)
    out = []
    if Frontmatter(data).status == "active":
        errors = sum(1 for f in found if f.severity == Severity.ERROR)
        blocked = unsaved or (f"fix the {errors} error(s) first" if errors else None)
        out += [Offer("supersede", blocked, preview=True), Offer("tombstone", blocked, preview=True)]
    if any(f.code in REATTEST_CODES for f in found):
        # Memzoi attests only an active record (an update candidate must be active; memzoi.lifecycle.reattest).
        inactive = None if Frontmatter(data).status == "active" else INACTIVE
        out.append(Offer("reattest", unsaved or inactive, preview=True))
    return out


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
) -> list[Offer]:
    """Every offer of one file, in the order a menu lists them.

    ``role``: where the file sits; ``data``: its frontmatter mapping; ``findings``: its verdict's findings;
    ``readiness``: the can-apply answer for a pending packet (``None`` otherwise); ``ledger``: the ledger's facts of
    the file (``None`` outside a project); ``undo_available``: whether a change can still be undone exactly;
    ``unsaved``: the open document differs from the file on disk.
    """
    why = UNSAVED if unsaved else None
    out: list[Offer] = []
    if readiness is not None:
        out += packet_offers(readiness, why)
    elif role is Role.RECORD:
        out += record_offers(data, findings, why)
    if ledger is not None:
        out += ledger_offers(ledger, undo_available, why)
    return out
