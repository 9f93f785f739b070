"""The rules of the cross-file checks (SPEC §4, warnings), evaluated for one file over the tables of a
:class:`memzoi.project.crossfile.Workspace` (:class:`CrossRules`, its base): ``dangling_reference``,
``lifecycle_inconsistent``, ``proposal_target_inactive``, ``proposal_target_stale``, ``proposal_cross_scope``,
``duplicate_content``, ``duplicate_identity``. The proposal checks are Memzoi's apply preconditions evaluated now
(reference §2.5): the target exists, is ``active``, has the same scope kind and scope id, and was updated (or
created) no later than ``proposal.proposed_at`` (RFC 3339, or ``YYYY-MM-DD`` at UTC midnight).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..base.findings import Finding, finding
from ..judge.pathsafety import bears_secret, shown_id, shown_path
from .filefacts import FileFacts, Ref, identity_token


class CrossRules:
    """The cross-file rules over the tables a :class:`memzoi.project.crossfile.Workspace` keeps (its base class):
    facts per path, record id → paths, identity token → packet paths, id → referring paths, and content hash →
    sorted paths of the files taking part in duplicate checks."""

    _facts: dict[str, FileFacts]
    _records: dict[str, str | set[str]]  # the one path defining a record id as itself, a set of several
    _proposals: dict[str, set[str]]
    _referrers: dict[str, set[str]]
    _content: dict[str, list[str]]

    def _defining(self, record_id: str) -> Collection[str]:
        """The paths of the files defining ``record_id``. Nearly every id has one, held as the path itself, not a
        set of one (issue 29: a set per record was 2.3 MB of the language server's peak at 10,000 records)."""
        paths = self._records.get(record_id, ())
        return (paths,) if isinstance(paths, str) else paths

    def _record(self, record_id: str) -> FileFacts | None:
        paths = self._defining(record_id)
        return self._facts[min(paths)] if paths else None

    def _evaluate(self, path: str, f: FileFacts) -> list[Finding]:
        if f.failed:  # its facts could not be read (logged where they were made)
            return [cross_error(None, path)]
        out: list[Finding] = []
        if f.kind == "record":
            self._record_checks(path, f, out)
        elif f.kind == "proposal":
            if f.pending:
                self._proposal_checks(f, out)
            self._identity_checks(path, f, out)
        if f.content and dup_eligible(f):
            self._duplicate_content(path, f, out)
        return out

    def _record_checks(self, path: str, f: FileFacts, out: list[Finding]) -> None:
        for r in f.refs:
            if r.to == "proposal":
                if not self._proposals.get(identity_token(r.target)):
                    out.append(
                        _at(
                            r,
                            "dangling_reference",
                            f"`{r.field}` names proposal `{shown_id(r.target)}`, but no "
                            "pending or resolved packet in this workspace has that id; fix the id or "
                            "restore the packet",
                        )
                    )
                continue
            target = self._record(r.target)
            if target is None:
                out.append(
                    _at(
                        r,
                        "dangling_reference",
                        f"`{r.field}` names record `{shown_id(r.target)}`, which does not "
                        "exist in this workspace; fix the id, or restore the record",
                    )
                )
            elif r.field == "supersedes" and f.status == "active" and target.status == "active":
                out.append(
                    _at(
                        r,
                        "lifecycle_inconsistent",
                        f"this record supersedes `{shown_id(r.target)}`, but that "
                        "record is still `active`: set its status to `superseded` (apply the "
                        "supersede through a proposal) or remove `supersedes`",
                    )
                )

    def _proposal_checks(self, f: FileFacts, out: list[Finding]) -> None:
        from ..models.common import parse_instant  # noqa: PLC0415 lazy: start-up - a pending packet's check only

        proposed = parse_instant(f.when) if f.when else None
        for r in f.refs:
            if r.to == "created":
                self._created_check(f, r, out)
                continue
            target = self._record(r.target)
            if target is None:
                out.append(
                    _at(
                        r,
                        "dangling_reference",
                        f"`{r.field}` names record `{shown_id(r.target)}`, which does not "
                        "exist in this workspace, so the proposal cannot be applied; fix the id",
                    )
                )
                continue
            if target.status != "active":
                out.append(
                    _at(
                        r,
                        "proposal_target_inactive",
                        f"target `{shown_id(r.target)}` is `{target.status}`, not "
                        "`active`; applying would fail: retarget the proposal or reject it",
                        status=target.status,
                    )
                )
            if (target.scope_kind, target.scope_id) != (f.scope_kind, f.scope_id):
                out.append(
                    _at(
                        r,
                        "proposal_cross_scope",
                        f"target `{shown_id(r.target)}` has scope "
                        f"{_scope(target.scope_kind, target.scope_id)} but this proposal has scope "
                        f"{_scope(f.scope_kind, f.scope_id)}; applying would fail: make the scopes "
                        "equal",
                    )
                )
            updated = parse_instant(target.when) if target.when else None
            if proposed is not None and updated is not None and updated > proposed:
                out.append(
                    _at(
                        r,
                        "proposal_target_stale",
                        f"target `{shown_id(r.target)}` was updated at {target.when}, "
                        f"after this proposal (proposed_at {f.when}); review the target's current "
                        "content and re-propose",
                    )
                )

    def _created_check(self, f: FileFacts, r: Ref, out: list[Finding]) -> None:
        """``record_exists`` when the record ``f``'s apply would create (``r``) is its supersede target's own id or
        already exists (:mod:`memzoi.judge.recordslot`, the propose-time refusal's rule and words)."""
        from ..judge.recordslot import record_taken_reason  # noqa: PLC0415 lazy: start-up - a pending packet's check only

        same = any(o.target == r.target and o.to == "record" for o in f.refs)
        if not same and self._record(r.target) is None:
            return
        reason = record_taken_reason(r.target, same_as_target=same, supersede=f.action == "supersede")
        out.append(
            finding(
                "record_exists",
                f"{reason}; until then this packet can never be applied: retitle it or reject it",
                *r.span,
                field="title",
                target=r.target,
            )
        )

    def _identity_checks(self, path: str, f: FileFacts, out: list[Finding]) -> None:
        """``duplicate_identity`` (an error: Memzoi's proposal inventory refuses an identity used twice across
        pending and resolved packets). A pending packet whose identity is resolved is told so: an applied or
        rejected identity is final, so renaming the resolved one is no fix (an editor buffer saved after the CLI
        applied its packet re-creates it)."""
        others = sorted({p for t in f.tokens for p in self._proposals.get(t, ()) if p != path})
        if not others:
            return
        own = f"`{shown_id(f.ident)}`" if f.ident else "of this packet"
        final = next((o for o in (_outcome(p) for p in others) if o), None) if f.pending else None
        if final:
            message = (
                f"proposal identity {own} was already {final} (resolved/{final}/); an applied or rejected identity "
                "is final: delete or reject this pending copy, or give it a new id"
            )
        else:
            message = (
                f"proposal identity {own} (id or file name) is also used by {len(others)} other packet(s) ("
                + ", ".join(_name(p) for p in others[:3])
                + "); identities are unique across pending and resolved packets: rename the pending one"
            )
        out.append(finding("duplicate_identity", message, *f.ident_span, others=others))

    def _replacement_partners(self, f: FileFacts) -> set[str]:
        """The files ``f`` is the replacement of, or replaced by (:func:`_replaces`); looked up through the
        reference tables, so a record with thousands of twins costs nothing more."""
        if f.pending and f.action == "supersede":
            return {p for r in f.refs for p in self._defining(r.target) if _replaces(f, self._facts[p])}
        if f.kind == "record" and f.ident:
            return {p for p in self._referrers.get(f.ident, ()) if _replaces(self._facts[p], f)}
        return set()

    def _duplicate_content(self, path: str, f: FileFacts, out: list[Finding]) -> None:
        twins = self._content.get(f.content or "", [])
        if len(twins) < 2:
            return
        partners = self._replacement_partners(f)  # a supersede packet and the record it replaces are no twins
        if partners:
            twins = [p for p in twins if p not in partners]
            if len(twins) < 2:
                return
        named = [p for p in twins[:4] if p != path][:3]  # the first twins by path: stable as others come and go
        names = ", ".join(
            f"{self._facts[p].kind} `{shown_id(self._facts[p].ident) or _name(p, stem=True)}`" for p in named
        )
        more = " and others" if len(twins) > 4 else ""
        out.append(
            finding(
                "duplicate_content",
                f"same content as {names}{more}; keep one: "
                "supersede or tombstone the other record, or reject the duplicate proposal",
                *f.body_span,
                others=named,
            )
        )


def _at(r: Ref, code: str, message: str, **data: Any) -> Finding:
    """The finding ``code`` anchored on reference ``r`` (its span), naming its field and target."""
    return finding(code, message, *r.span, field=r.field, target=r.target, **data)


def ref_key(r: Ref) -> str:
    """The table key of a reference: the identity token of a proposal's id (its id or file name,
    :func:`memzoi.project.filefacts.identity_token`), else the record id."""
    return identity_token(r.target) if r.to == "proposal" else r.target


def _scope(kind: str | None, ident: str | None) -> str:
    return f"`{kind}`" + (f" (id `{ident}`)" if ident else " (no scope id)")


def cross_error(err: BaseException | None, path: str) -> Finding:
    """The ``internal_error`` finding of a file whose cross-file evaluation raised ``err`` (logged here), or whose
    facts could not be read (``None``: logged where they were made)."""
    from ..judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

    if err is None:
        return internal_error(RuntimeError("cross-file facts unavailable"), path, log=False)
    return internal_error(err, path)


def _outcome(path: str) -> str | None:
    """``applied`` or ``rejected`` for a resolved packet's path (``…/proposals/resolved/<outcome>/…``), else None."""
    parts = Path(path).parts
    for i in range(len(parts) - 2):
        if parts[i : i + 2] == ("proposals", "resolved") and parts[i + 2] in ("applied", "rejected"):
            return parts[i + 2]
    return None


def _name(path: str, *, stem: bool = False) -> str:
    """The file name of ``path`` for a message (its stem with ``stem``), or its redacted form when the path bears
    a secret."""
    if bears_secret(path):
        return shown_path(path)
    return Path(path).stem if stem else Path(path).name


def _replaces(packet: FileFacts, record: FileFacts) -> bool:
    """Whether ``packet`` is a pending supersede proposal whose body is marked as the replacement of ``record`` (its
    ``supersedes`` or ``proposal.target`` names the record): a supersede starts as a copy of the record's body
    (the editor's and Memzoi's default), so that pair is no duplicate (issue 28)."""
    if not (packet.pending and packet.action == "supersede") or record.kind != "record" or not record.ident:
        return False
    return any(
        r.target == record.ident and (r.field.startswith("supersedes") or r.field == "proposal.target")
        for r in packet.refs
    )


def dup_eligible(f: FileFacts) -> bool:
    """Files that take part in ``duplicate_content``: active current-profile records and pending create or
    supersede proposals (a tombstone packet's body is a reason, not memory content)."""
    if f.legacy or not f.content:
        return False
    return (f.kind == "record" and f.status == "active") or (f.pending and f.action in ("create", "supersede"))


__all__ = ["CrossRules", "cross_error", "dup_eligible", "ref_key"]
