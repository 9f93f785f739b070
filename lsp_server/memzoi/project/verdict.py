"""One verdict of a file: everything every surface says about it, assembled in one place.

``memzoi check``, the language server, the index, ``doctor`` and the MCP server all show a file's findings; none
of them assembles findings itself. A :class:`FileVerdict` is the immutable record of everything known about one
file: its analysis (with a stale attestation explained from git), its admission (canonical path, git review
visibility, Memzoi's refusals), its ledger findings, its cross-file findings, all graded by the project's
``[rules]`` (plus editor settings in the server) and sorted. It comes from :func:`judge`, which takes the file's
analysis and a :class:`ProjectContext` carrying ``now``, the configuration and rules, and the injectable git
(:class:`~memzoi.project.gitfacts.GitFacts`) and ledger (:class:`~memzoi.ledger.LedgerView`) oracles.

A batch caller that analyses files in worker processes splits :func:`judge` in its two stages: :func:`local`
(what depends only on the file, its configuration and git history: run where the file is read) and
:func:`settle` (git visibility, ledger, cross-file findings and grading: run where the whole project is known).
``judge`` is exactly ``settle(local(...))``, so both routes give the same findings.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.findings import Finding
from ..base.pathnorm import absolute
from ..judge.config import load_config
from ..judge.config_model import MemzoiConfig
from ..judge.rules import DEFAULT_RULES, Rules
from ..judge.workspace import Role
from ..ledger.view import LedgerView
from .admission import (
    GitVisibility,
    attestation_states,
    canonical_path_findings,
    is_attested,
    opening_span,
    visibility_findings,
)
from .gitfacts import GitFacts
from .refusals import configured, refusals

if TYPE_CHECKING:  # a check served from the verdict cache loads no analysis
    from ..judge.analysis import Analysis

Text = str | Callable[[], str]


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.start, f.end, f.code))


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """What a file's verdict depends on beyond its own bytes.

    ``memzoi_dir``: the absolute ``.memzoi`` directory of the project (``None`` for a file outside any project:
    its verdict is its analysis alone). ``now``: the clock of retention and current-assertion findings.
    ``config``: the project configuration the analysis used. ``rules``: how findings are graded (the project's
    ``[rules]``; the server adds the editor settings). ``git`` and ``ledger``: the oracles; ``None`` means no
    git facts (visibility unknown, no committed version) and no ledger findings.
    """

    memzoi_dir: str | None
    now: datetime
    config: MemzoiConfig | None
    rules: Rules
    git: GitFacts | None = None
    ledger: LedgerView | None = None

    @classmethod
    def of(
        cls,
        memzoi_dir: str | os.PathLike[str] | None,
        *,
        now: datetime | None = None,
        config: MemzoiConfig | None = None,
        rules: Rules | None = None,
        git: GitFacts | None = None,
        ledger: LedgerView | None = None,
    ) -> ProjectContext:
        """A context for the project of ``memzoi_dir``, reading its configuration when ``config`` is not given
        and taking the rules of that configuration when ``rules`` is not given."""
        md = os.path.abspath(memzoi_dir) if memzoi_dir is not None else None
        if config is None and md is not None:
            config = load_config(md).config
        if rules is None:
            rules = config.effective_rules if config is not None else DEFAULT_RULES
        if now is None:
            from ..base.clock import utc_now  # noqa: PLC0415 lazy: start-up

            now = utc_now()
        return cls(md, now, config, rules, git, ledger)

    def relative(self, path: str | os.PathLike[str] | None) -> str | None:
        """``path`` relative to the ``.memzoi`` directory, ``/``-separated, as ``[rules]`` patterns match it."""
        if path is None or self.memzoi_dir is None:
            return None
        return os.path.relpath(os.path.abspath(path), self.memzoi_dir).replace(os.sep, "/")


@dataclass(slots=True)
class Local:
    """The first stage of a verdict (:func:`local`): the file's own findings (analysis, explained stale
    attestation, canonical path), ungraded, and the three facts git visibility findings need."""

    own: list[Finding]
    role: Role
    opening: tuple[int, int]
    attested: bool
    canonical: int = 0  # how many of ``own`` (at its end) are canonical-path findings of admission

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # `memzoi check` workers send one per file: positional fields, and the role as its value, pickle in half
        # the time of the default slot state with the enum's own reduction (``tests/test_check_parallel.py``).
        return (_local, (self.own, self.role.value, self.opening, self.attested, self.canonical))


def _local(own: list[Finding], role: str, opening: tuple[int, int], attested: bool, canonical: int) -> Local:
    """A :class:`Local` from its pickled form (:meth:`Local.__reduce__`)."""
    return Local(own, Role(role), opening, attested, canonical)


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """Everything known about one file (see the module docstring).

    ``findings``: what every surface shows, graded and sorted by position (spans are code-point offsets of
    ``analysis.text``). ``refusals``: Memzoi's admission refusal codes in its check order (ungraded: our
    ``[rules]`` never change what Memzoi refuses). ``visibility``: the git review visibility used.
    """

    path: str | None
    analysis: Analysis
    findings: tuple[Finding, ...]
    visibility: GitVisibility
    refusals: tuple[str, ...]

    @property
    def text(self) -> str:
        """The analysed text; every span indexes into it."""
        return self.analysis.text

    @property
    def admitted(self) -> bool:
        """True when Memzoi would admit the file (no refusal)."""
        return not self.refusals


def explain_stale(path: str | os.PathLike[str] | None, analysis: Analysis, git: GitFacts | None) -> Analysis:
    """``analysis`` with a stale attestation explained from git: when the committed version of the record still
    verifies, its ``stale_attestation`` finding says exactly which semantic fields changed since the decision
    (e.g. "changed since decision time: `body`"). Returns a new analysis (the given one is never changed); the
    same one when there is nothing to explain or git cannot tell."""
    att = analysis.attestation
    stale = attestation_states().STALE
    if git is None or path is None or att is None or att.state is not stale or analysis.model is None:
        return analysis
    from ..judge.analysis import record_id_of  # noqa: PLC0415 lazy: start-up - only a stale attestation gets here
    from ..judge.attestation import check_attestation  # noqa: PLC0415 lazy: start-up

    record_id = record_id_of(analysis)
    known = git.reviewed_projection(path, record_id) if record_id else None
    if known is None:
        return analysis
    refined = check_attestation(analysis.document, record_id, valid=True, known=known)
    if refined.state is not stale or not refined.findings:
        return analysis
    findings = _sorted([f for f in analysis.findings if f.code != "stale_attestation"] + refined.findings)
    return dataclasses.replace(analysis, attestation=refined, findings=findings)


def local(
    path: str | os.PathLike[str] | None,
    analysis: Analysis,
    ctx: ProjectContext,
    links: dict[str, Any] | None = None,
    *,
    mode: int | None = None,
) -> tuple[Analysis, Local]:
    """The first stage of :func:`judge`: the analysis with its stale attestation explained, and its own findings.
    ``links`` is an optional per-scan cache of symlink answers, ``mode`` the ``st_mode`` of an ``lstat`` of
    ``path`` the caller already made (:func:`memzoi.project.admission.canonical_path_findings`)."""
    analysis = explain_stale(path, analysis, ctx.git)
    own = list(analysis.findings)
    canonical = []
    if path is not None and analysis.placement.memzoi_dir is not None:
        canonical = canonical_path_findings(path, analysis, links, mode=mode)
    return analysis, Local(
        own + canonical, analysis.placement.role, opening_span(analysis), is_attested(analysis), len(canonical)
    )


def _admission(
    path: str | os.PathLike[str] | None, first: Local, ctx: ProjectContext
) -> tuple[GitVisibility, list[Finding]]:
    if path is None or ctx.memzoi_dir is None:
        return GitVisibility.UNKNOWN, []
    vis = ctx.git.visibility(path) if ctx.git is not None else GitVisibility.UNKNOWN
    return vis, visibility_findings(first.role, first.opening, first.attested, vis)


def settle(
    path: str | os.PathLike[str] | None, first: Local, ctx: ProjectContext, *, text: Text, cross: Sequence[Finding] = ()
) -> list[Finding]:
    """The second stage of :func:`judge`: ``first``'s findings plus git visibility, ledger and ``cross`` findings,
    graded by ``ctx.rules`` and sorted. ``text`` (the analysed text, or a function giving it) anchors ledger
    findings and is only asked for when the ledger touched the file."""
    _, admission = _admission(path, first, ctx)
    found = first.own + admission
    if path is not None and ctx.ledger is not None and ctx.memzoi_dir is not None:
        found += ctx.ledger.findings(os.fspath(path), text)
    found += cross
    if found and not ctx.rules.is_default:
        found = ctx.rules.apply(found, ctx.relative(path))
    return _sorted(found)


def judge(
    path: str | os.PathLike[str] | None,
    analysis: Analysis,
    ctx: ProjectContext,
    *,
    cross: Sequence[Finding] = (),
    links: dict[str, Any] | None = None,
) -> FileVerdict:
    """The verdict of the file at ``path`` (``None``: a text with no file) whose analysis is ``analysis``, in the
    project ``ctx`` describes, with its cross-file findings ``cross`` (spans into the same text, from
    :meth:`memzoi.project.crossfile.Workspace.findings_for`). Never raises for a well-formed analysis."""
    analysis, first = local(path, analysis, ctx, links)
    return verdict_of(path, analysis, first, ctx, cross=cross)


def verdict_of(
    path: str | os.PathLike[str] | None,
    analysis: Analysis,
    first: Local,
    ctx: ProjectContext,
    *,
    cross: Sequence[Finding] = (),
) -> FileVerdict:
    """:func:`judge` of a file whose first stage is done: ``analysis`` and ``first`` are what :func:`local` gave
    (so a caller that keeps the first stage, as the server's scan does, never runs it twice)."""
    vis, admission = _admission(path, first, ctx)
    findings = settle(path, first, ctx, text=analysis.text, cross=cross)
    # Memzoi refuses a record for any of its findings, anything else only for its admission findings.
    judged = (
        first.own + admission
        if first.role is Role.RECORD
        else first.own[len(first.own) - first.canonical :] + admission
    )
    if judged and not ctx.rules.is_default:
        judged = configured(judged, ctx.rules, ctx.relative(path))
    return FileVerdict(
        absolute(os.fspath(path)) if path is not None else None, analysis, tuple(findings), vis, tuple(refusals(judged))
    )


def graded(path: str | os.PathLike[str] | None, found: Sequence[Finding], ctx: ProjectContext) -> tuple[Finding, ...]:
    """``found`` (findings of a file that is not a record or packet, such as a runtime-plane input file,
    :func:`memzoi.lifecycle.routing.input_verdict`) graded by ``ctx.rules`` and sorted, as :func:`settle` grades a
    record's."""
    found = list(found)
    if found and not ctx.rules.is_default:
        found = ctx.rules.apply(found, ctx.relative(path))
    return tuple(_sorted(found))


__all__ = [
    "FileVerdict",
    "Local",
    "ProjectContext",
    "explain_stale",
    "graded",
    "judge",
    "local",
    "settle",
    "verdict_of",
]
