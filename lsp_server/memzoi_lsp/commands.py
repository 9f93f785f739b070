"""``workspace/executeCommand``: the commands of SPEC §5. Each one calls one core function; arguments are plain
JSON (a URI string or an object), results plain JSON as the CLI's ``--json`` output.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from memzoi.check import check_paths

from .documents import path_to_uri

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .server import MemzoiServer  # noqa: E402

log = logging.getLogger("memzoi_lsp.commands")

CHECK_WORKSPACE = "memzoi.checkWorkspace"
SEARCH = "memzoi.search"


def _check(roots: list[Path]) -> dict[str, Any]:
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


def register(server: "MemzoiServer") -> None:
    """Register the commands."""

    @server.command(CHECK_WORKSPACE)
    async def check_workspace(ls: "MemzoiServer", *args: Any) -> dict[str, Any]:
        """Check every project from disk (as ``memzoi check``) and re-publish its diagnostics."""
        roots = list(ls.projects)
        result = await asyncio.get_running_loop().run_in_executor(ls.scan_executor, _check, roots)
        from . import watch

        for project in list(ls.projects.values()):
            watch.process(ls, [project.memzoi_dir])
        return result

    @server.command(SEARCH)
    def search(ls: "MemzoiServer", query: str = "") -> list[dict[str, Any]]:
        """Records and packets matching ``query`` (words in id, title or body): ``[{id, title, uri}]``."""
        from .navigation import workspace_symbols

        return [
            {"id": s.container_name, "title": s.name, "uri": s.location.uri}
            for s in workspace_symbols(ls, str(query))
            if hasattr(s.location, "uri")
        ]
