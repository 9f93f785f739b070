"""File watching: ``workspace/didChangeWatchedFiles`` when the client registers it dynamically, otherwise a
watchfiles watcher on each project's ``.memzoi`` directory only.

Events from both sources go through :func:`files_changed`: a trailing-edge debounce (with a maximum wait, so a
file rewritten continuously is still re-validated at a bounded rate, B36) collects paths, and each path is then
judged by its **final state on disk**, never by the event type. So a write-then-rename save (delete + add, or
rename onto the file) is one modification and never flashes a "deleted" state (B33), repeated ``added`` events
for a growing file are one update (B34), and a directory-level event rescans that directory (B37). Editor swap,
backup and lock files are ignored.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.barrier import log_internal_error
from memzoi.workspace import RESERVED_NAMES, Role, place, through_linked_plane, walk

from . import diagnostics
from .documents import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from .server import MemzoiServer, Project

log = logging.getLogger("memzoi_lsp.watch")

DEBOUNCE_S = 0.1
MAX_WAIT_S = 1.0
_IGNORED = re.compile(r"(~|\.sw[a-p]|\.tmp|\.temp|\.bak|\.orig|\.lock|\.part|\.crdownload)$|^(\d+|#.*#|\.#.*)$", re.I)


def is_ignored(path: Path) -> bool:
    """Editor swap/backup/lock and temporary files (vim ``.x.swp``, ``x~``, the ``4913`` probe, emacs ``#x#`` and
    ``.#x``, ``*.tmp``) and hidden entries, which Memzoi never reads either."""
    name = path.name
    return name.startswith(".") or bool(_IGNORED.search(name))


def register(server: "MemzoiServer") -> None:
    """Register the watched-files notification handler."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: "MemzoiServer", params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (uri_to_path(c.uri) for c in params.changes) if p is not None]
        files_changed(ls, paths)


async def register_client_watching(ls: "MemzoiServer") -> None:
    """In ``initialized``: ask the client to watch ``.memzoi`` trees, only when it offers dynamic registration
    (registering anyway crashes some clients; Neovim 0.11 on Linux does not offer it)."""
    ls.client_watches = False
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=f"memzoi-watch-{uuid.uuid4()}",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[types.FileSystemWatcher(glob_pattern="**/.memzoi/**")]
                        ),
                    )
                ]
            )
        )
        ls.client_watches = True
    except Exception as err:  # fall back to our own watcher
        log.warning("client refused file watching registration (%s); watching .memzoi with watchfiles", err)


def watch_project(ls: "MemzoiServer", project: "Project") -> None:
    """Start a watchfiles thread on ``project.memzoi_dir`` unless the client watches for us."""
    if getattr(ls, "client_watches", False) or ls.stopping:
        return
    if ls.watcher is None:
        ls.watcher = _Watcher(ls)
    ls.watcher.add(project.memzoi_dir)


def stop(ls: "MemzoiServer") -> None:
    """Stop the watcher threads (shutdown)."""
    if ls.watcher is not None:
        ls.watcher.stop()
    pending = getattr(ls, "_watch_timer", None)
    if pending is not None:
        pending.cancel()


class _Watcher:
    """One watchfiles thread per watched directory; events are handed to the event loop."""

    def __init__(self, ls: "MemzoiServer") -> None:
        self.ls = ls
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []

    def add(self, directory: Path) -> None:
        t = threading.Thread(target=self._run, args=(directory,), name=f"memzoi-watch", daemon=True)
        t.start()
        self.threads.append(t)

    def _run(self, directory: Path) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                directory, stop_event=self.stop_event, debounce=50, step=20, raise_interrupt=False,
                rust_timeout=500, yield_on_timeout=False,
            ):
                paths = [Path(p) for _, p in changes]
                loop = self.ls.loop
                if loop is None or loop.is_closed():
                    return
                loop.call_soon_threadsafe(files_changed, self.ls, paths)
        except Exception as err:  # a vanished directory or a watcher error must not kill the server
            log.warning("watching %s stopped: %s", directory, err)

    def stop(self) -> None:
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=1)


def files_changed(ls: "MemzoiServer", paths: Iterable[Path], *, immediate: bool = False) -> None:
    """Queue paths whose disk state may have changed; processed after the debounce (or now, for files the
    server itself has just written)."""
    if ls.stopping:
        return
    pending: dict[Path, None] = ls.__dict__.setdefault("_watch_pending", {})
    for p in paths:
        pending[Path(p)] = None
    if immediate or ls.loop is None:
        _flush(ls)
        return
    now = time.monotonic()
    first = ls.__dict__.get("_watch_first") or now
    ls._watch_first = first
    timer = ls.__dict__.get("_watch_timer")
    if timer is not None:
        timer.cancel()
    delay = 0 if now - first >= MAX_WAIT_S else DEBOUNCE_S
    ls._watch_timer = ls.loop.call_later(delay, _flush, ls)


def _flush(ls: "MemzoiServer") -> None:
    pending: dict[Path, None] = ls.__dict__.get("_watch_pending") or {}
    ls._watch_pending = {}
    ls._watch_first = None
    timer = ls.__dict__.get("_watch_timer")
    if timer is not None:
        timer.cancel()
        ls._watch_timer = None
    if pending and not ls.stopping:
        process(ls, list(pending))


def _managed(path: Path) -> bool:
    placement = place(path)
    return placement.role not in (Role.OTHER, Role.RESERVED) and path.name not in RESERVED_NAMES


def process(ls: "MemzoiServer", paths: list[Path]) -> tuple[list[str], list[str]]:
    """Bring the projects' file sets and diagnostics in line with the disk for ``paths``.

    Returns ``(updated URIs, removed URIs)``.
    """
    updated: list[str] = []
    removed: list[str] = []
    for path in paths:
        project = ls.project_for(path)
        if project is None:
            if path.name == ".memzoi" or path.parent.name == ".memzoi":
                ls.add_project(path.parent if path.name == ".memzoi" else path.parent.parent)
            continue
        if through_linked_plane(project.memzoi_dir, path):
            continue  # never read through a symlinked folder (the scan logged it; `memzoi check` reports it)
        inside = path.relative_to(project.memzoi_dir).parts
        if inside and (any(part.startswith(".") for part in inside) or is_ignored(path)):
            continue  # the .memzoi directory itself is rescanned like any directory
        if path.is_dir() and not path.is_symlink():
            _rescan_dir(ls, project, path, updated, removed)
            continue
        uri = path_to_uri(path)
        if path.suffix != ".md":
            if not path.exists():  # perhaps a deleted or renamed directory: drop what was below it
                prefix = uri.rstrip("/") + "/"
                for known in [u for u in project.files if u.startswith(prefix)]:
                    project.files.discard(known)
                    removed.append(known)
            continue
        if path.is_file() and not path.is_symlink() and _managed(path):
            project.files.add(uri)
            updated.append(uri)
        elif uri in project.files or uri in ls.published:
            project.files.discard(uri)
            removed.append(uri)
    if updated:
        # Git review visibility of changed files: one batch of git calls per project.
        from memzoi.admission import git_visibility

        by_root: dict = {}
        for uri in updated:
            path = uri_to_path(uri)
            project = ls.project_for(path)
            if project is not None and path is not None:
                by_root.setdefault(project.root, (project, []))[1].append(path)
        for project, paths in by_root.values():
            project.visibility.update(git_visibility(project.root, paths))
    affected: set[str] = set()
    for uri in removed:
        ls.docs.forget(uri)
        project = ls.project_for(uri_to_path(uri))
        if project is not None:
            affected |= ls.unfeed(project, uri)
        if ls.docs.is_open(uri):
            ls.gone.add(uri)  # the editor keeps the buffer; its problems go with the file
        diagnostics.clear(ls, uri)
    for uri in updated:
        ls.gone.discard(uri)
        if ls.docs.is_open(uri):
            continue
        try:
            snap = ls.docs.snapshot(uri)
            project = ls.project_for(snap.path if snap else None)
            if snap is not None and project is not None:
                affected |= ls.feed(project, uri, snap.analysis)
        except Exception as err:  # the barrier: the other changed files are still taken in
            log_internal_error(err, uri)
    affected -= set(removed)
    affected -= {u for u in updated if not ls.docs.is_open(u)}  # published just below
    if affected:
        ls.republish(affected)
    if updated or removed:
        from . import indexing

        by_project: dict = {}
        for uri in updated + removed:
            path = uri_to_path(uri)
            project = ls.project_for(path)
            if project is not None and path is not None:
                by_project.setdefault(project.root, (project, []))[1].append(path)
        for project, paths in by_project.values():
            indexing.update(ls, project, paths)
        ls.on_files_changed(updated, removed)
    return updated, removed


def _rescan_dir(ls: "MemzoiServer", project: "Project", directory: Path, updated: list[str], removed: list[str]) -> None:
    found = {path_to_uri(p) for p in walk(directory).files if _managed(p)}
    prefix = path_to_uri(directory).rstrip("/") + "/"
    for uri in [u for u in project.files if u.startswith(prefix) and u not in found]:
        project.files.discard(uri)
        removed.append(uri)
    for uri in found:
        project.files.add(uri)
        updated.append(uri)
