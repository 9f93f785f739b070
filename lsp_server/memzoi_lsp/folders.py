"""Workspace folders added or removed while the server runs (``workspace/didChangeWorkspaceFolders``, which the
server advertises): an added folder's project is registered and scanned like one given at start-up; a removed
folder's projects are forgotten: their diagnostics cleared, their watcher stopped, their index closed, and later
events under them ignored. pygls has already updated ``ls.workspace.folders`` when the handler runs.

The feature is an object, :class:`Folders`, that owns its state: the roots of the projects it forgot."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from .documents import uri_to_path

if TYPE_CHECKING:
    from .session import FoldersSession

log = logging.getLogger("memzoi_lsp.folders")


class Folders:
    """The workspace-folders feature: it owns the roots of the projects whose folder was removed (``forgotten``;
    later watcher events under them register nothing, :meth:`is_forgotten`). Made by the session with the
    session; changed on the event loop only."""

    def __init__(self, ls: FoldersSession) -> None:
        self._ls = ls
        self._forgotten: set[Path] = set()

    def is_forgotten(self, root: Path) -> bool:
        """Whether the project at ``root`` (resolved) was forgotten with its folder."""
        return root in self._forgotten

    def remember(self, root: Path) -> None:
        """The project at ``root`` (resolved) is registered again (its folder was added back, or a file of it was
        opened)."""
        self._forgotten.discard(root)

    def register(self, server: FoldersSession) -> None:
        """Register the workspace-folders notification handler."""

        @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
        def did_change_workspace_folders(ls: FoldersSession, params: types.DidChangeWorkspaceFoldersParams) -> None:
            for folder in params.event.removed or []:
                path = uri_to_path(folder.uri)
                if path is not None:
                    self.forget_folder(path)
            for folder in params.event.added or []:
                path = uri_to_path(folder.uri)
                if path is not None:
                    self.remember(path.resolve())
                    ls.add_project(path)  # only looks at folder/.memzoi: never walks the folder

    def forget_folder(self, folder: Path) -> list[Path]:
        """Forget every project at or below ``folder`` that no remaining workspace folder holds; returns their
        roots."""
        ls = self._ls
        folder = folder.resolve()
        kept = [p.resolve() for p in (uri_to_path(f.uri) for f in ls.workspace.folders.values()) if p is not None]
        gone = [r for r in list(ls.projects) if _inside(r, folder) and not any(_inside(r, k) for k in kept)]
        for root in gone:
            self.forget_project(root)
        return gone

    def forget_project(self, root: Path) -> None:
        """Drop the project at ``root``: clear what was published for its files, stop watching it, close its index;
        events under it no longer register it again (until its folder is added back or a file of it is opened)."""
        from . import indexing  # noqa: PLC0415 lazy: start-up

        ls = self._ls
        project = ls.remove_project(root)
        if project is None:
            return
        self._forgotten.add(root)
        ls.unwatch_project(project)
        shown = ls.shown_uris()
        uris = {u for u in shown if (p := uri_to_path(u)) is not None and project.contains(p)}
        uris |= {u for u in project.files if u in shown}
        ls.forget_diagnostics(uris)
        for uri in sorted(uris):
            ls.docs.forget(uri)
        if ls.pull_diagnostics:
            ls.request_refresh()
        try:  # on the scan thread, which owns the index connection; kept: a shutdown does not drop it
            ls.scan_executor.keep(indexing.close, project)
        except RuntimeError:  # the scan thread is closed (shutting down): the process's exit ends the connection
            pass
        log.info("forgot project %s (its workspace folder was removed)", root)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


__all__ = ["Folders"]
