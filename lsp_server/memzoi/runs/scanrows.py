"""The index rows a long-lived caller (the language server) hands to the index (:class:`memzoi.stores.index.Index`'s
``premade``) so that a file it analysed is not analysed again for the index: the rows its scan made
(:class:`memzoi.stores.fileentry.FileEntry`), while the file is unchanged, and rows made from the caller's own
analyses for a few others. Used by :class:`memzoi.runs.projectstate.ProjectState`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..project.admission import GitVisibility
from .rowspool import RowSpool, SpooledRows

if TYPE_CHECKING:
    from ..judge.analysis import Analysis
    from ..project.gitfacts import GitFacts

#: ``on_disk(path) -> (bytes, stat, analysis)`` of a file as it is on disk, or ``None`` when it cannot be read.
OnDisk = Callable[[Path], "tuple[bytes, os.stat_result, Analysis] | None"]


def premade_rows(
    premade: RowSpool, files: list[Path], on_disk: OnDisk, git: GitFacts, root: Path
) -> tuple[SpooledRows, list[Path]]:
    """The index's rows of ``files`` (:data:`memzoi.stores.index_rows.Premade`) and the files left to the index's
    own workers. First the rows the scan made (``premade``: kept on disk by absolute path with the file's
    ``(size, mtime_ns)``, read back as the index reaches them), while the file's size and mtime are still the row's; then, for a few others, rows
    from the caller's analyses (``on_disk``: a file just changed was analysed for its diagnostics). Many others
    (an index missing after a warm scan, whose files came from the verdict cache) are left to the index's own
    workers. Judged with the project's git answers (``git``, asked here for files it does not know) and its own
    ``[rules]`` (the project at ``root``), not an editor's settings: the index is what ``memzoi rebuild`` writes
    (:func:`memzoi.stores.index_rows.index_verdict`). A file whose row cannot be made is logged and left."""
    from ..judge.workspace import MEMZOI_DIR  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up
    from ..stores.index import PARALLEL_THRESHOLD  # noqa: PLC0415 lazy: start-up
    from ..stores.index_rows import index_key, index_row, index_verdict  # noqa: PLC0415 lazy: start-up

    rows = SpooledRows(premade)
    rest: list[Path] = []
    for path in files:
        kept = premade.stat_of(os.path.abspath(path))
        if kept is not None and _stat(path) == kept:
            rows.refer(os.path.abspath(path))
        else:
            rest.append(path)
    if len(rest) >= PARALLEL_THRESHOLD:
        return rows, rest
    unasked = [p for p in rest if git.visibility(p) is GitVisibility.UNKNOWN]
    if unasked:
        git.ask(unasked)
    ctx = ProjectContext.of(root / MEMZOI_DIR, git=git)
    base = root.resolve()
    left = []
    for path in rest:
        found = on_disk(path)
        if found is not None:
            data, st, analysis = found
            try:
                rows.append(index_row(index_key(base, path), data, st, index_verdict(path, analysis, ctx)))
            except Exception as err:  # the per-file barrier: the index analyses this file itself
                from ..judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

                log_internal_error(err, path)
                left.append(path)
    return rows, left


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


__all__ = ["OnDisk", "premade_rows"]
