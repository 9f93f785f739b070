"""Reading a project's state for a request: what a hover, a code action, a lens or a diagnostics pull may know of
the project (:class:`memzoi.runs.projectstate.ProjectState`) without changing it.

A read never feeds the cross-file graph and never makes another file's findings change: only the three entry
points of the state do that (:meth:`~memzoi.runs.projectstate.ProjectState.apply_events` for the disk,
:meth:`~memzoi.runs.projectstate.ProjectState.apply_editor` for an editor's buffer, ``apply_scan`` for the first scan's
files). So what a read shows is the graph as the last change left it, under two rules written here once:

- until the project's first scan has seen every file (``state.scanned``), cross-file findings and facts are
  withheld: a target later in the scan would otherwise show as dangling for a moment;
- a file's cross-file findings are shown only for the text they were computed from: their spans index that text,
  so for other text (a buffer changed since the graph took it in) there are none until the change is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..base.findings import Finding
    from ..judge.analysis import Analysis
    from .projectstate import ProjectState


def cross_findings(state: ProjectState, key: str, analysis: Analysis | None = None) -> list[Finding]:
    """The cross-file findings of the file ``key`` as the graph holds them, or ``[]`` before the first scan is
    complete. With ``analysis`` (the text a caller is about to show them on), ``[]`` too unless the graph's facts
    of ``key`` are that analysis's (see the module docstring); without it the caller vouches for the text (a
    compact verdict whose facts the graph took in)."""
    if not state.scanned:
        return []
    if analysis is not None and not state.holds(key, analysis):
        return []
    return state.crossfile.findings_for(key)


def resolved_holder(state: ProjectState, key: str) -> str | None:
    """The resolved packet that holds the identity of the pending packet ``key``
    (:meth:`memzoi.project.crossfile.Workspace.resolved_holder`), or ``None``; ``None`` before the first scan is complete,
    when the graph may not hold every resolved packet yet."""
    return state.crossfile.resolved_holder(key) if state.scanned else None


__all__ = ["cross_findings", "resolved_holder"]
