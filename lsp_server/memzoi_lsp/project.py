"""One project under review in the language server: the core's :class:`~memzoi.runs.projectstate.ProjectState` (file
set, compact verdicts, cross-file graph, git and ledger oracles, index handle) keyed by the URIs the server
publishes under (its ``scanned`` flag says when the first scan has seen every file). State changes on the event
loop only, through the core's entry points (see docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

from memzoi.runs.projectstate import ProjectState

from .documents import path_to_uri, uri_to_path


class Project(ProjectState):
    """One project under review: the directory holding ``.memzoi/``; its files are known by ``file:`` URI."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, key=path_to_uri, path_of=uri_to_path)

    def has(self, uri: str) -> bool:
        """True when ``uri`` is one of the project's files."""
        path = uri_to_path(uri)
        return path is not None and self.has_path(path)

    def refuses(self, uri: str) -> bool:
        """True when ``uri`` names an entry ``memzoi check`` refuses without reading it, a symlink or a name that is
        not UTF-8 (:attr:`memzoi.project.projectfiles.ProjectFiles.refused`)."""
        path = uri_to_path(uri)
        return path is not None and str(path) in self.tracked.refused


__all__ = ["Project"]
