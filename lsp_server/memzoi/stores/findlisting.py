"""The plane's listing taken by GNU find in a process of its own (:func:`start`), for a one-shot ``memzoi search``:
the stat of 55,000 files at 50,000 records costs about 0.2 s of CPU from Python (issue 29, target: a search at
50,000 records in 0.25 s); find takes the same stats in C while the interpreter imports the rest, on the other CPU.

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

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from ..base.freshness import Stat
from ..judge.workspace import MEMZOI_DIR, plane_file_name, utf8_name

if TYPE_CHECKING:
    from .planelisting import Listing

# The Python walk (planelisting, with its threads) is imported where it is used: find is started first.

#: What find prints of each file: device, inode, size, mtime, ctime (``seconds.fraction``), path; NUL-terminated.
FORMAT = "%D %i %s %T@ %C@ %p\\0"
_FRACTION = 10  # digits after the point of GNU find's %T@ and %C@


def _command(starts: list[str]) -> list[str] | None:
    """find's argument list for the folders ``starts`` (relative to the project root), ``None`` without find."""
    exe = shutil.which("find")
    if exe is None:
        return None
    # Every regular file but hidden ones: the names are judged in the parse (a name test per file in find cost a
    # tenth of its CPU time at 50,000 records).
    return [exe, *starts, "-name", ".*", "-prune", "-o", "-type", "f", "-printf", FORMAT]


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


def _scratch() -> BinaryIO:
    """An anonymous file for find to write to: ``os.memfd_create`` (Linux), else ``tempfile.TemporaryFile``; both
    are gone once closed. Raises ``OSError``."""
    if hasattr(os, "memfd_create"):
        try:
            return open(os.memfd_create("memzoi-find", os.MFD_CLOEXEC), "w+b")  # noqa: SIM115 closed by Finding
        except OSError:
            pass  # a kernel or seccomp profile without memfd
    import tempfile  # noqa: PLC0415 lazy: start-up (find is started first)

    return tempfile.TemporaryFile()  # noqa: SIM115 closed by Finding


class Finding:
    """A find started by :func:`start`, writing its output ``out`` and errors ``err`` to anonymous files (not
    pipes: 4 MB at 50,000 records would block find on a 64 KB pipe until :meth:`wait` reads it, after the caller's
    imports, where find is meant to run beside them); :meth:`wait` gives its :class:`Found`, or ``None`` where it
    failed."""

    def __init__(self, root: str, dev: int, proc: subprocess.Popen[bytes], out: BinaryIO, err: BinaryIO) -> None:
        self.root, self.dev, self.proc, self.out, self.err = root, dev, proc, out, err

    def wait(self) -> Found | None:
        """find's output once it has exited; ``None`` when it exited other than 0, wrote to stderr or its output
        cannot be read back (the caller then walks in Python). Closes the anonymous files."""
        with self.out, self.err:
            if self.proc.wait() != 0:
                return None
            try:
                self.err.seek(0)
                if self.err.read(1):
                    return None
                self.out.seek(0)
                out = self.out.read()
            except OSError:
                return None
        return Found(self.root, self.dev, out)

    def close(self) -> None:
        """Stop find and close the anonymous files, for a listing no one will wait for. Never raises."""
        with contextlib.suppress(OSError):
            self.proc.kill()  # nothing when it was reaped already
        self.proc.wait()
        self.out.close()
        self.err.close()


def start(project_root: str | os.PathLike[str]) -> Finding | None:
    """Start find over the project's ``records`` and ``proposals`` (those that are folders, not symlinks, below a
    ``.memzoi`` that is not a symlink: the folders :func:`memzoi.stores.planelisting.walk` lists); ``None`` where
    there is nothing to list or find cannot be started (the caller walks in Python). Never raises ``OSError``."""
    root = os.path.abspath(project_root)
    memzoi_dir = os.path.join(root, MEMZOI_DIR)
    try:
        if os.path.islink(memzoi_dir):
            return None
        dev = os.stat(memzoi_dir).st_dev
        starts = [
            f"{MEMZOI_DIR}/{name}"
            for name in ("proposals", "records")
            if not os.path.islink(os.path.join(memzoi_dir, name)) and os.path.isdir(os.path.join(memzoi_dir, name))
        ]
        argv = _command(starts) if starts else None
        if argv is None:
            return None
        env = {**os.environ, "LC_ALL": "C"}  # names as bytes, whatever the user's locale
        with contextlib.ExitStack() as opened:  # both files closed again unless find starts
            out, err = opened.enter_context(_scratch()), opened.enter_context(_scratch())
            proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            opened.pop_all()
    except (OSError, ValueError):
        return None
    return Finding(root, dev, proc, out, err)


class Ahead:
    """The listing of the project ``root`` taken ahead, for a one-shot caller with its imports to do meanwhile
    (``memzoi search``): by find in a process of its own (:func:`start`), else by the Python walk on a thread
    (:func:`memzoi.stores.planelisting.walk_ahead`). Calling it waits and gives find's :class:`Found`, or the
    walk's :class:`memzoi.stores.planelisting.Listing` where find cannot be used. ``started_ns``
    (``time.monotonic_ns``) is taken before anything is listed: every change completed before it is in the listing
    (:func:`memzoi.stores.calllisting.valid`)."""

    def __init__(self, project_root: str | os.PathLike[str]) -> None:
        self.started_ns = time.monotonic_ns()
        self.root = os.path.abspath(project_root)
        self.finding = start(self.root)
        self.walking: Callable[[], Listing] | None = None
        if self.finding is None:
            from .planelisting import walk_ahead  # noqa: PLC0415 lazy: start-up

            self.walking = walk_ahead(self.root)

    def __call__(self) -> Listing | Found:
        from .planelisting import walk  # noqa: PLC0415 lazy: start-up

        if self.walking is not None:
            return self.walking()
        assert self.finding is not None
        found = self.finding.wait()
        return found if found is not None else walk(self.root)

    def close(self) -> None:
        """Give up a listing no one will take: find is stopped (a walk on a thread is left to end). Never raises."""
        if self.finding is not None:
            self.finding.close()


__all__ = ["FORMAT", "Ahead", "Finding", "Found", "format_item", "parse_item", "start"]
