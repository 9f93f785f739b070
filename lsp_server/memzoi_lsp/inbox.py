"""``memzoi.proposals.list``: the pending proposal packets of the workspace, each with the core's verdict
(:mod:`memzoi.lifecycle.readiness`, the one can-apply rule the hover, code actions and code lenses follow), for the
editors' inbox views and status counts. Protocol glue only: the server gathers the facts it already holds and the
core decides.

Argument: ``{"uri"?}`` (only that file's project; default: every project of the workspace). Result::

    {"scanning": bool,   # a project's first scan has not ended: cross-file blockers may still be missing
     "proposals": [{"id", "title", "action", "target", "path", "uri", "can_apply", "statement",
                    "blockers": [{"code", "message"}], "can_route_local"}]}

``path`` is relative to the project root; messages never quote secret text (they come from findings), and titles
are scrubbed of detected secrets. Packets are read from disk on each call (an open document's text governs it), so
a packet written a moment ago is listed before any watcher reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memzoi.workspace import walk

from . import readiness
from .documents import path_to_uri
from .lifecycle import command, target_path

if TYPE_CHECKING:
    from .server import MemzoiServer, Project

LIST = "memzoi.proposals.list"


def _text(value: Any) -> str | None:
    from memzoi.safety.redact import scrub

    return scrub(value) if isinstance(value, str) and value.strip() else None


def rows(ls: "MemzoiServer", project: "Project") -> list[dict[str, Any]]:
    """One row per pending packet of ``project`` (file name order), with the core's verdict."""
    from memzoi.lifecycle.layout import PENDING

    out: list[dict[str, Any]] = []
    for path in walk(project.root / PENDING).files:
        snap = ls.docs.snapshot(path_to_uri(path))
        if snap is None:
            continue  # gone between the walk and the read
        verdict = readiness.of(ls, snap)
        if verdict is None:
            continue
        data = snap.analysis.document.data if isinstance(snap.analysis.document.data, dict) else {}
        block = data.get("proposal") if isinstance(data.get("proposal"), dict) else {}
        out.append({
            "id": _text(data.get("id")) or path.stem,
            "title": _text(data.get("title")) or path.stem,
            "action": block.get("action") if isinstance(block.get("action"), str) else None,
            "target": _text(block.get("target")),
            "path": path.relative_to(project.root).as_posix(),
            "uri": snap.uri,
            "can_apply": verdict.can_apply,
            "statement": verdict.statement(),
            "blockers": [{"code": b.code, "message": b.message} for b in verdict.blockers],
            "can_route_local": verdict.can_route_local,
        })
    return out


@command(LIST)
async def listing(ls: "MemzoiServer", arg: dict[str, Any]) -> dict[str, Any]:
    """The pending packets with what blocks each (see the module docstring)."""
    if arg.get("uri"):
        root, _path = target_path(ls, arg)
        projects = [ls.projects[root]] if root in ls.projects else []
    else:
        projects = [ls.projects[r] for r in sorted(ls.projects)]
    return {
        "scanning": any(not p.scanned.is_set() for p in projects),
        "proposals": [row for p in projects for row in rows(ls, p)],
    }


def register(server: "MemzoiServer") -> None:
    """Register ``memzoi.proposals.list``."""
    server.command(LIST)(listing)
