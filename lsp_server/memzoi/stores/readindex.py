"""The index a read opens (:class:`memzoi.agent.recall.Reader`: search, get, context packs, prechecks, pending):
the project's own, or, where the memzoi home cannot be written (a read-only mount, folders this user may not
write), a private one made in a temporary folder for this read alone and filled from the files by the refresh
that follows. A read then answers as a fresh index would (promise 3: never from an outdated row), only without
the cache, and nothing is written in the home; the temporary folder is removed when the read ends.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..base.runtime import STORE_DB
from .index import Index, IndexUnavailable

#: The index's failures a private index works around: the home cannot be written, though the files can be read.
UNWRITABLE = frozenset({"read_only_file_system", "permission_denied"})


def open_for_read(root: Path, workers: int | None = 1) -> tuple[Index, tempfile.TemporaryDirectory[str] | None]:
    """``(index, scratch)``: the project's index with ``scratch`` ``None``, or a new, empty index in the temporary
    folder ``scratch`` (mode 0700; the caller removes it with ``scratch.cleanup()`` after closing the index) when
    the project's cannot be opened for a reason of :data:`UNWRITABLE`. Raises the project index's
    :class:`IndexUnavailable` for any other reason, or when the private index cannot be made either."""
    try:
        return Index(root, workers=workers), None
    except IndexUnavailable as err:
        if err.code not in UNWRITABLE:
            raise
        first = err
    scratch = tempfile.TemporaryDirectory(prefix="memzoi-index-")
    try:
        return Index(root, workers=workers, path=Path(scratch.name) / STORE_DB), scratch
    except IndexUnavailable:
        scratch.cleanup()
        raise first from None


__all__ = ["UNWRITABLE", "open_for_read"]
