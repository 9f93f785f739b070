"""Cross-file findings of the files ``memzoi check`` checks (:class:`CrossFileCheck`): their facts are gathered
as the files are analysed (or read from the verdict cache), the facts of the project's other records and packets
are taken from the cache, the index or, last, an analysis, and only the checked files are evaluated, once, over a
:class:`~memzoi.project.crossfile.Workspace` built in one pass (:meth:`~memzoi.project.crossfile.Workspace.of`).

So a check of one file of a 10,000-file project lists the project's git plane, reads the other files' facts and
evaluates one file, and a check of the whole project evaluates each file once instead of re-evaluating the
dependents of each file as it arrives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..judge.workspace import plane_entries, takes_part

if TYPE_CHECKING:  # the analysis is imported only where a file must be analysed
    from ..base.findings import Finding
    from ..judge.analysis import Analysis
    from .filefacts import FileFacts

#: ``memzoi check`` takes the facts of unchecked files from its facts source (the index) from this many files on.
INDEX_ASSIST_THRESHOLD = 200
#: ``facts_source(memzoi_dir)`` → absolute path → facts of files of that ``.memzoi`` directory's project; empty
#: when it has none (the files are then analysed).
FactsSource = Callable[[Path], Mapping[str, "FileFacts"]]


def plane_paths(memzoi_dir: str) -> list[str]:
    """The absolute paths of the records and packets of the ``.memzoi`` directory ``memzoi_dir`` (absolute):
    the files :func:`memzoi.project.crossfile.git_plane_files` lists (Memzoi's walk: no hidden entries, no symlinks, no
    non-UTF-8 names, no ``index.md``/``log.md``), as strings, in walk order, without a ``Path`` per file."""
    return [os.path.abspath(e.path) for e in plane_entries(memzoi_dir)]


class CrossFileCheck:
    """Cross-file findings of the files ``memzoi check`` checks, built up as their facts arrive.

    Files are grouped by their ``.memzoi`` directory (one workspace each); each group is evaluated over every
    git-plane file of that directory, so a target outside the checked subset is found. Files outside any
    ``.memzoi`` directory form one group. Used by :func:`memzoi.runs.check.check_paths`, as results arrive."""

    def __init__(
        self,
        facts_source: FactsSource | None = None,
        cached: Callable[[str, str], FileFacts | None] | None = None,
        analyse: Callable[[str, list[str]], Mapping[str, FileFacts]] | None = None,
    ) -> None:
        """``facts_source(memzoi_dir)`` may supply the facts of a project's files that were not added (absolute
        path → facts, e.g. from the index: :func:`memzoi.stores.index.indexed_facts`); without it they are analysed.
        ``cached(memzoi_dir, path)`` is asked first: the facts of a file a cache vouches for, else ``None``.
        ``analyse(memzoi_dir, paths)`` analyses the files still missing (absolute path → facts; ``memzoi check``
        runs them through its workers and keeps their cache entries, so the next check of one file finds them);
        without it they are analysed here, one by one."""
        # .memzoi directory -> (absolute path -> facts of the files taking part, absolute paths of the added files)
        self._groups: dict[str | None, tuple[dict[str, FileFacts], list[str]]] = {}
        self._facts_source = facts_source
        self._cached = cached
        self._analyse = analyse

    def add(self, display: str, key: str, memzoi_dir: str | None, analysis: Analysis | FileFacts) -> None:
        """Add a checked file: its display path, absolute path, absolute ``.memzoi`` directory (or ``None``) and
        its analysis or facts."""
        from .filefacts import FileFacts  # noqa: PLC0415 lazy: start-up

        facts, added = self._groups.get(memzoi_dir) or self._groups.setdefault(memzoi_dir, ({}, []))
        added.append(key)
        if not isinstance(analysis, FileFacts):
            from .filefacts import facts_from_analysis  # noqa: PLC0415 lazy: start-up

            if not takes_part(key, analysis.placement.role.value):
                return
            analysis = facts_from_analysis(analysis)
        elif not takes_part(key, analysis.role):
            return
        facts[key] = analysis

    def findings(self, complete: Collection[str] = ()) -> dict[str, list[Finding]]:
        """Absolute path → cross-file findings of the added files (display paths can coincide: names that are not
        UTF-8 are shown with replacement characters). The directories in ``complete`` were walked
        in full (every record and packet of theirs was added), so they are not listed again; for the others,
        the facts of files not added come from ``cached``, then from the ``facts_source`` when one was given and
        many files are missing (from :data:`INDEX_ASSIST_THRESHOLD` on), else from analysing them."""
        from .crossfile import Workspace  # noqa: PLC0415 lazy: start-up

        out: dict[str, list[Finding]] = {}
        for memzoi_dir, (facts, added) in self._groups.items():
            if memzoi_dir is not None and memzoi_dir not in complete:
                self._complete(memzoi_dir, facts)
            out.update(Workspace.of(facts).evaluate(added))
        return out

    def _complete(self, memzoi_dir: str, facts: dict[str, FileFacts]) -> None:
        """Add the facts of the records and packets of ``memzoi_dir`` that were not added."""
        missing = [k for k in plane_paths(memzoi_dir) if k not in facts]
        if self._cached is not None:  # what a cache vouches for is neither indexed nor analysed
            rest = []
            for key in missing:
                found = self._cached(memzoi_dir, key)
                if found is not None:
                    if takes_part(key, found.role):
                        facts[key] = found
                else:
                    rest.append(key)
            missing = rest
        if not missing:
            return
        from ..judge.analysis import analyze_path  # noqa: PLC0415 lazy: start-up
        from .filefacts import facts_from_analysis  # noqa: PLC0415 lazy: start-up

        many = self._facts_source is not None and len(missing) >= INDEX_ASSIST_THRESHOLD
        # `many` holds only where _facts_source is set (mypy does not narrow through the boolean)
        indexed = self._facts_source(Path(memzoi_dir)) if many else {}  # type: ignore[misc]
        rest = [k for k in missing if k not in indexed]
        analysed = self._analyse(memzoi_dir, rest) if self._analyse is not None and rest else {}
        for key in missing:
            found = indexed.get(key) or analysed.get(key) or facts_from_analysis(analyze_path(key))
            if takes_part(key, found.role):
                facts[key] = found


__all__ = ["CrossFileCheck", "FactsSource", "INDEX_ASSIST_THRESHOLD", "plane_paths"]
