"""Cross-file checks over a workspace: lineage, proposal preconditions, duplicates and identities.

Codes (SPEC §4, warnings): ``dangling_reference``, ``lifecycle_inconsistent``, ``proposal_target_inactive``,
``proposal_target_stale``, ``proposal_cross_scope``, ``record_exists``, ``duplicate_content``, ``duplicate_identity``.
The proposal checks are Memzoi's apply preconditions evaluated now (reference §2.5): the target exists, is
``active``, has the same scope kind and scope id, and was updated (or created) no later than
``proposal.proposed_at`` (RFC 3339, or ``YYYY-MM-DD`` at UTC midnight).

The :class:`Workspace` holds small per-file :class:`~memzoi.project.filefacts.FileFacts` (see :mod:`memzoi.project.filefacts`)
and re-evaluates only the files a change can affect; the language server calls :meth:`Workspace.update` /
:meth:`Workspace.remove` on every edit, save or file event and republishes :meth:`Workspace.findings_for` for the
paths they return. ``memzoi check`` builds one per ``.memzoi`` directory in one pass (:meth:`Workspace.of`, from
:class:`memzoi.project.crosscheck.CrossFileCheck`). Spans in facts and findings index the text the facts were extracted
from.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.findings import Finding, finding
from ..judge.pathsafety import bears_secret, shown_id, shown_path

# Re-exported (also imported from here).
from .filefacts import (
    FileFacts as FileFacts,
    Ref as Ref,
    facts_from_analysis as facts_from_analysis,
    identity_token as identity_token,
)

if TYPE_CHECKING:
    from ..judge.analysis import Analysis


def _ref_key(r: Ref) -> str:
    return identity_token(r.target) if r.to == "proposal" else r.target


def _scope(kind: str | None, ident: str | None) -> str:
    return f"`{kind}`" + (f" (id `{ident}`)" if ident else " (no scope id)")


class Workspace:
    """Per-file facts of a workspace and the cross-file findings derived from them.

    Keys are any stable path strings (the server uses URIs or absolute paths; ``memzoi check`` display paths).
    All methods are O(files affected by the change), not O(workspace).
    """

    def __init__(self) -> None:
        self._facts: dict[str, FileFacts] = {}
        self._findings: dict[str, list[Finding]] = {}
        self._records: dict[str, set[str]] = {}  # record id -> paths defining it
        self._proposals: dict[str, set[str]] = {}  # identity token -> packet paths
        self._referrers: dict[str, set[str]] = {}  # id -> paths referring to it
        # content hash -> sorted paths of the files that take part in duplicate checks (kept sorted so that
        # naming the first twins is O(1) even when thousands of files share one body)
        self._content: dict[str, list[str]] = {}

    @classmethod
    def of(cls, facts: Mapping[str, FileFacts]) -> Workspace:
        """A workspace holding ``facts`` (path → facts), indexed in one pass (O(files), where as many
        :meth:`update` calls re-evaluate each file's dependents again and again). No finding is evaluated yet:
        :meth:`evaluate` the paths whose findings are wanted; later :meth:`update` calls work as usual."""
        ws = cls()
        ws._facts = dict(facts)
        for path, f in ws._facts.items():
            ws._index(path, f, sort=False)
        for twins in ws._content.values():
            twins.sort()
        return ws

    def evaluate(self, paths: Iterable[str]) -> dict[str, list[Finding]]:
        """The cross-file findings of ``paths`` (those held and with findings; each sorted by position), kept as
        :meth:`findings_for` answers them: the same as :meth:`update` would have left, at the cost of the asked
        paths only."""
        self._reevaluate(paths)
        return {p: list(self._findings[p]) for p in paths if p in self._findings}

    # -- public API ------------------------------------------------------------------------------------------

    def update(self, path: str, analysis: Analysis | FileFacts) -> set[str]:
        """Set the facts of ``path`` (from an analysis or ready-made facts) and re-evaluate what it affects.

        Returns the paths whose cross-file findings changed (possibly including ``path``); the caller
        republishes diagnostics for exactly those.
        """
        facts = analysis if isinstance(analysis, FileFacts) else facts_from_analysis(analysis)
        old = self._facts.get(path)
        if old == facts:
            return set()
        affected = {path} | self._dependents(old) | self._dependents(facts)
        groups = self._groups(old, facts)
        if old is not None:
            self._unindex(path, old)
        self._facts[path] = facts
        self._index(path, facts)
        affected |= self._twins_affected(groups)
        return self._reevaluate(affected)

    def remove(self, path: str) -> set[str]:
        """Forget ``path`` (deleted, renamed away or ignored); returns the paths whose findings changed, which
        includes ``path`` when it had cross-file findings (they must be cleared)."""
        old = self._facts.pop(path, None)
        if old is None:
            return set()
        groups = self._groups(old)
        self._unindex(path, old)
        affected = self._dependents(old) | self._twins_affected(groups)
        affected.discard(path)
        changed = self._reevaluate(affected)
        if self._findings.pop(path, []):
            changed.add(path)
        return changed

    def findings_for(self, path: str) -> list[Finding]:
        """Current cross-file findings of ``path``, sorted by position (empty for unknown paths)."""
        return list(self._findings.get(path, ()))

    def facts(self, path: str) -> FileFacts | None:
        """The facts held for ``path``."""
        return self._facts.get(path)

    def paths(self) -> list[str]:
        """Every path held, sorted."""
        return sorted(self._facts)

    def record_paths(self, record_id: str) -> list[str]:
        """Paths of the record(s) with id ``record_id`` (for go-to-definition), sorted."""
        return sorted(self._records.get(record_id, ()))

    def proposal_paths(self, identity: str) -> list[str]:
        """Paths of packets whose id or file id is ``identity``, sorted."""
        return sorted(self._proposals.get(identity_token(identity), ()))

    def resolved_holder(self, path: str) -> str | None:
        """The first (sorted) applied or rejected packet that shares an identity with the packet at ``path``: in
        Memzoi a resolved identity is terminal, so such a packet can never be applied. ``None`` when there is none."""
        f = self._facts.get(path)
        if f is None:
            return None
        holders = sorted(
            {
                p
                for t in f.tokens
                for p in self._proposals.get(t, ())
                if p != path and self._facts[p].role in ("applied", "rejected")
            }
        )
        return holders[0] if holders else None

    def referrers(self, record_id: str) -> list[str]:
        """Paths referring to ``record_id`` (superseded-by chains, pending proposals), sorted."""
        return sorted(self._referrers.get(record_id, ()))

    # -- internals ---------------------------------------------------------------------------------------------

    def _dependents(self, f: FileFacts | None) -> set[str]:
        if f is None:
            return set()
        out: set[str] = set()
        if f.kind == "record" and f.ident:
            out |= self._referrers.get(f.ident, set())
        for t in f.tokens:
            out |= self._proposals.get(t, set())
            out |= self._referrers.get(t, set())
        return out

    def _groups(self, *facts: FileFacts | None) -> dict[str, tuple[tuple[str, ...], int]]:
        """Snapshot of the duplicate groups ``facts`` belong to: content hash -> (first four paths, size)."""
        out = {}
        for f in facts:
            if f is not None and f.content and _dup_eligible(f):
                g = self._content.get(f.content, [])
                out[f.content] = (tuple(g[:4]), len(g))
        return out

    def _twins_affected(self, before: dict[str, tuple[tuple[str, ...], int]]) -> set[str]:
        """Paths whose ``duplicate_content`` finding may differ after a change to the groups in ``before``.

        A member's message names the first three other members and says "and others" above four members, so
        every member is affected only when the first three, the "others" flag or the group's existence change;
        otherwise only the first four members (and the changed file) are. This keeps one edit O(1) and loading
        a workspace near-linear even when thousands of files share one body.
        """
        out: set[str] = set()
        for h, (head, size) in before.items():
            g = self._content.get(h, [])
            new_head, new_size = tuple(g[:4]), len(g)
            if head[:3] != new_head[:3] or (size > 4) != (new_size > 4) or (size >= 2) != (new_size >= 2):
                out.update(g)
                out.update(head)
            else:
                out.update(head)
                out.update(new_head)
        return out

    def _index(self, path: str, f: FileFacts, sort: bool = True) -> None:
        if f.kind == "record" and f.ident:
            self._records.setdefault(f.ident, set()).add(path)
        for t in f.tokens:
            self._proposals.setdefault(t, set()).add(path)
        for r in f.refs:
            self._referrers.setdefault(_ref_key(r), set()).add(path)
        if f.content and _dup_eligible(f):
            if sort:
                bisect.insort(self._content.setdefault(f.content, []), path)
            else:  # Workspace.of sorts every group once at the end
                self._content.setdefault(f.content, []).append(path)

    def _unindex(self, path: str, f: FileFacts) -> None:
        def drop(table: dict[str, set[str]], key: str) -> None:
            s = table.get(key)
            if s is not None:
                s.discard(path)
                if not s:
                    del table[key]

        if f.kind == "record" and f.ident:
            drop(self._records, f.ident)
        for t in f.tokens:
            drop(self._proposals, t)
        for r in f.refs:
            drop(self._referrers, _ref_key(r))
        if f.content and _dup_eligible(f):
            twins = self._content.get(f.content)
            if twins is not None:
                i = bisect.bisect_left(twins, path)
                if i < len(twins) and twins[i] == path:
                    del twins[i]
                if not twins:
                    del self._content[f.content]

    def _reevaluate(self, paths: Iterable[str]) -> set[str]:
        changed: set[str] = set()
        for p in paths:
            f = self._facts.get(p)
            if f is None:
                continue
            try:
                new = sorted(self._evaluate(p, f), key=lambda x: (x.start, x.end, x.code, x.message))
            except Exception as err:  # the per-file barrier: this file's finding, the others are evaluated
                new = [_internal_error(err, p)]
            old = self._findings.get(p, [])
            if [(x.code, x.message, x.start, x.end) for x in new] != [(x.code, x.message, x.start, x.end) for x in old]:
                changed.add(p)
            if new:
                self._findings[p] = new
            else:
                self._findings.pop(p, None)
        return changed

    def _record(self, record_id: str) -> FileFacts | None:
        paths = self._records.get(record_id)
        return self._facts[min(paths)] if paths else None

    def _evaluate(self, path: str, f: FileFacts) -> list[Finding]:
        if f.failed:  # its facts could not be read (logged where they were made)
            return [_internal_error(None, path)]
        out: list[Finding] = []
        if f.kind == "record":
            self._record_checks(path, f, out)
        elif f.kind == "proposal":
            if f.pending:
                self._proposal_checks(f, out)
            self._identity_checks(path, f, out)
        if f.content and _dup_eligible(f):
            self._duplicate_content(path, f, out)
        return out

    def _record_checks(self, path: str, f: FileFacts, out: list[Finding]) -> None:
        for r in f.refs:
            if r.to == "proposal":
                if not self._proposals.get(identity_token(r.target)):
                    out.append(
                        finding(
                            "dangling_reference",
                            f"`{r.field}` names proposal `{shown_id(r.target)}`, but no "
                            "pending or resolved packet in this workspace has that id; fix the id or "
                            "restore the packet",
                            *r.span,
                            field=r.field,
                            target=r.target,
                        )
                    )
                continue
            target = self._record(r.target)
            if target is None:
                out.append(
                    finding(
                        "dangling_reference",
                        f"`{r.field}` names record `{shown_id(r.target)}`, which does not "
                        "exist in this workspace; fix the id, or restore the record",
                        *r.span,
                        field=r.field,
                        target=r.target,
                    )
                )
            elif r.field == "supersedes" and f.status == "active" and target.status == "active":
                out.append(
                    finding(
                        "lifecycle_inconsistent",
                        f"this record supersedes `{shown_id(r.target)}`, but that "
                        "record is still `active`: set its status to `superseded` (apply the "
                        "supersede through a proposal) or remove `supersedes`",
                        *r.span,
                        field=r.field,
                        target=r.target,
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
                    finding(
                        "dangling_reference",
                        f"`{r.field}` names record `{shown_id(r.target)}`, which does not "
                        "exist in this workspace, so the proposal cannot be applied; fix the id",
                        *r.span,
                        field=r.field,
                        target=r.target,
                    )
                )
                continue
            if target.status != "active":
                out.append(
                    finding(
                        "proposal_target_inactive",
                        f"target `{shown_id(r.target)}` is `{target.status}`, not "
                        "`active`; applying would fail: retarget the proposal or reject it",
                        *r.span,
                        field=r.field,
                        target=r.target,
                        status=target.status,
                    )
                )
            if (target.scope_kind, target.scope_id) != (f.scope_kind, f.scope_id):
                out.append(
                    finding(
                        "proposal_cross_scope",
                        f"target `{shown_id(r.target)}` has scope "
                        f"{_scope(target.scope_kind, target.scope_id)} but this proposal has scope "
                        f"{_scope(f.scope_kind, f.scope_id)}; applying would fail: make the scopes "
                        "equal",
                        *r.span,
                        field=r.field,
                        target=r.target,
                    )
                )
            updated = parse_instant(target.when) if target.when else None
            if proposed is not None and updated is not None and updated > proposed:
                out.append(
                    finding(
                        "proposal_target_stale",
                        f"target `{shown_id(r.target)}` was updated at {target.when}, "
                        f"after this proposal (proposed_at {f.when}); review the target's current "
                        "content and re-propose",
                        *r.span,
                        field=r.field,
                        target=r.target,
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
        others = sorted({p for t in f.tokens for p in self._proposals.get(t, ()) if p != path})
        if others:
            own = f"`{shown_id(f.ident)}`" if f.ident else "of this packet"
            out.append(
                finding(
                    "duplicate_identity",
                    f"proposal identity {own} (id or file name) is also used by "
                    f"{len(others)} other packet(s) ("
                    + ", ".join(_name(p) for p in others[:3])
                    + "); identities are unique across "
                    "pending and resolved packets: rename this packet",
                    *f.ident_span,
                    others=others,
                )
            )

    def _replacement_partners(self, f: FileFacts) -> set[str]:
        """The files ``f`` is the replacement of, or replaced by (:func:`_replaces`); looked up through the
        reference tables, so a record with thousands of twins costs nothing more."""
        if f.pending and f.action == "supersede":
            return {p for r in f.refs for p in self._records.get(r.target, ()) if _replaces(f, self._facts[p])}
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


def _internal_error(err: BaseException | None, path: str) -> Finding:
    """The ``internal_error`` finding of a file whose cross-file evaluation raised ``err`` (logged here), or whose
    facts could not be read (``None``: logged where they were made)."""
    from ..judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

    if err is None:
        return internal_error(RuntimeError("cross-file facts unavailable"), path, log=False)
    return internal_error(err, path)


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


def _dup_eligible(f: FileFacts) -> bool:
    """Files that take part in ``duplicate_content``: active current-profile records and pending create or
    supersede proposals (a tombstone packet's body is a reason, not memory content)."""
    if f.legacy or not f.content:
        return False
    return (f.kind == "record" and f.status == "active") or (f.pending and f.action in ("create", "supersede"))


def git_plane_files(memzoi_dir: Path) -> list[Path]:
    """Records and packets of a ``.memzoi`` directory (Memzoi's walk: no hidden files, no symlinks, no
    ``index.md``/``log.md``), sorted."""
    from ..judge.workspace import walk  # noqa: PLC0415 lazy: start-up

    out: list[Path] = []
    for sub in ("records", "proposals"):
        out.extend(walk(memzoi_dir / sub).files)
    return sorted(out)


__all__ = [
    "FileFacts",
    "Ref",
    "Workspace",
    "facts_from_analysis",
    "identity_token",
    "git_plane_files",
]
