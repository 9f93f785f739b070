"""The index rows a long-lived caller (the language server) hands to the index (:class:`memzoi.stores.index.Index`'s
``premade``) for files it analysed itself since its scan (a file just changed was analysed for its diagnostics),
so that such a file is not analysed again for the index. The rows of the files its scan analysed were written with
their entries as the scan went (:meth:`memzoi.stores.index.Index.put_rows`). Used by
:class:`memzoi.runs.projectstate.ProjectState`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.freshness import of_stat
from ..project.admission import GitVisibility

if TYPE_CHECKING:
    from ..judge.analysis import Analysis
    from ..project.gitfacts import GitFacts

#: ``on_disk(path) -> (bytes, stat, analysis)`` of a file as it is on disk, or ``None`` when it cannot be read.
OnDisk = Callable[[Path], "tuple[bytes, os.stat_result, Analysis] | None"]


def premade_rows(files: list[Path], on_disk: OnDisk, git: GitFacts, root: Path) -> tuple[list[Any], list[Path]]:
    """The index's rows of ``files`` (:data:`memzoi.stores.index_rows.Premade`) made from the caller's analyses
    (``on_disk``), and the files left to the index's own workers: all of them when they are many (an index missing
    after a warm scan, whose files came from the store). Judged with the project's git answers (``git``, asked here
    for files it does not know) and its own ``[rules]`` (the project at ``root``), not an editor's settings: the
    index is what ``memzoi rebuild`` writes (:func:`memzoi.project.verdict.judge`, no ledger). A file whose row
    cannot be made is logged and left."""
    from ..judge.workspace import MEMZOI_DIR  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import ProjectContext, judge  # noqa: PLC0415 lazy: start-up
    from ..stores.index_build import PARALLEL_THRESHOLD  # noqa: PLC0415 lazy: start-up
    from ..stores.index_rows import index_key, index_row  # noqa: PLC0415 lazy: start-up

    if len(files) >= PARALLEL_THRESHOLD:
        return [], files
    unasked = [p for p in files if git.visibility(p) is GitVisibility.UNKNOWN]
    if unasked:
        git.ask(unasked)
    ctx = ProjectContext.of(root / MEMZOI_DIR, git=git)
    base = root.resolve()
    rows: list[Any] = []
    left = []
    for path in files:
        found = on_disk(path)
        if found is not None:
            data, st, analysis = found
            try:
                rows.append(index_row(index_key(base, path), data, of_stat(st).stamp, judge(path, analysis, ctx)))
            except Exception as err:  # the per-file barrier: the index analyses this file itself
                from ..judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

                log_internal_error(err, path)
                left.append(path)
    return rows, left


__all__ = ["OnDisk", "premade_rows"]
