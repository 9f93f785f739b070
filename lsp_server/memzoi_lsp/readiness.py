"""Wiring of the core's one can-apply rule (:mod:`memzoi.lifecycle.readiness`) for the hover, code actions and
code lenses: the server supplies the findings and cross-file facts it already holds; the core decides."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memzoi.judge.workspace import Role

from .documents import Snapshot, path_to_uri

if TYPE_CHECKING:
    from memzoi.lifecycle.readiness import Readiness

    from .session import ReadSession


def of(ls: ReadSession, snap: Snapshot) -> Readiness | None:
    """Readiness of the pending packet ``snap`` (``None`` for anything else, or outside a project)."""
    from memzoi.lifecycle.readiness import packet_readiness  # noqa: PLC0415 lazy: start-up
    from memzoi.runs.projectview import resolved_holder  # noqa: PLC0415 lazy: start-up

    if snap.analysis.placement.role is not Role.PENDING or snap.path is None:
        return None
    project = ls.project_for(snap.path)
    if project is None:
        return None
    findings = ls.findings_for(snap)
    holder = resolved_holder(project, path_to_uri(snap.path))
    return packet_readiness(project.root, snap.analysis, findings, identity_resolved=holder)
