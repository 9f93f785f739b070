"""The second stage of ``memzoi check``'s verdicts (:func:`settle`: git visibility, ledger and cross-file findings,
graded by the project's rules), each finding placed in its file: run by a full check
(:func:`memzoi.runs.check.settle_report`) and by a partial one (:func:`memzoi.runs.check.judge_files`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .checkreport import Located

if TYPE_CHECKING:
    from ..base.findings import Finding
    from ..project.admission import GitVisibility
    from ..project.verdict import ProjectContext
    from .checkfiles import Checked


def project_context(md: str, visibility: dict[str, GitVisibility]) -> ProjectContext:
    """The context of the second stage for the project of ``md``: its rules, the visibility git gave for its
    files, and its ledger (read, never created)."""
    from ..ledger.view import LedgerView  # noqa: PLC0415 lazy: start-up
    from ..project.gitfacts import GitFacts  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up

    root = os.path.dirname(md)
    git = GitFacts(root, history=False)  # the workers explained stale attestations already
    git.set_visibility(visibility)
    return ProjectContext.of(md, git=git, ledger=LedgerView(Path(root), live=False))  # read once per run


def settle(
    contexts: dict[str, ProjectContext],
    stages: list[Checked],
    extra: dict[str, list[Finding]],
    crossed: dict[str, list[Finding]],
) -> list[Located]:
    """The second stage of each verdict (:func:`memzoi.project.verdict.settle`: git visibility, ledger and cross-file
    findings, graded by the project's rules) under the context of its ``.memzoi`` directory in ``contexts``, each
    finding placed; ``extra``: internal errors of the parent's own work per path."""
    from ..project.verdict import Local, ProjectContext, settle as second_stage  # noqa: PLC0415 lazy: start-up

    out: list[Located] = []
    plain = ProjectContext.of(None)
    for r in stages:
        stage = r.stage
        ctx = contexts.get(stage.memzoi_dir or "") or plain
        first = stage.first
        if stage.path in extra:
            first = Local(first.own + extra[stage.path], first.role, first.opening, first.attested, first.canonical)
        try:
            found = second_stage(stage.path, first, ctx, text=stage.read_text, cross=crossed.get(stage.path, ()))
        except Exception as err:  # the barrier
            from ..judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

            found = [internal_error(err, stage.path)]
        if found:  # most files are clean: index lines only where a position is needed
            index = stage.lines()
            out.extend(Located(r.display, f, index.position(f.start), index.position(f.end)) for f in found)
    return out


__all__ = ["project_context", "settle"]
