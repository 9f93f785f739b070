"""The index rows a long-lived caller's scan made, kept on disk until the index takes them (issue 29, lean memory).

The language server's first scan analyses each file once and makes its index row then
(:class:`memzoi.stores.fileentry.FileEntry`); the index takes the rows only when the scan is done
(:meth:`memzoi.runs.projectstate.ProjectState.premade_rows`). Held in memory, the packed rows of 11,000 files
were about 14 MB of the server's peak; here they are appended to one unnamed temporary file in the project's
runtime directory (the directory of its store, never the git plane; created ``0600`` and unlinked at once by
:func:`tempfile.TemporaryFile`, so nothing is left behind) and only ``(size, mtime_ns, offset, length)`` stays in
memory per file. Rows hold what the index stores, so nothing reaches the spool that the store would not hold.

Thread-safe (a lock): rows are put on the event loop and taken on the scan thread. A spool that cannot write
keeps the row in memory instead (never an error).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from typing import IO, Any

#: ``(size, mtime_ns, packed rows)`` of one file (:class:`memzoi.stores.fileentry.FileEntry`'s ``row``).
Row = tuple[int, int, bytes]


class RowSpool:
    """Rows by absolute path (see the module docstring). ``project_root``: the folder holding the project's
    ``.memzoi``, whose runtime directory takes the temporary file (``None``: the system's temporary directory)."""

    def __init__(self, project_root: str | os.PathLike[str] | None = None) -> None:
        self._root = project_root
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._end = 0
        self._at: dict[str, tuple[int, int, int, int]] = {}  # path -> (size, mtime_ns, offset, length)
        self._held: dict[str, Row] = {}  # rows the file could not take

    def __len__(self) -> int:
        with self._lock:
            return len(self._at) + len(self._held)

    def put(self, path: str, row: Row) -> None:
        """Keep ``row`` for the absolute ``path`` (a later row of the same path replaces it)."""
        size, mtime_ns, packed = row
        with self._lock:
            self._held.pop(path, None)
            try:
                if self._file is None:
                    self._file = _open(self._root)
                self._file.seek(self._end)
                self._file.write(packed)
            except OSError:
                self._at.pop(path, None)
                self._held[path] = row
                return
            self._at[path] = (size, mtime_ns, self._end, len(packed))
            self._end += len(packed)

    def stat_of(self, path: str) -> tuple[int, int] | None:
        """``(size, mtime_ns)`` of the row kept for ``path`` (nothing is read), ``None`` when there is none."""
        with self._lock:
            held = self._held.get(path)
            at = self._at.get(path)
        return held[:2] if held is not None else at[:2] if at is not None else None

    def read(self, path: str) -> bytes:
        """The packed rows kept for ``path``, left kept. Raises ``KeyError`` when there are none and ``OSError``
        when they cannot be read back."""
        with self._lock:
            held = self._held.get(path)
            if held is not None:
                return held[2]
            _, _, offset, length = self._at[path]
            if self._file is None:
                raise OSError(f"the rows of {path} are no longer kept")
            self._file.seek(offset)
            packed = self._file.read(length)
        if len(packed) != length:
            raise OSError(f"the rows of {path} could not be read back")
        return packed

    def take(self, path: str) -> Row | None:
        """The row kept for ``path``, forgotten here; ``None`` when there is none (or it cannot be read back)."""
        with self._lock:
            held = self._held.pop(path, None)
            if held is not None:
                return held
            at = self._at.pop(path, None)
            if at is None or self._file is None:
                return None
            size, mtime_ns, offset, length = at
            try:
                self._file.seek(offset)
                packed = self._file.read(length)
            except OSError:
                return None
            return (size, mtime_ns, packed) if len(packed) == length else None

    def clear(self) -> None:
        """Forget every row and remove the file (what the index did not take is stale)."""
        with self._lock:
            self._at.clear()
            self._held.clear()
            self._end = 0
            if self._file is not None:
                try:
                    self._file.close()
                except OSError:
                    pass
                self._file = None


class SpooledRows(list[Any]):
    """The index's rows of a batch of files (:data:`memzoi.stores.index_rows.Premade`), some of them still in a
    :class:`RowSpool`: each of those is read back only when the index reaches it (its insert goes a few hundred
    rows at a time), so a whole scan's rows are never in memory at once. Append rows made otherwise as to a
    list. The spool must keep them until the index is done (:meth:`RowSpool.clear` after)."""

    def __init__(self, spool: RowSpool) -> None:
        super().__init__()
        self._spool = spool

    def refer(self, path: str) -> None:
        """Append the row ``spool`` keeps for ``path``, read when it is reached."""
        self.append(_Ref(path))

    def _get(self, item: Any) -> Any:
        return self._spool.read(item.path) if isinstance(item, _Ref) else item

    def __getitem__(self, index: Any) -> Any:
        got = super().__getitem__(index)
        return [self._get(x) for x in got] if isinstance(index, slice) else self._get(got)

    def __iter__(self) -> Iterator[Any]:
        for item in super().__iter__():
            yield self._get(item)


class _Ref:
    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


def _open(project_root: str | os.PathLike[str] | None) -> IO[bytes]:
    """An unnamed temporary file in the runtime directory of the project at ``project_root`` (made private if
    missing, :func:`memzoi.base.runtime.private_dir`), else in the system's temporary directory."""
    if project_root is not None:
        from ..base.runtime import private_dir, worktree_runtime_dir  # noqa: PLC0415 lazy: start-up

        try:
            folder = worktree_runtime_dir(project_root)
            private_dir(folder)
            return tempfile.TemporaryFile(dir=folder)
        except (OSError, RuntimeError, ValueError):
            pass
    return tempfile.TemporaryFile()


__all__ = ["Row", "RowSpool", "SpooledRows"]
