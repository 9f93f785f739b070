"""The state of one project under review, kept in line with the disk: what a long-lived caller (the language
server) knows of it, changed through three entry points: :meth:`ProjectState.apply_events` (the disk),
:meth:`ProjectState.apply_editor` (an editor's buffer) and ``apply_scan`` (the first scan's files, :meth:`feed`);
requests read it without changing it (:mod:`memzoi.runs.projectview`).

:class:`ProjectState` owns, for the project whose ``.memzoi`` folder is below ``root``:

- its file set (:class:`memzoi.project.projectfiles.ProjectFiles`: exactly the files ``memzoi check`` checks there);
- the compact first stage of each closed file (:class:`memzoi.stores.firststage.FirstStage`, in :attr:`verdicts`),
  which a change drops so that the file is analysed again when asked;
- the cross-file graph (:class:`memzoi.project.crossfile.Workspace`) and which analysis each file's facts came from;
- the git and ledger oracles (:class:`memzoi.project.gitfacts.GitFacts`, :class:`memzoi.ledger.LedgerView`);
- the index handle (:class:`memzoi.stores.index.Index`), written from the rows the scan made or from the caller's
  analyses, never from a second analysis of a file this process analysed.

:meth:`ProjectState.apply_events` takes a batch of file-system event paths and returns a :class:`StateChanges`:
the files updated and removed, the files whose cross-file findings changed because of them, and the records and
packets to re-index. Each changed closed file is analysed once (by the caller's ``analysis_of``) and git is
asked once per batch.

Files are known by a **key**: the caller's spelling of a file (the server's ``file:`` URI; by default the absolute
path). Threading rule: one owner mutates the state (the server's event loop); :meth:`listing` and the index
methods change nothing else and may run on one other thread (the server's scan thread), one at a time.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..judge.workspace import MEMZOI_DIR, takes_part
from ..project.crossfile import Workspace
from ..project.filefacts import FileFacts, facts_from_analysis
from ..project.gitfacts import GitFacts
from ..project.projectfiles import ProjectFiles
from ..stores.fileentry import Row, indexed
from .scanrows import OnDisk, premade_rows

if TYPE_CHECKING:
    from ..base.freshness import Stat
    from ..judge.analysis import Analysis
    from ..project.filefacts import FileFacts
    from ..stores.index import Index, SearchHit


@dataclass
class StateChanges:
    """What one :meth:`ProjectState.apply_events` changed, in keys: files now present (created or modified) and
    gone, each once in the order found; ``affected``: other files whose cross-file findings changed (never one of
    ``removed``); ``reindex``: absolute paths of the records and packets among them, which the index holds."""

    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    affected: set[str] = field(default_factory=set)
    reindex: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class InputChanges:
    """What :meth:`ProjectState.input_changes` found changed: the configuration, git's state."""

    config: bool = False
    git: bool = False

    @property
    def any(self) -> bool:
        """True when something changed (every file is to be judged again)."""
        return self.config or self.git


class ProjectState:
    """One project under review (see the module docstring). ``root``: the directory holding ``.memzoi``;
    ``key(path) -> str``: the caller's key of an absolute path (computed once per path); ``path_of(key)`` its
    inverse (``None`` for a key that names no file)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        key: Callable[[str], str] | None = None,
        path_of: Callable[[str], str | os.PathLike[str] | None] | None = None,
    ) -> None:
        from ..ledger import LedgerView  # noqa: PLC0415 lazy: start-up - the ledger package is loaded by a caller that holds state, not by check

        self.root = Path(root)
        self.memzoi_dir = self.root / MEMZOI_DIR
        self._key = key or (lambda p: p)
        self._keys: dict[str, str] = {}  # absolute path -> key, for the files of the set
        self._path_of = path_of or (lambda k: k)  # key -> path, the inverse of ``key``
        self.crossfile = Workspace()
        # key -> weak reference to the analysis whose facts the cross-file workspace holds (weak: the caller's
        # bounded document cache decides what stays in memory)
        self._fed: dict[str, weakref.ref[Any]] = {}
        self.verdicts: dict[str, Any] = {}  # key -> memzoi.stores.firststage.FirstStage of a closed file
        self.ledger = LedgerView(self.root)
        # Visibility from the batched git calls of the listing and of each event batch (typing never runs git);
        # committed versions and last commits cached until git's state changes.
        self.git = GitFacts(self.root)
        self.tracked = ProjectFiles(self.memzoi_dir, self.git)
        self.index: Index | None = None
        self.index_ready = False
        self._devices: dict[str, int] = {}  # folder -> its device, for the refresh after the scan (scan_stat)
        self._inputs: tuple[bytes, str] | None = None  # the configuration and git state last seen
        self._boundaries: dict[str, datetime] = {}  # key -> retention boundary still to pass, of a fed analysis
        self.scanned = False  # the first scan has seen every file (until then reads withhold: memzoi.runs.projectview)

    # -- the file set -------------------------------------------------------------------------------------------

    def key_of(self, path: str | os.PathLike[str]) -> str:
        """The key of ``path`` (absolute or not). A spelling of one of the project's files through a symbolic link
        of a parent folder (an editor that opened the workspace through a linked home folder) gets that file's
        key, so one file is never two entries of the cross-file graph."""
        p = os.path.abspath(path)
        if p not in self._keys:
            real = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
            if real in self._keys:
                return self._keys[real]
        return self._keys.get(p) or self._key(p)

    @property
    def files(self) -> set[str]:
        """Keys of the project's files."""
        return set(self._keys.values())

    def has_path(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` is one of the project's files."""
        return os.path.abspath(path) in self._keys

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` lies inside this project's ``.memzoi`` folder (a file of the project or not)."""
        return self.tracked.contains(path)

    def listing(self) -> list[str]:
        """The project's files on disk (absolute paths, sorted), git asked about them once. Changes nothing else,
        so it may run on the scan thread; the owner then takes it with :meth:`adopt`. Records the inputs
        :meth:`input_changes` compares with, before git is asked (a change from then on shows)."""

        def record(found: list[str]) -> None:
            self._inputs = self.inputs_now(found)

        return self.tracked.listing(before_ask=record)

    def inputs_now(self, paths: Iterable[str] | None = None) -> tuple[bytes, str]:
        """What :meth:`input_changes` compares, read now (changes nothing: for the scan thread)."""
        from ..stores.index_fresh import config_bytes, git_state  # noqa: PLC0415 lazy: start-up

        folders = {os.path.dirname(p) for p in (list(self._keys) if paths is None else paths)}
        return config_bytes(self.root), git_state(self.root, folders)

    def input_changes(self, now: tuple[bytes, str] | None = None, *, ask_git: bool = True) -> InputChanges:
        """What changed, since the listing or the last call, among the inputs of the project's verdicts other than
        its files (as the index's freshness has them, :mod:`memzoi.stores.index_fresh`): the configuration (the bytes of
        ``.memzoi/config.toml``: the project id, ``[rules]``, the safety decisions) and git's state (``HEAD``, the
        index, refs, ``info/exclude``, the ``.gitignore`` files). Drops what they invalidate: every compact verdict on
        a configuration change, git's visibility on a git change (:meth:`ask_git`, unless ``ask_git`` is False: a
        threaded owner reads ``now`` off its thread, :meth:`inputs_now`, and asks git there). Nothing is reported
        before the first :meth:`listing`; the caller then re-judges and publishes every file."""
        now = self.inputs_now() if now is None else now
        before, self._inputs = self._inputs, now
        if before is None:
            return InputChanges()
        changes = InputChanges(config=now[0] != before[0], git=now[1] != before[1])
        if changes.config:
            from ..judge.config import forget_config  # noqa: PLC0415 lazy: start-up

            forget_config(self.memzoi_dir)  # its stat may not show the change (memzoi.base.freshness)
            self.verdicts.clear()
        if changes.git and ask_git:
            self.ask_git()
        return changes

    def ask_git(self) -> None:
        """Ask git again for the visibility of every file of the set (one batch; may run on the scan thread)."""
        if self._keys:
            self.git.ask(sorted(self._keys))

    def adopt(self, paths: list[str]) -> list[str]:
        """Take a :meth:`listing` into the file set (events applied meanwhile are kept); returns the keys, in the
        listing's order."""
        self.tracked.adopt(paths)
        for p in paths:
            if p not in self._keys:
                self._keys[p] = self._key(p)
        return [self._keys[p] for p in paths]

    def passed_boundaries(self, now: datetime) -> list[str]:
        """The keys of the files whose retention boundary has passed by ``now`` since they were judged (a compact
        verdict, or a fed analysis, without ``retention_query_only``): their compact verdicts are dropped, so the
        caller judges them again from a new analysis. For the owner's thread."""
        passed = {k for k, v in self.verdicts.items() if getattr(v, "boundary", None) is not None and v.boundary <= now}
        passed |= {k for k, b in self._boundaries.items() if b <= now}
        for key in passed:
            self.verdicts.pop(key, None)
            self._boundaries.pop(key, None)
            self._fed.pop(key, None)  # the same analysis fed again is taken again
        return sorted(passed)

    def next_boundary(self) -> datetime | None:
        """The earliest retention boundary still to pass (:meth:`passed_boundaries`), ``None`` without one."""
        pending = [v.boundary for v in self.verdicts.values() if getattr(v, "boundary", None) is not None]
        return min([*pending, *self._boundaries.values()], default=None)

    # -- the cross-file graph -----------------------------------------------------------------------------------

    def feed(self, key: str, source: Analysis | FileFacts, path: str | os.PathLike[str] | None = None) -> set[str]:
        """Give the cross-file workspace the facts of ``key`` from ``source``: an analysis (nothing happens when the
        workspace already holds facts from this very analysis) or ready-made facts (a compact verdict's, compared
        with the facts held, so the same facts affect nothing). Returns the keys whose cross-file findings
        changed. A file that takes no part in cross-file checks (:func:`memzoi.judge.workspace.takes_part`: a stray
        file below ``.memzoi``, a reserved file) is kept out of the graph, as ``memzoi check`` keeps it out.
        ``path``: the file's absolute path when the caller has it (else the key's, ``path_of``)."""
        path = self._path_of(key) if path is None else path
        role = source.role if isinstance(source, FileFacts) else source.placement.role.value
        if path is None or not takes_part(os.fspath(path), role):  # as `check`: a stray file is scanned only
            self._fed.pop(key, None)
            return self.crossfile.remove(key)
        if isinstance(source, FileFacts):
            self._fed.pop(key, None)
            return self.crossfile.update(key, source)
        held = self._fed.get(key)
        if held is not None and held() is source:
            return set()
        self._fed[key] = weakref.ref(source)
        self._track_boundary(key, source)
        return self.crossfile.update(key, source)

    def apply_editor(self, key: str, analysis: Analysis) -> set[str]:
        """An editor's buffer of ``key`` (its analysis) becomes the file's cross-file facts, as :meth:`feed`: the
        editor's text governs an open document. Returns the keys whose cross-file findings changed."""
        return self.feed(key, analysis)

    def apply_scan(
        self, key: str, source: Analysis | FileFacts, path: str | os.PathLike[str] | None = None
    ) -> set[str]:
        """The scan's first stage of ``key`` (a compact verdict's facts, or an analysis) enters as :meth:`feed`
        enters it, with one difference: before the first scan is complete (``scanned``), a compact verdict's facts
        are only held (:meth:`memzoi.project.crossfile.Workspace.load`) and evaluated with all the others at the first
        read of a cross-file finding, as no read shows one before then (:mod:`memzoi.runs.projectview`). Returns
        the keys whose cross-file findings changed (none for a held one: the scan's end republishes them all)."""
        if self.scanned or not isinstance(source, FileFacts):
            return self.feed(key, source, path)
        path = self._path_of(key) if path is None else path
        if path is None or not takes_part(os.fspath(path), source.role):
            return self.feed(key, source, path)
        self._fed.pop(key, None)
        self.crossfile.load(key, source)
        return set()

    def holds(self, key: str, analysis: Analysis) -> bool:
        """Whether the cross-file graph's facts of ``key`` are ``analysis``'s (fed from it, or equal to its)."""
        held = self._fed.get(key)
        return (held is not None and held() is analysis) or self.crossfile.facts(key) == facts_from_analysis(analysis)

    def _track_boundary(self, key: str, analysis: Analysis) -> None:
        """Keep when ``analysis``'s retention boundary passes, unless it already has (its findings hold
        ``retention_query_only``): :meth:`passed_boundaries` then reports the file."""
        mark = getattr(analysis, "retention", None)
        if mark is not None and not any(f.code == "retention_query_only" for f in analysis.findings):
            self._boundaries[key] = mark.boundary
        else:
            self._boundaries.pop(key, None)

    def forget(self, key: str) -> set[str]:
        """Forget ``key`` in the cross-file workspace and drop its compact verdict (deleted, moved away, or no
        longer what other files see); returns the keys whose cross-file findings changed."""
        self._fed.pop(key, None)
        self.verdicts.pop(key, None)
        self._boundaries.pop(key, None)
        return self.crossfile.remove(key)

    # -- the one mutator ----------------------------------------------------------------------------------------

    def apply_events(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        shown: Collection[str] = (),
        analysis_of: Callable[[str], Analysis | None] = lambda key: None,
    ) -> StateChanges:
        """Bring the state in line with the disk for the event ``paths`` (:meth:`ProjectFiles.apply_events`: each
        path judged by its final state on disk; git asked once for the batch).

        ``shown``: paths the caller shows findings for, reported removed when they are no longer files of the
        project even if the set never held them. ``analysis_of(key)``: the analysis of an updated file as it now is, or ``None`` to leave its
        cross-file facts as they are (an open document, whose editor text governs; an unreadable file). A removed
        file is forgotten; an updated one loses its compact verdict and, analysed, feeds the cross-file graph.
        One file's failure to be analysed never stops the batch (it is logged, the barrier of
        :mod:`memzoi.judge.barrier`). Returns what changed (:class:`StateChanges`).
        """
        changes = self.tracked.apply_events(paths, shown={os.path.abspath(p) for p in shown})
        out = StateChanges()
        for p in changes.removed:
            key = self._keys.pop(p, None) or self._key(p)
            out.removed.append(key)
            out.affected |= self.forget(key)
        for p in changes.updated:
            key = self._keys.get(p) or self._key(p)
            self._keys[p] = key
            out.updated.append(key)
            self.verdicts.pop(key, None)
            try:
                analysis = analysis_of(key)
                if analysis is not None:
                    out.affected |= self.feed(key, analysis)
            except Exception as err:  # the barrier: the other changed files are still taken in
                from ..judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

                log_internal_error(err, p)
        out.affected -= set(out.removed)
        out.reindex = [Path(p) for p in (*changes.updated, *changes.removed) if indexed(p)]
        return out

    # -- the index (on the scan thread) -------------------------------------------------------------------------

    def put_rows(self, rows: list[Row], on_disk: OnDisk) -> None:
        """Write the search rows the scan made with its entries (:attr:`memzoi.stores.fileentry.FileEntry.row`) into
        the index now (:meth:`memzoi.stores.index.Index.put_rows`, under the git state the listing recorded).
        Raises :class:`memzoi.stores.index.IndexUnavailable` or ``sqlite3.Error``."""
        if rows:
            self.open_index(on_disk).put_rows(rows, self._inputs[1] if self._inputs is not None else "")

    def premade_rows(self, files: list[Path], on_disk: OnDisk) -> tuple[list[Any], list[Path]]:
        """The index's rows of ``files`` from the caller's analyses (:func:`memzoi.runs.scanrows.premade_rows`)."""
        return premade_rows(files, on_disk, self.git, self.root)

    def scan_stat(self, path: str) -> Stat | None:
        """The stat the scan took of the file at the absolute ``path`` while its compact verdict is kept (a change
        drops it), ``None`` otherwise: the stamp its first stage was made from, found current by the scan's one
        ``lstat`` (:meth:`memzoi.stores.firststage.FirstStage.current`), on the device of its folder (one stat per
        folder, not per file: a file system mounted below ``.memzoi`` is mounted on a folder; the freshness rule asks
        the device for the file system's type, :func:`memzoi.base.freshness.ctime_kept`). Reads only: for the scan
        thread."""
        from ..base.freshness import Stat  # noqa: PLC0415 lazy: start-up

        key = self._keys.get(path)
        stage = self.verdicts.get(key) if key is not None else None
        if stage is None or stage.stamp is None:
            return None
        folder = os.path.dirname(path)
        if folder not in self._devices:
            try:
                self._devices[folder] = os.stat(folder).st_dev
            except OSError:
                return None
        return Stat(stage.stamp, self._devices[folder])

    def open_index(self, on_disk: OnDisk) -> Index:
        """The project's index, opened once, with rows from :meth:`premade_rows` and a fork server's workers for
        others. Raises :class:`memzoi.stores.index.IndexUnavailable` when it cannot be opened."""
        from ..stores.index import Index  # noqa: PLC0415 lazy: start-up

        if self.index is None:
            self.index = Index(self.root, premade=lambda files: self.premade_rows(files, on_disk), helper=True)
        return self.index

    def refresh_index(self, on_disk: OnDisk) -> None:
        """Bring the index up to date after the first scan (rebuilt when its schema is not ours)."""
        index = self.open_index(on_disk)
        self._devices.clear()  # the folders' devices as they are now (a mount may have come or gone)
        # the scan's listing and stats: no second walk, no second stat (memzoi.stores.index_fresh.plane_of); an index
        # never built, or of another schema or stamp, is rebuilt from the same listing
        index.refresh(files=list(self._keys), stat_of=self.scan_stat)
        self.index_ready = True

    def reindex(self, paths: Iterable[Path], on_disk: OnDisk) -> None:
        """Re-index ``paths`` (changed, created or deleted records and packets) once the index is ready."""
        if not self.index_ready:
            return
        self.open_index(on_disk).update_paths(sorted({Path(p).resolve() for p in paths}))  # one row per file

    def rebuild_index(self, on_disk: OnDisk) -> dict[str, Any]:
        """Recreate the index from the git plane; returns the figures ``memzoi rebuild`` reports."""
        result = self.open_index(on_disk).rebuild()
        self.index_ready = True
        return {
            "project_root": str(self.root),
            "files": result.files,
            "records": len(result.record_ids),
            "proposals": len(result.proposal_ids),
            "refused": result.refused,
            "seconds": round(result.seconds, 3),
        }

    def search(self, query: str, limit: int) -> list[SearchHit] | None:
        """Full-text hits for ``query``; ``None`` while the index is not ready."""
        if not self.index_ready or self.index is None:
            return None
        return self.index.search(query, limit=limit)

    def close(self) -> None:
        """Close the index connection (shutdown); never raises."""
        if self.index is not None:
            try:
                self.index.close()
            except Exception:
                pass
            self.index = None


__all__ = ["InputChanges", "OnDisk", "ProjectState", "StateChanges", "indexed"]
