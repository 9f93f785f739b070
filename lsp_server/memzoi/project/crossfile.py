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

from ..base.findings import Finding
from .crossrules import CrossRules, cross_error, dup_eligible, ref_key

# Re-exported (also imported from here).
from .filefacts import (
    FileFacts as FileFacts,
    Ref as Ref,
    facts_from_analysis as facts_from_analysis,
    identity_token as identity_token,
)

if TYPE_CHECKING:
    from ..judge.analysis import Analysis


class Workspace(CrossRules):
    """Per-file facts of a workspace and the cross-file findings derived from them.

    Keys are any stable path strings (the server uses URIs or absolute paths; ``memzoi check`` display paths).
    All methods are O(files affected by the change), not O(workspace).
    """

    def __init__(self) -> None:
        self._facts: dict[str, FileFacts] = {}
        self._findings: dict[str, list[Finding]] = {}
        self._records: dict[str, str | set[str]] = {}  # record id -> the path defining it, or the paths (several)
        self._proposals: dict[str, set[str]] = {}  # identity token -> packet paths
        self._referrers: dict[str, set[str]] = {}  # id -> paths referring to it
        # content hash -> sorted paths of the files that take part in duplicate checks (kept sorted so that
        # naming the first twins is O(1) even when thousands of files share one body)
        self._content: dict[str, list[str]] = {}
        # paths held by :meth:`load` and not evaluated yet, and the content groups it appended to unsorted
        self._pending: set[str] = set()
        self._unsorted: set[str] = set()

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
        self._settle()
        self._reevaluate(paths)
        return {p: list(self._findings[p]) for p in paths if p in self._findings}

    def load(self, path: str, facts: FileFacts) -> None:
        """Hold ``facts`` for ``path`` without evaluating anything yet: a bulk load (the language server's first
        scan, which shows no cross-file finding before it has seen every file, :mod:`memzoi.runs.projectview`).
        The loaded files, and the held files their facts can affect, are evaluated once, together, at the next
        read or change (:meth:`findings_for`, :meth:`evaluate`, :meth:`update`, :meth:`remove`), which then
        answers as if each had been given to :meth:`update` (issue 29, warm start: 11,000 updates one by one cost
        4–5× one evaluation of them all). A path already held is updated at once."""
        if path in self._facts:
            self.update(path, facts)
            return
        self._facts[path] = facts
        self._index(path, facts, sort=False)
        self._pending.add(path)
        if facts.content and dup_eligible(facts):
            self._unsorted.add(facts.content)

    def _settle(self) -> set[str]:
        """Evaluate what :meth:`load` left: the loaded paths, the held paths their facts can affect (referrers,
        identities, duplicate groups); returns the paths whose findings changed. Nothing when nothing is pending."""
        if not self._pending:
            return set()
        pending, self._pending = self._pending, set()
        groups, self._unsorted = self._unsorted, set()
        for h in groups:
            if h in self._content:
                self._content[h].sort()
        if 2 * len(pending) >= len(self._facts):  # mostly loaded files: evaluating all held is as cheap
            affected: set[str] = set(self._facts)
        else:
            affected = set(pending)
            for p in pending:
                affected |= self._dependents(self._facts.get(p))
            for h in groups:
                affected.update(self._content.get(h, ()))
        return self._reevaluate(affected)

    # -- public API ------------------------------------------------------------------------------------------

    def update(self, path: str, analysis: Analysis | FileFacts) -> set[str]:
        """Set the facts of ``path`` (from an analysis or ready-made facts) and re-evaluate what it affects.

        Returns the paths whose cross-file findings changed (possibly including ``path``); the caller
        republishes diagnostics for exactly those.
        """
        facts = analysis if isinstance(analysis, FileFacts) else facts_from_analysis(analysis)
        settled = self._settle()
        old = self._facts.get(path)
        if old == facts:
            return settled
        affected = {path} | self._dependents(old) | self._dependents(facts)
        groups = self._groups(old, facts)
        if old is not None:
            self._unindex(path, old)
        self._facts[path] = facts
        self._index(path, facts)
        affected |= self._twins_affected(groups)
        return settled | self._reevaluate(affected)

    def remove(self, path: str) -> set[str]:
        """Forget ``path`` (deleted, renamed away or ignored); returns the paths whose findings changed, which
        includes ``path`` when it had cross-file findings (they must be cleared)."""
        settled = self._settle()
        old = self._facts.pop(path, None)
        if old is None:
            return settled
        groups = self._groups(old)
        self._unindex(path, old)
        affected = self._dependents(old) | self._twins_affected(groups)
        affected.discard(path)
        changed = settled | self._reevaluate(affected)
        if self._findings.pop(path, []):
            changed.add(path)
        return changed

    def findings_for(self, path: str) -> list[Finding]:
        """Current cross-file findings of ``path``, sorted by position (empty for unknown paths)."""
        self._settle()
        return list(self._findings.get(path, ()))

    def facts(self, path: str) -> FileFacts | None:
        """The facts held for ``path``."""
        return self._facts.get(path)

    def paths(self) -> list[str]:
        """Every path held, sorted."""
        return sorted(self._facts)

    def record_paths(self, record_id: str) -> list[str]:
        """Paths of the record(s) with id ``record_id`` (for go-to-definition), sorted."""
        return sorted(self._defining(record_id))

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
            if f is not None and f.content and dup_eligible(f):
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
            held = self._records.get(f.ident)
            if held is None or held == path:
                self._records[f.ident] = path
            elif isinstance(held, str):
                self._records[f.ident] = {held, path}
            else:
                held.add(path)
        for t in f.tokens:
            self._proposals.setdefault(t, set()).add(path)
        for r in f.refs:
            self._referrers.setdefault(ref_key(r), set()).add(path)
        if f.content and dup_eligible(f):
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
            held = self._records.get(f.ident)
            if held == path:
                del self._records[f.ident]
            elif isinstance(held, set):
                held.discard(path)
                if len(held) == 1:  # one left (a set holds two or more): held as itself again
                    self._records[f.ident] = held.pop()
        for t in f.tokens:
            drop(self._proposals, t)
        for r in f.refs:
            drop(self._referrers, ref_key(r))
        if f.content and dup_eligible(f):
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
                new = [cross_error(err, p)]
            old = self._findings.get(p, [])
            if [(x.code, x.message, x.start, x.end) for x in new] != [(x.code, x.message, x.start, x.end) for x in old]:
                changed.add(p)
            if new:
                self._findings[p] = new
            else:
                self._findings.pop(p, None)
        return changed


def related_keys(f: FileFacts) -> list[str]:
    """The keys by which the cross-file findings of the file with facts ``f`` and of other files depend on each
    other: its record id, its identity tokens, the key of each reference (:func:`memzoi.project.crossrules.ref_key`)
    and, for a file taking part in duplicate checks, its content hash (prefixed ``"\0c"``). Every table a
    :class:`Workspace` looks a file's rules up in is keyed by one of these, so two files whose findings can depend
    on each other share a key; sharing one does not mean they do (the relation is wider than needed, never
    narrower). So a change of one file's facts can change the findings of the files sharing a key with its old
    or new facts only, and a file's findings are those of a workspace holding every file that shares a key with
    it (what ``memzoi check`` re-judges after a few files changed, :mod:`memzoi.runs.checkpartial`)."""
    keys = set(f.tokens)
    if f.ident:
        keys.add(f.ident)
    keys.update(ref_key(r) for r in f.refs)
    if f.content and dup_eligible(f):
        keys.add("\0c" + f.content)
    return sorted(keys)


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
    "related_keys",
]
