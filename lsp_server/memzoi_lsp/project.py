"""One project under review in the language server: its ``.memzoi`` folder, its file set (the core's
:class:`~memzoi.projectfiles.ProjectFiles`, with the URIs the server publishes under), its cross-file workspace, its
git and ledger oracles and its index handle. State changes on the event loop only (see docs/architecture.md)."""

from __future__ import annotations

import asyncio
import os
import weakref
from pathlib import Path

from memzoi.workspace import MEMZOI_DIR

from .documents import path_to_uri, uri_to_path


class Project:
    """One project under review: the directory holding ``.memzoi/`` and the managed files found on disk
    (URIs of records and proposal packets, kept current by the scan and the watchers)."""

    def __init__(self, root: Path) -> None:
        from memzoi.crossfile import Workspace as CrossFileWorkspace
        from memzoi.gitfacts import GitFacts
        from memzoi.ledger import LedgerView
        from memzoi.projectfiles import ProjectFiles

        self.root = root
        self.memzoi_dir = root / MEMZOI_DIR
        self.scanned = asyncio.Event()
        self.crossfile = CrossFileWorkspace()
        # uri -> weak reference to the Analysis whose facts the cross-file workspace holds (weak, so the bounded
        # document cache decides what stays in memory)
        self.fed: dict[str, weakref.ref] = {}
        # uri -> the compact first stage of each file the scan took in (memzoi.scanverdicts.CompactVerdict): what
        # closed files are diagnosed from; a file that changes is dropped here and analysed again when asked
        self.verdicts: dict[str, object] = {}
        self.ledger = LedgerView(root)
        # Git's answers for admission and hovers: visibility from the scan's and the watchers' batched git calls
        # (typing never runs git), committed versions and last commits cached until git's state changes.
        self.git = GitFacts(root)
        # The files `memzoi check` checks below .memzoi, kept in line with the disk by the core's state machine;
        # `_uris` spells each as the URI the server publishes under.
        self.tracked = ProjectFiles(self.memzoi_dir, self.git)
        self._uris: dict[str, str] = {}
        self.index = None  # memzoi.index.Index, opened on the scan thread
        self.index_ready = False

    @property
    def files(self) -> set[str]:
        """URIs of the project's files."""
        return set(self._uris.values())

    def has(self, uri: str) -> bool:
        """True when ``uri`` is one of the project's files."""
        path = uri_to_path(uri)
        return path is not None and os.path.abspath(path) in self._uris

    def scan_files(self) -> list[str]:
        """List the project's files from disk and ask git about them (:meth:`ProjectFiles.listing`). Runs on the
        scan thread; the event loop then takes the result with :meth:`take_listing`."""
        return self.tracked.listing()

    def take_listing(self, paths: list[str]) -> list[str]:
        """Adopt the scan's listing (on the event loop); returns the URIs, in the listing's order."""
        self.tracked.adopt(paths)
        for p in paths:
            self._uris.setdefault(p, path_to_uri(p))
        return [self._uris[p] for p in paths]

    def apply_events(self, paths: list[Path], *, shown: set[str]) -> tuple[list[str], list[str]]:
        """:meth:`ProjectFiles.apply_events` for ``paths``; returns ``(updated URIs, removed URIs)``."""
        changes = self.tracked.apply_events(paths, shown=shown)
        removed = [self._uris.pop(p, None) or path_to_uri(p) for p in changes.removed]
        updated = []
        for p in changes.updated:
            uri = self._uris.get(p) or path_to_uri(p)
            self._uris[p] = uri
            updated.append(uri)
        for uri in (*removed, *updated):
            self.verdicts.pop(uri, None)
        return updated, removed

    def feed(self, uri: str, source) -> set[str]:
        """Give the cross-file workspace the facts of ``uri`` from ``source``: an analysis (a no-op when the
        workspace already holds facts from this very analysis) or ready-made facts (a compact verdict's). Returns
        the URIs whose cross-file findings changed."""
        from memzoi.filefacts import FileFacts

        if isinstance(source, FileFacts):  # compared with the facts held, so the same facts affect nothing
            self.fed.pop(uri, None)
            return self.crossfile.update(uri, source)
        held = self.fed.get(uri)
        if held is not None and held() is source:
            return set()
        self.fed[uri] = weakref.ref(source)
        return self.crossfile.update(uri, source)

    def contains(self, path: Path) -> bool:
        """True when ``path`` is inside this project's ``.memzoi`` directory."""
        return self.tracked.contains(path)


__all__ = ["Project"]
