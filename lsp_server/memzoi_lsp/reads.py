"""The session's reads: whether the server diagnoses a document, what it shows on it, and a file's verdict in its
project. Each takes the session and changes nothing: no project state, no cache, no publish (the editor's text
enters the project state by :meth:`memzoi_lsp.server.MemzoiServer.apply_editor`, at the editor's events;
docs/architecture.md, "Features over snapshots"). :class:`memzoi_lsp.server.MemzoiServer` answers its read methods
with these; not a feature (it imports none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memzoi.judge.workspace import Role

from . import resident_view, routing_view

if TYPE_CHECKING:
    from memzoi.base.findings import Finding
    from memzoi.project.verdict import FileVerdict, ProjectContext

    from .documents import Snapshot
    from .project import Project
    from .session import ReadSession


def is_memzoi(ls: ReadSession, snap: Snapshot) -> bool:
    """Whether the server diagnoses ``snap``: every file below a ``.memzoi`` directory (records, packets,
    reserved and stray files: all are committed and scanned for secrets), or, outside a ``.memzoi`` tree,
    files whose frontmatter says ``kind: memory`` or ``kind: proposal``. Other Markdown files are left
    alone."""
    placement = snap.analysis.placement
    if placement.role is not Role.OTHER or placement.memzoi_dir is not None:
        return True
    if snap.analysis.kind in ("record", "proposal"):
        return True
    return resident_view.file_of(ls, snap.path) is not None or routing_view.input_root(ls, snap) is not None


def findings_for(ls: ReadSession, snap: Snapshot) -> list[Finding]:
    """What the editor shows on ``snap``: its verdict's findings (:func:`memzoi.project.verdict.judge`), or a resident
    file's findings, or none for an open buffer whose file is gone from disk."""
    where = resident_view.file_of(ls, snap.path) if snap.analysis.placement.memzoi_dir is None else None
    if where is not None:
        return resident_view.findings_for(ls, snap, where)
    if (root := routing_view.input_root(ls, snap)) is not None:
        return routing_view.findings_for(ls, snap, root)
    if ls.gone_from_disk(snap):
        return []
    return list(verdict(ls, snap).findings)


def verdict(ls: ReadSession, snap: Snapshot) -> FileVerdict:
    """The verdict of ``snap`` in its project: the same function ``memzoi check`` uses, fed the editor's text
    for an open document, the project's git and ledger oracles, the project's ``[rules]`` with the editor
    settings on top, and the cross-file findings the project's graph holds for this very text
    (:func:`memzoi.runs.projectview.cross_findings`: none before the first scan, none for text the graph has not
    taken in yet). A read: it changes no state and publishes nothing (the editor's text enters the state by
    :meth:`memzoi_lsp.server.MemzoiServer.apply_editor`, at the editor's events).
    """
    from memzoi.judge.config import load_config  # noqa: PLC0415 lazy: start-up
    from memzoi.project.verdict import ProjectContext, judge  # noqa: PLC0415 lazy: start-up
    from memzoi.runs.projectview import cross_findings  # noqa: PLC0415 lazy: start-up

    project = ls.project_for(snap.path)
    placement = snap.analysis.placement
    if project is None:  # outside any project (a `kind: memory` file elsewhere): its analysis alone
        config = load_config(placement.memzoi_dir).config
        ctx = ProjectContext.of(placement.memzoi_dir, config=config, rules=ls.settings.over(config.effective_rules))
        return judge(snap.path, snap.analysis, ctx)
    key = project.key_of(snap.path) if snap.path else snap.uri  # one key per file, whatever the client sent
    return judge(snap.path, snap.analysis, context(ls, project), cross=cross_findings(project, key, snap.analysis))


def context(ls: ReadSession, project: Project) -> ProjectContext:
    """The project's verdict context now: its configuration and ``[rules]`` under the editor settings, its git
    and ledger oracles."""
    from memzoi.judge.config import load_config  # noqa: PLC0415 lazy: start-up
    from memzoi.project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up

    config = load_config(project.memzoi_dir).config
    return ProjectContext.of(
        project.memzoi_dir,
        config=config,
        rules=ls.settings.over(config.effective_rules),
        git=project.git,
        ledger=project.ledger,
    )
