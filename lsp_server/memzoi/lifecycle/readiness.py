"""The one rule of whether a pending proposal packet can be applied now, or routed to local memory, and why not.

Every surface reads this rule: ``memzoi proposals apply`` and the language server's Apply command (through
:func:`~memzoi.lifecycle.apply.plan_apply`, which gathers its facts from disk under the lifecycle lock), and the
hover, code actions, code lenses, inbox and ``proposals list`` (which gather the same facts from the workspace they
already hold). The facts differ in origin, never in meaning, so the answer is the same wherever it is asked.

What blocks an apply (Memzoi ``proposal-files apply``, reference §2.5, and its admission rules):

* any error-severity finding, and any git-plane gate or content-detector finding at any severity (on a pending
  packet the gate reports at warning severity that the packet cannot be applied *yet*);
* admission: a packet git ignores while untracked (``ignored_untracked``: nobody could review it, and Memzoi's
  admission refuses ignored records) or one that is not a regular file in place (``canonical_path``);
* the target preconditions of a supersede or tombstone (``proposal_target_inactive``, ``proposal_target_stale``,
  ``proposal_cross_scope``, and a target that does not exist);
* an identity already applied or rejected (terminal in Memzoi), and a record path the new record would take;
* a file of the packet that an ``uncertain`` change touches (``uncertain_change``, from its ``ledger_uncertain``
  finding: the ledger refuses any change of such a file until that change is settled, so Reject and Route to local
  memory are blocked too, by :attr:`Readiness.held`);
* a title whose record file name (``<title slug>.md``; Memzoi does not shorten the id) is longer than a file name
  may be (``title_too_long``): the apply could only fail, and a pending packet's title cannot be changed.

Routing to local memory fits when the git-plane gate is what blocks the packet, and is itself refused for a
``secret`` packet, for content that carries a credential or personal data (secrets are never stored, not
even locally) and for a
packet without a title or body.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.findings import CODES, Finding, Severity
from ..base.headlines import detail
from ..base.views import Frontmatter
from ..judge.legacy import NAME_MAX, concept_slug, record_name_bytes
from ..ledger.model import UNCERTAIN_CHANGE
from ..safety.redact import SECRET_CODES
from .layout import RECORDS

if TYPE_CHECKING:
    from ..judge.analysis import Analysis

#: Detector codes that mean the text holds a credential or a personal identifier (``pii_detected``): such content
#: is never stored in any memory, not even the private local plane, the same set the ledger keeps out
#: (:data:`memzoi.safety.redact.SECRET_CODES`). An e-mail address or phone number (``private_personal_data``) is
#: not among them: Memzoi routes that class to local memory (reference ``memzoi-format.md`` §3.1-3.2).
CREDENTIAL_CODES = SECRET_CODES


def never_stored(subject: str, codes: list[str], then: str) -> str:
    """The refusal message for ``subject`` (e.g. ``"the content"``) carrying the detector ``codes`` of
    :data:`CREDENTIAL_CODES` (sorted, at least one): names what is refused, credentials or personal identifiers,
    says why local memory refuses them too, and ends with ``then``, what to do. Never holds the matched text."""
    kinds = []
    if any(c != "pii_detected" for c in codes):
        kinds.append("a credential or secret value")
    if "pii_detected" in codes:
        kinds.append("a personal identifier (an SSN, a card, bank or ID number, or a value labelled as personal data)")
    return (
        f"{subject} carries {' and '.join(kinds)} ({', '.join(codes)}); memory never keeps these, not even private "
        "local memory, because local memory is read back to agents (an e-mail address or phone number may stay in "
        f"local memory): {then}"
    )


#: Finding groups that block a git-plane write whatever their reported severity.
BLOCKING_GROUPS = frozenset({"gate", "detector"})
#: Cross-file and admission codes (warnings in the editor) that an apply refuses.
APPLY_PRECONDITIONS = frozenset(
    {
        "proposal_target_inactive",
        "proposal_target_stale",
        "proposal_cross_scope",
        "ignored_untracked",
        "canonical_path",
    }
)
#: ``Ref.field`` values of ``dangling_reference`` findings that name the target an apply needs.
TARGET_FIELDS = frozenset({"proposal.target", "supersedes", "supersedes[0]"})


def title_too_long(title: str, *, pending: bool) -> Blocker | None:
    """The ``title_too_long`` blocker of ``title`` (see :func:`memzoi.judge.legacy.record_name_bytes`), or ``None``.
    Its advice fits a ``pending`` packet (reject it and propose again) or a proposal being made (a shorter title)."""
    size = record_name_bytes(title)
    if size is None:
        return None
    way = (
        "reject this proposal and propose it again with a shorter title"
        if pending
        else "give a shorter title; nothing was written"
    )
    return Blocker(
        "title_too_long",
        f"the title makes a record file name of {size} bytes, over the {NAME_MAX} a "
        f"file name may have, and Memzoi does not shorten the record id; {way}",
    )


@dataclass(frozen=True)
class Blocker:
    """One reason an operation cannot run: Memzoi's reason code and a message saying what to do (never secret
    text: messages come from findings and refusals, which never quote a match)."""

    code: str
    message: str


@dataclass(frozen=True)
class Readiness:
    """Whether a pending packet can be applied now and, if not, every reason, plus whether routing it to local
    memory is the fitting alternative."""

    blockers: tuple[Blocker, ...] = ()
    gate_blocked: bool = False
    route_blockers: tuple[Blocker, ...] = ()
    #: What blocks every change of the packet, a reject included (:func:`unsettled_blockers`).
    held: tuple[Blocker, ...] = ()

    @property
    def can_apply(self) -> bool:
        """No blocker: an explicit Apply would go ahead (Memzoi: approval is never application by itself)."""
        return not self.blockers

    @property
    def can_route_local(self) -> bool:
        """The gate keeps the packet out of the repository and nothing forbids keeping it privately."""
        return self.gate_blocked and not self.route_blockers

    def summary(self, limit: int = 3) -> str:
        """``code: message; …`` of the first ``limit`` blockers, with a count of the rest ('' when none)."""
        return describe(self.blockers, limit)

    def statement(self) -> str:
        """One line for people: ``yes, with an explicit Apply`` or ``no: <every blocking code>`` and the way out
        that fits (route to local memory only where that would be accepted)."""
        return "yes, with an explicit Apply" if self.can_apply else f"no: blocked by {self.blocked_reason()}"

    def blocked_reason(self) -> str:
        """Why Apply cannot run, for a blocked action's title (``Apply proposal (blocked: <this>)``): ``<every
        blocking code>; <the way out>`` (``statement`` after its ``no: blocked by``), '' when it can run."""
        if self.can_apply:
            return ""
        return f"{', '.join(self.codes())}; {self._way()}"

    def _way(self) -> str:
        """The way out of the blockers that fits: while a change is uncertain, the ledger's own words (which change,
        how to settle it), since no reject goes through either."""
        if self.held:
            return describe(self.held)
        if self.can_route_local:
            return "route it to local memory or reject it"
        return "fix what is named or reject it"

    def refusal(self, limit: int = 3) -> str:
        """Why an apply is refused, with one piece of advice (issue 28: every blocker's message carried its own
        fix, then the refusal added another): ``blocked by <code> (<what is wrong>); …; <the way out>``. Each
        blocker says only what is wrong (its message up to its first ``;``, where findings give their fix)."""
        items = [f"{b.code} ({detail(b.code, b.message).split('; ', 1)[0]})" for b in self.blockers[:limit]]
        more = len(self.blockers) - limit
        return f"blocked by {'; '.join(items)}" + (f"; and {more} more" if more > 0 else "") + f"; {self._way()}"

    def codes(self) -> list[str]:
        """The blocking codes in order, without repeats."""
        return list(dict.fromkeys(b.code for b in self.blockers))


def describe(blockers: Iterable[Blocker], limit: int = 3) -> str:
    """``code: message; …`` for at most ``limit`` blockers, then ``and N more``."""
    items = list(blockers)
    parts = [f"{b.code}: {b.message}" for b in items[:limit]]
    more = len(items) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def blocks_write(f: Finding) -> bool:
    """Whether finding ``f`` blocks any git-plane write of its file (error severity, gate or detector)."""
    return f.severity == Severity.ERROR or CODES.get(f.code, (None, ""))[1] in BLOCKING_GROUPS


def blocks_apply(f: Finding) -> bool:
    """Whether finding ``f`` blocks applying its packet (see the module docstring)."""
    if blocks_write(f) or f.code in APPLY_PRECONDITIONS:
        return True
    return f.code == "dangling_reference" and f.data.get("field") in TARGET_FIELDS


#: Findings a re-attestation is meant to settle (:mod:`memzoi.lifecycle.reattest`); any other blocking finding
#: blocks it.
REATTEST_SETTLES = frozenset({"stale_attestation"})
#: The code of the blocker of an operation that needs an active record, and its message per operation.
NOT_ACTIVE = "record_not_active"
INACTIVE = {
    "reattest": "only an active record can be re-attested: put back what its last change wrote instead",
    "supersede": "only an active record can be superseded",
    "tombstone": "only an active record can be tombstoned",
}


def unsettled_blockers(findings: Iterable[Finding]) -> list[Blocker]:
    """The ``uncertain_change`` blocker of each ``ledger_uncertain`` finding of a file, with the finding's message
    without its headline (:func:`memzoi.ledger.model.unsettled`: which change, and how to settle it; the same words
    as the ledger's refusal): the ledger refuses every change of that file until the change is settled
    (:func:`memzoi.ledger.reconcile.refuse_unsettled`), except its recovery and undo, so the offers of new changes
    are disabled with this reason. ``[]`` for the usual file."""
    code = "ledger_uncertain"
    return _unique([Blocker(UNCERTAIN_CHANGE, detail(code, f.message)) for f in findings if f.code == code])


def record_blockers(findings: Iterable[Finding], *, operation: str, status: str | None) -> list[Blocker]:
    """Why ``operation`` (``supersede``, ``tombstone`` or ``reattest``) cannot run on a record now: every finding
    that blocks a write of it (:func:`blocks_write`; a re-attestation settles ``stale_attestation``), an uncertain
    change touching it (:func:`unsettled_blockers`), then ``record_not_active`` when its frontmatter ``status`` is
    not ``active`` (Memzoi supersedes, tombstones and attests only active records). ``[]`` when it can run.

    The one rule of the commands' refusals (:func:`memzoi.lifecycle.reattest.plan_reattest`, the target checks of
    :func:`memzoi.lifecycle.apply.load_target`) and of the editor's offers (:mod:`memzoi.lifecycle.offers`), so an
    action is disabled exactly when its command would refuse, with the same reasons. Messages come from findings,
    which never quote a secret."""
    settled = REATTEST_SETTLES if operation == "reattest" else frozenset()
    found = list(findings)
    out = [Blocker(f.code, f.message) for f in found if blocks_write(f) and f.code not in settled]
    out += unsettled_blockers(found)
    if status != "active":
        out.append(Blocker(NOT_ACTIVE, INACTIVE[operation]))
    return _unique(out)


def readiness(
    findings: Iterable[Finding],
    *,
    identity_resolved: str | None = None,
    record_taken: str | None = None,
    extra: Iterable[Blocker] = (),
    sensitivity: str | None = None,
    has_content: bool = True,
) -> Readiness:
    """The rule (module docstring) applied to one pending packet's facts.

    ``findings``: every finding known for the packet (analysis, admission, cross-file). ``identity_resolved``: the
    resolved packet that already holds its identity, if any. ``record_taken``: the path of an existing record the
    apply would create, if any. ``extra``: further blockers found while planning (e.g. a target check at write
    time). ``sensitivity`` and ``has_content`` (title and body present) decide the route-local alternative.
    """
    found = list(findings)
    blockers = [Blocker(f.code, f.message) for f in found if blocks_apply(f)]
    if identity_resolved:
        blockers.append(
            Blocker(
                "duplicate_identity",
                f"the proposal identity was already resolved ({identity_resolved}); "
                "an applied or rejected identity is terminal: reject this packet or give it a new id",
            )
        )
    if record_taken:
        blockers.append(
            Blocker("record_exists", f"{record_taken} already exists; supersede it instead, or retitle the proposal")
        )
    blockers.extend(extra)
    held = unsettled_blockers(found)
    blockers.extend(held)
    gate = any(CODES.get(f.code, (None, ""))[1] == "gate" for f in found)
    route: list[Blocker] = []
    if sensitivity == "secret":
        route.append(
            Blocker(
                "sensitivity_not_repo_safe",
                "secret proposals are never stored in memory, not even locally; reject it instead",
            )
        )
    creds = sorted({f.code for f in found if f.code in CREDENTIAL_CODES})
    if creds:
        route.append(
            Blocker(
                creds[0],
                never_stored("the packet", creds, "reject it instead"),
            )
        )
    if not has_content:
        route.append(
            Blocker("invalid_proposal", "a packet needs a title and a body to become a local record; reject it instead")
        )
    route.extend(held)
    return Readiness(tuple(_unique(blockers)), gate, tuple(route), tuple(held))


def packet_readiness(
    root: str | os.PathLike[str],
    analysis: Analysis,
    findings: Iterable[Finding],
    *,
    identity_resolved: str | None = None,
) -> Readiness:
    """:func:`readiness` of a pending packet as the editor and ``proposals list`` see it: ``findings`` are every
    finding they hold for it (analysis, admission, cross-file), ``identity_resolved`` comes from their cross-file
    workspace (:meth:`memzoi.project.crossfile.Workspace.resolved_holder`), and the record path the apply would create is
    looked up on disk under ``root`` (one ``stat``)."""
    fm = Frontmatter(analysis.document.data)
    title = fm.title or ""
    taken = None
    if fm.proposal.action in ("create", "supersede") and title and record_name_bytes(title) is None:
        rel = f"{RECORDS}/{concept_slug(title)}.md"
        if os.path.lexists(os.path.join(os.fspath(root), rel)):
            taken = rel
    # A title too long for a file name is the packet's own ``title_too_long`` finding (memzoi.judge.validate).
    return readiness(
        findings,
        identity_resolved=identity_resolved,
        record_taken=taken,
        sensitivity=fm.sensitivity,
        has_content=bool(title and analysis.document.body.strip()),
    )


def _unique(blockers: list[Blocker]) -> list[Blocker]:
    seen: set[Blocker] = set()
    out = []
    for b in blockers:
        if b not in seen:
            seen.add(b)
            out.append(b)
    return out
