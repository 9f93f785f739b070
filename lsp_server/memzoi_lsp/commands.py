"""``workspace/executeCommand``: the commands of SPEC §5. Each one calls one core function; arguments are plain
JSON (a URI string or an object), results plain JSON as the CLI's ``--json`` output.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from .commanding import CommandGroup
from .documents import path_to_uri

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .session import WorkspaceCommandSession

log = logging.getLogger("memzoi_lsp.commands")

CHECK_WORKSPACE = "memzoi.checkWorkspace"
SEARCH = "memzoi.search"
REBUILD = "memzoi.rebuild"
DOCTOR = "memzoi.doctor"


def _check(roots: list[Path]) -> dict[str, Any]:
    from memzoi.runs.check import check_paths  # noqa: PLC0415 lazy: start-up

    files = 0
    counts = {"error": 0, "warning": 0, "information": 0, "hint": 0}
    per_file: dict[str, int] = {}
    for root in roots:
        report = check_paths([str(root / ".memzoi")])
        files += report.files_checked
        for loc in report.findings:
            counts[loc.finding.severity.label] += 1
            per_file[loc.path] = per_file.get(loc.path, 0) + 1
    return {"files_checked": files, "counts": counts, "files_with_findings": len(per_file)}


async def check_workspace(ls: WorkspaceCommandSession, *args: Any) -> dict[str, Any]:
    """Check every project from disk (as ``memzoi check``) and re-publish its diagnostics."""
    roots = list(ls.projects)
    result = await asyncio.get_running_loop().run_in_executor(ls.scan_executor, _check, roots)
    for project in list(ls.projects.values()):
        ls.process_disk([project.memzoi_dir])
    return result


async def search(ls: WorkspaceCommandSession, *args: Any) -> list[dict[str, Any]]:
    """Records and packets matching the query (a string, or ``{"query"}``): full-text through the index,
    best first: ``[{kind, id, title, path, uri, snippet}]``."""
    from . import indexing  # noqa: PLC0415 lazy: start-up

    first = args[0] if args else ""
    query = str(first.get("query", "") if isinstance(first, dict) else first)
    out: list[dict[str, Any]] = []
    for project in list(ls.projects.values()):
        hits = await indexing.search(ls, project, query)
        if hits is None:
            out += [
                {
                    "kind": "record" if s.kind == types.SymbolKind.File else "proposal",
                    "id": s.container_name,
                    "title": s.name,
                    "path": None,
                    "uri": s.location.uri,
                    "snippet": "",
                }
                for s in indexing.workspace_symbols(ls, query)
            ]
            continue
        out += [
            {
                "kind": h.kind,
                "id": h.id,
                "title": h.title,
                "path": h.path,
                "uri": path_to_uri(project.root / h.path),
                "snippet": h.snippet,
            }
            for h in hits
        ]
    return out


async def rebuild(ls: WorkspaceCommandSession, *args: Any) -> Any:
    """Recreate each project's index from the git plane (``memzoi rebuild``)."""
    from . import indexing  # noqa: PLC0415 lazy: start-up

    results = [await indexing.rebuild(ls, p) for p in list(ls.projects.values())]
    return results[0] if len(results) == 1 else results


async def doctor(ls: WorkspaceCommandSession, *args: Any) -> Any:
    """Workspace, git plane and index drift report with repair steps (``memzoi doctor --json``)."""
    from memzoi.runs.doctor import diagnose  # noqa: PLC0415 lazy: start-up

    loop = asyncio.get_running_loop()
    reports = [await loop.run_in_executor(None, diagnose, root) for root in sorted(ls.projects)]
    return reports[0] if len(reports) == 1 else reports


#: The workspace commands (check, search, rebuild, doctor), a feature the server composes
#: (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup(
    "workspace", {CHECK_WORKSPACE: check_workspace, SEARCH: search, REBUILD: rebuild, DOCTOR: doctor}
)
