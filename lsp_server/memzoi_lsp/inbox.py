"""``memzoi.proposals.list``: the pending proposal packets of the workspace, each with the core's verdict
(:mod:`memzoi.lifecycle.readiness`, the one can-apply rule the hover, code actions and code lenses follow), for the
editors' inbox views and status counts. Protocol glue only: the server gathers the facts it already holds and the
core decides.

Argument: ``{"uri"?}`` (only that file's project; default: every project of the workspace). Result::

    {"scanning": bool,   # a project's first scan has not ended: cross-file blockers may still be missing
     "proposals": [{"id", "title", "title_withheld", "action", "target", "path", "uri", "sensitivity",
                    "content_class", "proposed_by", "proposed_at", "can_apply", "blocked_by", "statement",
                    "blockers": [{"code", "message"}], "can_route_local"}]}

Rows are the core's (:mod:`memzoi.lifecycle.pending`, as ``memzoi proposals list --json`` and the agent's
``list_pending`` give them) plus the ``uri``. ``path`` is relative to the project root; messages never quote secret
text (they come from findings), and a packet whose detectors fire has its title withheld. Packets are read from disk on each call (an open document's text governs it), so
a packet written a moment ago is listed before any watcher reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memzoi.judge.workspace import walk

from . import readiness
from .commanding import CommandGroup, command, target_path
from .documents import path_to_uri

if TYPE_CHECKING:
    from .project import Project
    from .session import CommandSession

LIST = "memzoi.proposals.list"


def rows(ls: CommandSession, project: Project) -> list[dict[str, Any]]:
    """One row per pending packet of ``project`` (file name order): the core's row
    (:func:`memzoi.lifecycle.pending.pending_packet`) of the packet's verdict, with its ``uri``."""
    from memzoi.lifecycle.layout import PENDING  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.pending import pending_packet  # noqa: PLC0415 lazy: start-up

    out: list[dict[str, Any]] = []
    for path in walk(project.root / PENDING).files:
        snap = ls.docs.snapshot(path_to_uri(path))
        if snap is None:
            continue  # gone between the walk and the read
        verdict = readiness.of(ls, snap)
        if verdict is None:
            continue
        row = pending_packet(project.root, path, snap.analysis, ls.findings_for(snap), verdict)
        out.append({**row.to_json(), "uri": snap.uri})
    return out


@command(LIST)
async def listing(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The pending packets with what blocks each (see the module docstring)."""
    if arg.get("uri"):
        root, _path = target_path(ls, arg)
        projects = [ls.projects[root]] if root in ls.projects else []
    else:
        projects = [ls.projects[r] for r in sorted(ls.projects)]
    return {
        "scanning": any(not p.scanned for p in projects),
        "proposals": [row for p in projects for row in rows(ls, p)],
    }


#: ``memzoi.proposals.list``, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup("inbox", {LIST: listing})
