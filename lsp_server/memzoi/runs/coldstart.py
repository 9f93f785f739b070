"""A long-lived caller's cold scan told early (the language server's, issue 29: cold server scan ≤ 1.5× a cold
``memzoi check``): when a project has no store yet and holds many files, every file will be analysed in worker
processes, and those come from a fork server (:mod:`memzoi.base.parallel`) whose imports cost some 0.3 s of CPU.
:func:`prestart` starts that fork server as soon as the project is registered, so that its imports run beside the
caller's own start-up (its imports, the listing) instead of between the first chunk and the first worker.

This module imports nothing of the analysis or the stores: it runs before the opened documents' first
diagnostics are published, and a project that is not cold costs one ``stat`` here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..base.runtime import STORE_DB, worktree_runtime_dir
from ..judge.workspace import MEMZOI_DIR

#: From this many files to analyse on, a scan or a check uses worker processes (below it, their start costs more).
PARALLEL_THRESHOLD = 300
#: The module of the function a scan's workers run (:func:`memzoi.stores.fileentry.entry_chunk`), preloaded by the
#: fork server with :data:`memzoi.base.parallel.PRELOAD`, as :class:`memzoi.base.parallel.ChunkPool` preloads it.
WORKER_MODULE = "memzoi.stores.fileentry"


def start_workers() -> bool:
    """Start the fork server of a scan's workers now (:func:`memzoi.base.parallel.start_helper` of
    :data:`WORKER_MODULE`); False where there is none. Never raises."""
    from ..base.parallel import start_helper  # noqa: PLC0415 lazy: start-up

    return start_helper(WORKER_MODULE)


def many_files(memzoi_dir: str | os.PathLike[str], at_least: int = PARALLEL_THRESHOLD) -> bool:
    """True when the folder ``memzoi_dir`` (a project's ``.memzoi``) holds at least ``at_least`` Markdown names,
    counted folder by folder (names only, nothing stat'ed or read) until there are that many. Never raises."""
    seen = 0
    todo = [os.fspath(memzoi_dir)]
    while todo:
        try:
            with os.scandir(todo.pop()) as it:
                for entry in it:
                    if entry.name.endswith(".md"):
                        seen += 1
                        if seen >= at_least:
                            return True
                    elif not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except OSError:
            continue
    return False


def likely_cold(project_root: str | os.PathLike[str], memzoi_dir: str | os.PathLike[str]) -> bool:
    """True when the scan of the project at ``project_root`` (the folder holding ``memzoi_dir``, its ``.memzoi``)
    will analyse at least :data:`PARALLEL_THRESHOLD` files: its store (where
    :func:`memzoi.stores.store.store_path` puts it) does not exist yet, and ``memzoi_dir`` holds that many Markdown
    files (:func:`many_files`). A store that exists costs one
    ``stat``; a project whose store holds nothing under the current stamp (another tool or configuration) is told
    later, when its cache is opened (:func:`memzoi.runs.scanverdicts.cold_start`). Never raises."""
    try:
        if (worktree_runtime_dir(project_root) / STORE_DB).exists():
            return False
    except (OSError, RuntimeError, ValueError):
        return False
    return many_files(memzoi_dir)


def prefork(roots: Iterable[str | os.PathLike[str]]) -> bool:
    """For a caller that has not started a thread yet (the language server, once ``initialize`` is answered and
    before it reads on): when the project of one of ``roots`` (folders holding a ``.memzoi``) is
    :func:`likely_cold`, load the analysis as its first document would (:func:`memzoi.runs.checkimports.load_judging`)
    and start the workers' fork server by forking the caller (:func:`memzoi.base.parallel.fork_helper`), so the fork
    server shares those imports instead of importing them again (issue 29: cold server scan); then the first such
    project's first files are analysed from that fork server while the caller starts (:mod:`memzoi.runs.prefill`).
    Returns whether it forked; a caller for which it did not gets its fork server from :func:`prestart` as before.
    Never raises."""
    try:
        folders = [(root, os.path.join(root, MEMZOI_DIR)) for root in roots]
        # the names first: a workspace without a large .memzoi never has git asked for its keys here (the store's
        # place), on the way to its first diagnostics
        cold = [(root, md) for root, md in folders if many_files(md) and likely_cold(root, md)]
        if not cold:
            return False
        from ..base.parallel import fork_helper  # noqa: PLC0415 lazy: start-up
        from .checkimports import ANALYSING, load_judging  # noqa: PLC0415 lazy: start-up

        load_judging(ANALYSING)
        if not fork_helper(WORKER_MODULE):
            return False
        from . import prefill  # noqa: PLC0415 lazy: start-up

        # the first one's first files analysed on the core the caller's start-up leaves idle (one process: more
        # would compete with the start-up itself on a machine of two cores)
        prefill.start(*cold[0])
        return True
    except Exception:  # noqa: BLE001  # the fork server then starts as before (prestart)
        return False


def prestart(project_root: str | os.PathLike[str], memzoi_dir: str | os.PathLike[str]) -> bool:
    """Start the workers' fork server now when the project at ``project_root`` (its ``.memzoi``: ``memzoi_dir``) is
    :func:`likely_cold`; returns whether it was started. Run it off the caller's event loop (it may ask git for the
    project's keys). Never raises."""
    return likely_cold(project_root, memzoi_dir) and start_workers()


__all__ = ["PARALLEL_THRESHOLD", "WORKER_MODULE", "likely_cold", "many_files", "prefork", "prestart", "start_workers"]
