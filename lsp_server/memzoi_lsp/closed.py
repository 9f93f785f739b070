"""Findings of the files the editor has not opened, from the compact verdicts the scan keeps
(:class:`memzoi.stores.firststage.FirstStage`, in ``Project.verdicts``).

The second stage of the verdict (:func:`memzoi.project.verdict.settle`) runs on a compact verdict with the project's
context, as ``memzoi check`` runs it on a cache entry, so a closed file shows check's findings without its
analysis in memory. The file's text is read only when there are findings to place (positions in the client's
encoding need the line's text). A compact verdict whose file changed on disk (another stat, another length) is
not used: the caller then analyses the file (:meth:`memzoi_lsp.documents.Documents.snapshot`), as for a file the
scan has not reached. Both functions only read (issue 32): the stale verdict is dropped where the change enters
the project's state, by the watcher's batch (:meth:`memzoi.runs.projectstate.ProjectState.apply_events`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import blake3

from .documents import uri_to_path

if TYPE_CHECKING:
    from memzoi.base.findings import Finding
    from memzoi.project.verdict import ProjectContext
    from memzoi.read.text import LineIndex
    from memzoi.stores.firststage import FirstStage

    from .project import Project
    from .session import DiagnosticsSession


def lookup(ls: DiagnosticsSession, uri: str) -> tuple[Project, FirstStage, str] | None:
    """The project, current compact verdict and key URI of the closed file ``uri``; ``None`` when the editor has
    it open, the scan holds none, or its file changed since (kept: a read changes no state)."""
    path = uri_to_path(uri)
    project = ls.project_for(path)
    if (
        path is None
        or project is None
        or not project.verdicts
        or ls.docs.is_open(uri)
        or ls.docs.open_uri_for(path) is not None
    ):
        return None  # open under this or another spelling of its path: the editor's text governs
    key = project.key_of(path)
    held = project.verdicts.get(key)
    if held is None or not held.current():
        return None
    return project, held, key


def findings(
    ls: DiagnosticsSession, project: Project, held: FirstStage, key: str, ctx: ProjectContext | None = None
) -> tuple[str | LineIndex, list[Finding]] | None:
    """``(text, findings)`` of the file of ``held``: its verdict's findings in ``project`` (``ctx``, by default
    :meth:`DiagnosticsSession.context`: the editor settings over the project's ``[rules]``, git, ledger; and the
    cross-file findings once the first scan is done) and its text, read from disk only when there are findings
    (``""`` otherwise) and their positions need it (else the text's line index stands for it:
    :meth:`memzoi.stores.firststage.FirstStage.plain_lines`); ``None`` when the text on disk is no longer the one
    ``held`` was made from (the caller then analyses the file; ``held`` stays until the watcher's batch takes the
    change in)."""
    settle, decode, cross_findings = _second_stage()
    read: list[str] = []

    def text() -> str:
        if not read:
            try:
                with open(held.path, "rb") as fh:
                    read.append(decode(fh.read()).text)
            except OSError:
                read.append("")
        return read[0]

    cross = cross_findings(project, key)  # the graph holds this verdict's facts (the scan or the watcher fed them)
    found = settle(held.path, held.first, ctx or ls.context(project), text=text, cross=cross)
    if not found:
        return "", []
    lines = held.plain_lines(o for f in found for o in (f.start, max(f.start, f.end)))
    if lines is not None:
        return lines, found
    if len(text()) != held.length:  # changed between the stat and the read: not what the findings index
        return None
    return text(), found


@cache
def _second_stage() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """``(settle, decode, cross_findings)`` (:func:`memzoi.project.verdict.settle`, :func:`memzoi.read.text.decode`,
    :func:`memzoi.runs.projectview.cross_findings`), imported at the first closed file and kept: the scan asks
    :func:`findings` once per file, and an import statement costs 1.5–2 µs at every call (issue 29, warm start)."""
    from memzoi.project.verdict import settle  # noqa: PLC0415 lazy: start-up
    from memzoi.read.text import decode  # noqa: PLC0415 lazy: start-up
    from memzoi.runs.projectview import cross_findings  # noqa: PLC0415 lazy: start-up

    return settle, decode, cross_findings


def result_id(ls: DiagnosticsSession, held: FirstStage) -> str:
    """A pull result id of a closed file known by ``held``: changes with its bytes, the settings and the
    cross-file state."""
    h = blake3.blake3(f"compact|{held.revision}|{ls.settings_generation}|{ls.crossfile_generation}".encode())
    return h.hexdigest()[:32]


__all__ = ["findings", "lookup", "result_id"]
