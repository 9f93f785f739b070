"""The files of one project under review, kept in line with the disk.

A project's files are exactly what ``memzoi check`` checks below its ``.memzoi`` folder
(:func:`memzoi.project.checkpaths.expand`: records, packets, reserved, configuration and stray files; hidden entries and
symlinks never: the symlinks ``check`` reports as ``canonical_path``, and the entries whose name is not UTF-8, are
kept apart, :attr:`ProjectFiles.refused`, so the language server shows what ``check`` says of them). :class:`ProjectFiles` lists them once (:meth:`~ProjectFiles.scan`) and then takes batches of
file-system events (:meth:`~ProjectFiles.apply_events`), judging each path by its **final state on disk**, never
by the event's type: so a write-then-rename save is one modification, repeated "added" events for a growing file
are one update, a directory event re-lists that directory, and a deleted or renamed directory drops everything
that was below it. Editor swap, backup, lock and temporary files are never files of the project (they come and
go while an editor saves), as ``memzoi check``'s walk skips them. Git is asked the review visibility of a
batch's new and changed files once per batch.

This is the workspace state machine the language server's watcher drives; it decides, the server converts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..base.pathnorm import absolute
from ..judge.workspace import editor_temporary, through_linked_plane, unread_entry
from .checkpaths import UsageError, expand, refused_link
from .gitfacts import GitFacts


def transient(name: str) -> bool:
    """True for a name that is never committed content below ``.memzoi``, exactly as ``memzoi check``'s walk skips
    it: an editor's swap, backup, lock or autosave file, an atomic-write temporary
    (:func:`memzoi.judge.workspace.editor_temporary`), and a ``.git`` folder."""
    return name == ".git" or editor_temporary(name)


@dataclass
class FileChanges:
    """What a batch of events changed: absolute paths of files now present (created or modified) and of files
    gone (deleted, renamed away, turned into a symlink), each once, in the order found."""

    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.updated or self.removed)


class ProjectFiles:
    """The file set of the project whose ``.memzoi`` folder is ``memzoi_dir`` (see the module docstring).

    ``git``: the project's git oracle, asked for the visibility of new and changed files. ``files`` holds
    absolute path strings. Not thread-safe: one owner (the server's event loop) mutates it.
    """

    def __init__(self, memzoi_dir: str | os.PathLike[str], git: GitFacts | None = None) -> None:
        self.memzoi_dir = os.path.abspath(memzoi_dir)
        self.git = git
        self.files: set[str] = set()
        #: absolute paths of the entries below ``.memzoi`` that ``memzoi check`` refuses without reading them
        #: (``canonical_path``): the symlinks (:func:`memzoi.project.checkpaths.refused_link`) and the names that are
        #: not UTF-8 (:func:`memzoi.judge.workspace.unread_entry`); never files of the project, never read through
        self.refused: set[str] = set()
        self._refused_listed: list[str] = []  # those the last :meth:`listing` met, taken by :meth:`adopt`

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` lies inside the ``.memzoi`` folder (whether or not it is a file of the project)."""
        p = os.path.abspath(path)
        return p == self.memzoi_dir or p.startswith(self.memzoi_dir + os.sep)

    def listing(self, before_ask: Callable[[list[str]], None] | None = None) -> list[str]:
        """The project's files on disk, sorted, with git asked for their visibility once. Changes nothing here, so
        it may run on another thread than the owner; the owner then takes it with :meth:`adopt`. ``before_ask``
        is called with the files before git is asked."""
        found, self._refused_listed = walked(self.memzoi_dir)
        found.sort()
        if before_ask is not None:
            before_ask(found)
        if self.git is not None and found:
            self.git.ask(found)
        return found

    def adopt(self, found: Iterable[str]) -> None:
        """Take a :meth:`listing` into the set (events applied meanwhile are kept), and the refused entries it met."""
        self.files.update(found)
        self.refused.update(self._refused_listed)

    def scan(self) -> list[str]:
        """:meth:`listing`, adopted at once; returns it."""
        found = self.listing()
        self.adopt(found)
        return found

    def apply_events(self, paths: Iterable[str | os.PathLike[str]], *, shown: Collection[str] = ()) -> FileChanges:
        """Bring the file set in line with the disk for ``paths`` (event paths below the ``.memzoi`` folder; others
        are ignored). ``shown``: absolute paths the caller currently shows findings for, which are reported
        removed when they are no longer files of the project even if this set never held them."""
        final: dict[str, bool] = {}  # path -> present; the last judgement of a path wins

        def update(p: str) -> None:
            self.files.add(p)
            final.pop(p, None)
            final[p] = True

        def remove(p: str) -> None:
            self.files.discard(p)
            final.pop(p, None)
            final[p] = False

        for raw in paths:
            path = os.path.abspath(raw)
            if self.contains(path) and not self._transient(path):
                if self._refused_event(path):
                    continue  # a name that is not UTF-8, or below one: never read (check reports it as canonical_path)
                if through_linked_plane(self.memzoi_dir, path) or any(
                    path.startswith(q + os.sep) for q in self.refused
                ):
                    continue  # never read through a symlinked folder (memzoi check reports it as canonical_path)
                self._event(path, update, remove, shown)
        out = FileChanges(
            [p for p, present in final.items() if present], [p for p, present in final.items() if not present]
        )
        if self.git is not None:
            self.git.forget(out.removed)
            if out.updated:
                self.git.ask(out.updated)
        return out

    def _refused_event(self, path: str) -> bool:
        """:attr:`refused` in line with the disk for the event ``path`` (a folder's are listed again by
        :meth:`_event`): a refused symlink or a name that is not UTF-8 is one now; one that went, or a folder holding
        those that went, is one no more. True when ``path`` is, or lies below, a name that is not UTF-8: nothing else
        is done with it (``check`` never reads or enters it)."""
        entry = unread_entry(path, self.memzoi_dir)
        if entry is not None:
            # below a symlinked folder the walk never goes, so it never meets the name either
            linked = through_linked_plane(self.memzoi_dir, entry) or any(
                entry.startswith(q + os.sep) for q in self.refused
            )
            if os.path.lexists(entry) and not linked:
                self.refused.add(entry)
            else:
                self._drop_refused(entry)
            return True
        if os.path.islink(path):
            if refused_link(os.path.basename(path), _to_folder(path), self.contains(os.path.dirname(path))):
                self.refused.add(path)
            else:
                self.refused.discard(path)
        elif not os.path.isdir(path):  # gone, or a regular file now
            self._drop_refused(path)
        return False

    def _drop_refused(self, path: str) -> None:
        prefix = path.rstrip(os.sep) + os.sep
        self.refused.difference_update([q for q in self.refused if q == path or q.startswith(prefix)])

    def _transient(self, path: str) -> bool:
        inside = os.path.relpath(path, self.memzoi_dir)
        # The .memzoi directory itself is re-listed like any directory.
        return inside != "." and any(transient(part) for part in Path(inside).parts)

    def _event(
        self, path: str, update: Callable[[str], None], remove: Callable[[str], None], shown: Collection[str]
    ) -> None:
        """One event path, judged by its final state on disk."""
        if os.path.isdir(path) and not os.path.islink(path):
            listing, refused = walked(path)
            found = set(listing)
            prefix = path.rstrip(os.sep) + os.sep
            self.refused.difference_update([q for q in self.refused if q.startswith(prefix)])
            self.refused.update(refused)
            for known in [f for f in self.files if f.startswith(prefix) and f not in found]:
                remove(known)
            for f in sorted(found):
                update(f)
        elif os.path.isfile(path) and not os.path.islink(path):
            update(path)
        elif not os.path.lexists(path):  # deleted, or a directory deleted or renamed away: all below it too
            prefix = path.rstrip(os.sep) + os.sep
            for known in [f for f in self.files if f == path or f.startswith(prefix)]:
                remove(known)
            if path in shown:
                remove(path)
        elif path in self.files or path in shown:  # no longer a regular file (a symlink, a pipe)
            remove(path)


def listed(directory: str) -> list[str]:
    """The files ``memzoi check`` checks below ``directory`` (none when it went away meanwhile)."""
    return walked(directory)[0]


def walked(directory: str) -> tuple[list[str], list[str]]:
    """One walk of ``directory`` as ``memzoi check`` walks it: the files it checks and the entries it refuses without
    reading them (``canonical_path``: symlinks, names that are not UTF-8), absolute paths (both empty when it went
    away meanwhile)."""
    try:
        out = expand(directory)
    except UsageError:
        return [], []
    return [absolute(p) for p, _ in out.files], [*out.links, *out.names]


def _to_folder(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


__all__ = ["FileChanges", "ProjectFiles", "listed", "transient", "walked"]
