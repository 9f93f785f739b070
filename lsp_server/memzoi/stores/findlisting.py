"""The plane's listing taken by GNU find in a process of its own (:func:`memzoi.stores.findstart.start`), for a one-shot
``memzoi search``: the stat of 55,000 files at 50,000 records costs about 0.2 s of CPU from Python (issue 29, target: a
search at 50,000 records in 0.25 s); find takes the same stats in C while the interpreter imports the rest, on the other
CPU.

What find prints is :data:`FORMAT` per file (NUL-terminated): device, inode, size, mtime and ctime as
``seconds.fraction`` (GNU find prints the ``timespec`` exactly: ten fraction digits, the nanoseconds and a ``0``),
then the path relative to the project root. :meth:`Found.listing` turns that into the
:class:`memzoi.stores.planelisting.Listing` the Python walk (:func:`memzoi.stores.planelisting.walk`) gives, by the
same rules (``tests/test_find_listing.py`` holds the two equal on trees of odd entries): find prunes hidden entries,
never follows a symlink (``-P``, its default) and prints regular files only; the parse keeps a file only where
:func:`memzoi.judge.workspace.plane_file_name` takes it and drops a file below a folder whose name is not UTF-8 (the
walk does not enter one). Where find is missing, is not GNU find (BSD and macOS find have no ``-printf``), exits
other than 0 (an unreadable folder, a file gone while it was listed) or prints a time not so spelt, the caller
walks in Python (:func:`memzoi.stores.planelisting.walk_ahead`).

The bytes themselves are what :mod:`memzoi.stores.currentlisting` compares: a listing byte for byte the one a refresh
found current needs no comparison of its stamps.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..base.freshness import Stat
from ..judge.workspace import plane_file_name, utf8_name
from .findstart import FORMAT, Finding, held, start, take_early

if TYPE_CHECKING:
    from .planelisting import Listing

# The Python walk (planelisting, with its threads) is imported where it is used: find is started first.

_FRACTION = 10  # digits after the point of GNU find's %T@ and %C@


@dataclass
class Found:
    """find's output ``out`` for the project ``root`` (absolute) whose ``.memzoi`` is on the device ``dev``."""

    root: str
    dev: int
    out: bytes
    valid: bool = True
    _listing: Listing | None = field(default=None, repr=False)

    @property
    def items(self) -> list[bytes]:
        """One item per file find printed, in find's order."""
        return self.out.split(b"\0")[:-1]

    def listing(self) -> Listing:
        """The :class:`memzoi.stores.planelisting.Listing` of the output (parsed once); where an item is not spelt
        as :data:`FORMAT`, the Python walk's instead (:func:`memzoi.stores.planelisting.walk`), and ``valid``
        is then false."""
        if self._listing is None:
            try:
                self._listing = self._parse()
            except ValueError:
                from .planelisting import walk  # noqa: PLC0415 lazy: start-up

                self.valid = False
                self._listing = walk(self.root)
        return self._listing

    def paths(self) -> list[str]:
        """:meth:`memzoi.stores.planelisting.Listing.paths` of :meth:`listing`."""
        return self.listing().paths()

    def _parse(self) -> Listing:
        """:func:`parse_item` of every item, written out (55,000 items at 50,000 records)."""
        from .planelisting import Listing  # noqa: PLC0415 lazy: start-up

        out = Listing(self.root, dev=self.dev)
        stamps, devs, folders, main = out.stamps, out.devs, out.folders, self.dev
        prefix, decode, ns = self.root + os.sep, os.fsdecode, _ns
        for item in self.items:
            dev, ino, size, mtime, ctime, path = item.split(b" ", 5)
            key = decode(path)
            head, _, name = key.rpartition("/")
            if not plane_file_name(name) or not (key.isascii() or utf8_name(key)):
                ns(mtime), ns(ctime)  # spelt as FORMAT all the same
                continue
            stamps[key] = (int(size), ns(mtime), int(ino), ns(ctime))
            if int(dev) != main:
                devs[key] = int(dev)
            folders.add(prefix + head if os.sep == "/" else prefix + head.replace("/", os.sep))
        return out


def parse_item(item: bytes) -> tuple[str | None, Stat]:
    """The index key (``None`` where the walk would not take the file) and the stat of one item of find's output.
    Raises ``ValueError`` for an item not spelt as :data:`FORMAT`."""
    dev, ino, size, mtime, ctime, path = item.split(b" ", 5)
    stat = Stat((int(size), _ns(mtime), int(ino), _ns(ctime)), int(dev))
    key = os.fsdecode(path)
    name = key.rpartition("/")[2]
    if not plane_file_name(name) or not utf8_name(key):
        return None, stat
    return key, stat


def _ns(text: bytes) -> int:
    """Nanoseconds of GNU find's ``seconds.fraction`` (the seconds of the ``timespec``, negative before 1970, then
    its nanoseconds and a ``0``: ``-2.2500000000`` is -1.75 s). Raises ``ValueError`` for another spelling (a
    rounded time would not be the stamp ``os.lstat`` gives)."""
    seconds, point, fraction = text.partition(b".")
    if not point or len(fraction) != _FRACTION or not fraction.isdigit() or fraction[-1:] != b"0":
        raise ValueError(f"not a time of GNU find: {text!r}")
    return int(seconds) * 1_000_000_000 + int(fraction[:9])


def format_item(key: str, st: Stat) -> bytes:
    """The item find prints (:data:`FORMAT`) of the file with index key ``key`` and stat ``st`` (for tests: the
    inverse of :func:`parse_item`)."""
    size, mtime, ino, ctime = st.stamp

    def t(ns: int) -> str:
        return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}0"

    return f"{st.dev} {ino} {size} {t(mtime)} {t(ctime)} ".encode() + os.fsencode(key) + b"\0"


def collect(finding: Finding) -> Found | None:
    """The :class:`Found` of a find :func:`memzoi.stores.findstart.start` started, once it has exited; ``None``
    where its output cannot be used (:meth:`memzoi.stores.findstart.Finding.wait`)."""
    out = finding.wait()
    return None if out is None else Found(finding.root, finding.dev, out)


class Ahead:
    """The listing of the project ``root`` taken ahead, for a one-shot caller with its imports to do meanwhile (``memzoi
    search``): by find in a process of its own (the one :func:`memzoi.stores.findstart.start_early` started for this
    root, else :func:`memzoi.stores.findstart.start`), else by the Python walk on a thread
    (:func:`memzoi.stores.planelisting.walk_ahead`). Calling it waits and gives find's :class:`Found`, or the walk's
    :class:`memzoi.stores.planelisting.Listing` where find cannot be used. :meth:`close` stops a find that was never
    waited for. ``started_ns`` (``time.monotonic_ns``) was taken before anything was listed (for find taken early, when
    that find started): every change completed before it is in the listing (:func:`memzoi.stores.calllisting.valid`)."""

    def __init__(self, project_root: str | os.PathLike[str]) -> None:
        self.started_ns = time.monotonic_ns()
        self.root = os.path.abspath(project_root)
        self.finding: Finding | None = None
        with held(self.close):  # kept before a SIGTERM may end the process
            self.finding = take_early(self.root) or start(self.root)
        if self.finding is not None:
            self.started_ns = self.finding.started_ns
        self.walking: Callable[[], Listing] | None = None
        self.got: Listing | Found | None = None
        if self.finding is None:
            from .planelisting import walk_ahead  # noqa: PLC0415 lazy: start-up

            self.walking = walk_ahead(self.root)

    def __call__(self) -> Listing | Found:
        from .planelisting import walk  # noqa: PLC0415 lazy: start-up

        if self.walking is not None:
            return self.walking()
        if self.got is None:
            finding, self.finding = self.finding, None
            found = collect(finding) if finding is not None else None
            self.got = found if found is not None else walk(self.root)
        return self.got

    def close(self) -> None:
        """Stop and reap find where the listing was not asked for (a rebuild lists by itself, a call's listing no
        one took); a walk on a thread is left to end. Never raises."""
        if self.finding is not None:
            self.finding.discard()
            self.finding = None


__all__ = ["FORMAT", "Ahead", "Finding", "Found", "collect", "format_item", "parse_item", "start"]
