"""The compiled hyperscan databases of the prefilter (:mod:`.prefilter`), kept between runs (issue 29, cold ``check``).

Compiling the prefilter's two databases (the detectors' patterns and the gate words) takes some 35–65 ms of CPU,
which a ``memzoi check`` over many files spends in its parent before the workers fork, while nothing else runs;
reading them back serialized takes under a millisecond. :class:`DatabaseCache` hands out each database from a
``marshal`` file in ``$MEMZOI_HOME/cache`` (private, :func:`memzoi.base.codecache.load_private`) when it holds the
serialized form (``hyperscan.dumpb``) of a database compiled from exactly the same inputs: an entry is keyed by a
BLAKE2 digest of the expressions, their ids, the flags and the mode, and the file by the versions of the hyperscan
binding and library, so a database is only ever used for the patterns it was compiled from. Each entry carries a
checksum of its bytes: an entry whose bytes do not match it, or that hyperscan refuses to load (another version
or platform, ``hyperscan.loadb``), is compiled anew, never used. The file is rewritten (atomically, mode 0600,
:func:`memzoi.base.codecache.write_cache`) with the databases the process used when one of them was compiled.

A database from the cache is the same database (``tests/safety/test_prefilter_cache.py`` holds the prefilter's
answers with and without the cache equal on the corpus and on generated texts), and the prefilter is only a gate
in front of the exact ``re`` searches (:mod:`.prefilter`), so no finding depends on it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..base.codecache import HYPERSCAN_PREFIX

#: The cache files' name prefix (their temporary files' family, :mod:`memzoi.base.privatewrite`).
FILE_PREFIX = HYPERSCAN_PREFIX


def cache_file(directory: Path, hs: Any) -> Path:
    """``hyperscan-db-<digest>.marshal`` in ``directory``, the digest covering the hyperscan binding's version and
    where it is installed (hyperscan also refuses to load a database of another library version or platform)."""
    versions = f"{getattr(hs, '__version__', '?')}\n{getattr(hs, '__file__', '?')}"
    key = hashlib.blake2b(versions.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()
    return directory / f"{FILE_PREFIX}{key}.marshal"


def _checksum(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=16).digest()


def _key(expressions: list[bytes], flags: list[int], mode: int) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{mode}:{len(expressions)}\0".encode())
    for i, (source, flag) in enumerate(zip(expressions, flags, strict=True)):
        h.update(f"{i}:{flag}:{len(source)}\0".encode())
        h.update(source)
    return h.digest()


def read_cache(path: Path) -> dict[bytes, tuple[bytes, bytes]]:
    """The entries stored in ``path`` (``digest → (checksum, serialized database)``); ``{}`` when it is missing,
    unreadable, not this user's private file (:func:`memzoi.base.codecache.load_private`) or of another shape."""
    from ..base.codecache import load_private  # noqa: PLC0415 lazy: start-up

    data = load_private(path)
    if not isinstance(data, dict):
        return {}
    for k, v in data.items():
        if not (
            isinstance(k, bytes)
            and len(k) == 16
            and isinstance(v, tuple)
            and len(v) == 2
            and all(isinstance(x, bytes) for x in v)
        ):
            return {}
    return data


class DatabaseCache:
    """The databases of one process's prefilter: from the cache file in ``directory`` when it holds them, else
    compiled (and noted for :meth:`save`). Without a directory every database is compiled, as before."""

    def __init__(self, hs: Any, directory: Path | None) -> None:
        self.hs = hs
        self.path = cache_file(directory, hs) if directory is not None else None
        self.stored = read_cache(self.path) if self.path is not None else {}
        self.used: dict[bytes, tuple[bytes, bytes]] = {}
        self.stats = {"hits": 0, "misses": 0}

    def compiled(self, expressions: list[bytes], flags: list[int]) -> Any:
        """A block-mode ``hyperscan.Database`` of ``expressions`` (ids ``0…n-1``) with ``flags`` (one per
        expression), as ``Database().compile`` makes it. Raises what that compilation raises."""
        hs = self.hs
        mode = int(hs.HS_MODE_BLOCK)
        key = _key(expressions, flags, mode)
        entry = self.stored.get(key)
        if entry is not None and _checksum(entry[1]) == entry[0]:
            try:
                db = hs.loadb(entry[1], mode)
            except Exception:  # noqa: BLE001 - hyperscan.error: another version or platform, damaged bytes: compile
                db = None
            if db is not None:
                self.stats["hits"] += 1
                self.used[key] = entry
                return db
        db = hs.Database(mode=mode)
        db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=flags)
        self.stats["misses"] += 1
        if self.path is not None:
            try:
                blob = bytes(hs.dumpb(db))
            except Exception:  # noqa: BLE001 - hyperscan.error: the database is used, only not kept
                return db
            self.used[key] = (_checksum(blob), blob)
        return db

    def save(self) -> bool:
        """Write the databases used to the cache file when one was compiled anew (a failure to write is ignored);
        returns whether it was written."""
        if self.path is None or not self.stats["misses"] or not self.used:
            return False
        from ..base.codecache import write_cache  # noqa: PLC0415 lazy: start-up

        return write_cache(self.path, self.used, FILE_PREFIX)


__all__ = ["FILE_PREFIX", "DatabaseCache", "cache_file", "read_cache"]
