"""What identifies the code that makes a verdict (:func:`tool_stamp`), for the stamps of the project's stores
(the verdict cache's context stamp, :func:`memzoi.stores.verdictcache.context_stamp`, and the index's,
:func:`memzoi.stores.index_fresh.index_stamp`): an edited checkout, or a reproducible or Nix-style install whose files all
carry one clamped mtime, changes findings without changing the version.

So the stamp covers the installed code itself: a BLAKE3 digest of the content of every ``.py`` file of the
installed ``memzoi`` package (:func:`source_digest`). Hashing them all (about 150 files, 1.2 MB) costs some 25 ms,
so each file's digest is kept in the memzoi home (``memzoi-lsp-toolstamp-<key>.json``, private) under its stat
stamp and reused by the one freshness rule of the project's stores (:mod:`memzoi.base.freshness`: the stat vouches
only where the file system keeps a ctime that cannot be set back, outside the racy window, and a sampled share is
hashed anyway). A missing, damaged or unwritable digest file only costs the hashing.
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import blake3

from .. import __version__
from ..base import freshness

#: The digest files' names after the home's prefix (one file per digested folder).
FAMILY = "toolstamp-"
#: One file's kept digest as stored in the digest file: ``[size, mtime_ns, ino, ctime_ns, checked_ns, hex digest]``.
_Item = list[int | str]


class _Kept(NamedTuple):
    """One file's kept digest, read from its stored :data:`_Item`: the stat stamp it was made under, when it was
    last confirmed by reading (ns since the epoch) and the hex BLAKE3 digest of the file's content."""

    stamp: freshness.Stamp
    checked_ns: int
    digest: str

    def stored(self) -> _Item:
        """The :data:`_Item` kept in the digest file."""
        return [*self.stamp, self.checked_ns, self.digest]


def _kept(raw: object) -> _Kept | None:
    """The kept digest in ``raw`` (one value of the digest file), or ``None`` when it is not an :data:`_Item` (a
    damaged file: the file is then hashed again)."""
    if not isinstance(raw, list) or len(raw) != 6:
        return None
    *numbers, digest = raw
    if not all(type(n) is int for n in numbers) or not isinstance(digest, str):
        return None
    size, mtime_ns, ino, ctime_ns, checked_ns = numbers
    return _Kept((size, mtime_ns, ino, ctime_ns), checked_ns, digest)


def _sources(top: str) -> list[tuple[str, str]]:
    """``(path relative to top, absolute path)`` of every ``.py`` file below ``top`` (not ``__pycache__``),
    sorted."""
    out: list[tuple[str, str]] = []
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            stack.append(e.path)
                    elif e.name.endswith(".py"):
                        out.append((e.path[len(top) :], e.path))
        except OSError:
            out.append((d[len(top) :] + "/", d))  # an unreadable folder still counts, as unreadable
    return sorted(out)


def _load(store: Path | None) -> dict[str, object]:
    if store is None:
        return {}
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(store: Path, items: dict[str, _Item]) -> None:
    from ..base.privatewrite import write_private  # noqa: PLC0415 lazy: start-up
    from ..base.runtime import HOME_FILE_PREFIX, private_dir  # noqa: PLC0415 lazy: start-up

    try:
        private_dir(store.parent)
    except OSError:  # a read-only home: the digests are taken again next time
        return
    # a full disk leaves no temporary file; a killed writer's goes at the next write of any folder's digests
    write_private(store, json.dumps(items, separators=(",", ":")).encode(), family=f"{HOME_FILE_PREFIX}{FAMILY}")


def source_digest(top: str, store: Path | None = None) -> str:
    """Hex BLAKE3 over the relative path and content digest of every ``.py`` file below ``top``. ``store`` is
    the file keeping each file's digest under its stat (see the module docstring; ``None``: hash everything).
    Never raises: an unreadable file counts as unreadable."""
    kept = _load(store)
    fresh: dict[str, _Item] = {}
    total = blake3.blake3()
    # written again only when a digest changed or a new stamp lets the stat vouch (freshness.restamp_gains)
    dirty = False
    for rel, path in _sources(top):
        item = _kept(kept.get(rel))
        st = freshness.lstat(path)
        if st is not None and item is not None and freshness.vouches(st, item.stamp, item.checked_ns):
            digest = item.digest
            fresh[rel] = item.stored()
        else:
            read = freshness.read_stable(path)
            if read is None:
                digest = "unreadable"
            else:
                content, stamp, checked_ns = read
                digest = blake3.blake3(content).hexdigest()
                fresh[rel] = [*stamp, checked_ns, digest]
                gains = item is None or freshness.restamp_gains(item.stamp, item.checked_ns, stamp, checked_ns)
                dirty = dirty or gains or item is None or item.digest != digest
        total.update(f"{rel}\0{digest}\n".encode("utf-8", "surrogateescape"))
    if store is not None and (dirty or fresh.keys() != kept.keys()):
        _save(store, fresh)
    return total.hexdigest()


def _store(top: str) -> Path | None:
    from ..base.runtime import HOME_FILE_PREFIX, memzoi_home  # noqa: PLC0415 lazy: start-up

    try:
        key = blake3.blake3(top.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return memzoi_home() / f"{HOME_FILE_PREFIX}{FAMILY}{key}.json"
    except (OSError, RuntimeError, ValueError):
        return None


def folder_stamp(top: str) -> str:
    """:func:`source_digest` of the ``.py`` files below ``top`` (another package's code, such as the language
    server's, whose output a stored publish set keeps: :mod:`memzoi.stores.publishset`), each file's digest kept in
    the memzoi home as the tool stamp keeps its own."""
    return source_digest(top, _store(top))


def package_dir() -> str:
    """The folder of the ``memzoi`` package, whose whole source the stamp digests (found from this module's depth in
    the package, so it stays the package's folder wherever the module lives in it)."""
    top = os.path.abspath(__file__)
    for _ in range(__name__.count(".")):
        top = os.path.dirname(top)
    return top


@lru_cache(maxsize=1)
def tool_stamp() -> str:
    """What identifies the code that makes findings: memzoi's version, the digest of its installed source
    (:func:`source_digest`), Python's version and the location and stat of the parsing libraries (without
    importing them). Cached per process."""
    import importlib.util  # noqa: PLC0415 lazy: start-up

    top = package_dir()
    parts = [__version__, sys.version, source_digest(top, _store(top))]
    for name in ("yaml", "pydantic_core", "regex", "blake3"):
        try:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            st = os.stat(origin) if origin else None
            parts.append(
                f"{name}:{origin}:{st.st_size if st else ''}:{st.st_mtime_ns if st else ''}:"
                f"{st.st_ino if st else ''}:{st.st_ctime_ns if st else ''}"
            )
        except (ImportError, ValueError, OSError):
            parts.append(f"{name}:absent")
    return blake3.blake3("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


__all__ = ["FAMILY", "folder_stamp", "source_digest", "tool_stamp"]
