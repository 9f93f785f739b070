"""The one freshness rule of the project's stores: when a stored fact about a file (a verdict cache entry,
:mod:`memzoi.stores.verdictcache`; an index row, :mod:`memzoi.stores.index`) may be trusted for the file's current bytes without
reading them, and how it is confirmed when it may not.

**The stat stamp** is ``(size, mtime_ns, inode, ctime_ns)`` of the regular file (never through a symlink), taken
with the bytes the stored fact was made from, together with ``checked_ns``, the wall clock just before they were
read (:func:`read_stable`). A stored fact is trusted by stat alone (:func:`vouches`) only when all of these hold:

- the current stamp equals the stored one;
- it is not *racy*: the file's mtime and ctime were older than ``checked_ns`` by :data:`RACY_NS` (a file written
  within the file system's timestamp granularity of the read may have been written again in the same tick with
  the same size; git's "racy git" rule, ``Documentation/technical/racy-git.txt``);
- the file system keeps a ctime that cannot be set back (:func:`ctime_kept`). A program can put the mtime back
  (``os.utime``, ``touch -d``, ``rsync -t``, ``cp -p``), but on ext4, XFS, Btrfs and tmpfs doing so sets the ctime to
  now, so the stamp changes. Where the ctime follows the mtime (FUSE file systems such as sshfs, rclone and s3fs;
  FAT, exFAT and NTFS media; 9p, SMB and NFS mounts) a same-size edit with the mtime put back leaves the stamp
  whole, so there the content hash decides, always. The mount's file-system type is read from
  ``/proc/self/mountinfo`` by the file's device number; on a type this module does not know, a file whose ctime
  equals its mtime is hashed (only a file system that keeps a separate ctime can show them apart);
- it is not drawn for a re-hash (:func:`due`): a small random share (:data:`SAMPLE_SHARE`) of trusted entries,
  and every entry last confirmed more than :data:`MAX_TRUST_NS` ago, is hashed anyway, so a lying stamp cannot
  hold forever.

Otherwise, when the size still matches, the file is read and its BLAKE3 digest compared with the stored one
(:func:`confirm`); equal bytes keep the stored fact (under the new stamp), other bytes invalidate it.
"""

from __future__ import annotations

import os
import random
import stat as statmod
import struct
import time
from typing import Any, NamedTuple

import blake3

#: A file changed less than this long before it was read is confirmed by hash, not by stat: file times have the
#: granularity of the file system (2 s on FAT, a clock tick on Linux).
RACY_NS = 2_000_000_000
#: The racy window of a file whose times are kept finer than a second (:func:`racy_window`).
FINE_RACY_NS = 100_000_000
#: The share of entries the stat vouches for that are hashed anyway at each use.
SAMPLE_SHARE = 1 / 64
#: An entry last confirmed by reading longer ago than this (wall clock, ns) is hashed at its next use: one day.
MAX_TRUST_NS = 86_400 * 1_000_000_000
#: File-system types (``/proc/self/mountinfo``) whose ctime is set to now by any change, ``utime`` included.
KEEPS_CTIME = frozenset(
    {
        "ext2",
        "ext3",
        "ext4",
        "xfs",
        "btrfs",
        "tmpfs",
        "ramfs",
        "zfs",
        "f2fs",
        "overlay",
        "bcachefs",
        "jfs",
        "reiserfs",
        "nilfs2",
    }
)
#: File-system types (or type prefixes, ending in ``*``) whose ctime follows the mtime or is not kept at all.
NO_CTIME = (
    "fuse*",
    "vfat",
    "exfat",
    "msdos",
    "fat",
    "ntfs",
    "ntfs3",
    "9p",
    "cifs",
    "smb3",
    "smbfs",
    "nfs*",
    "virtiofs",
    "hfsplus",
    "udf",
    "iso9660",
)

#: ``(size in bytes, mtime_ns, inode, ctime_ns)`` of a regular file.
Stamp = tuple[int, int, int, int]


class Stat(NamedTuple):
    """A file's :data:`Stamp` and the device it is on (``st_dev``, to ask :func:`fs_type`)."""

    stamp: Stamp
    dev: int


def lstat(path: str | os.PathLike[str]) -> Stat | None:
    """The stamp and device of ``path`` when it is a regular file and not a symlink; ``None`` otherwise (missing,
    unreadable, a folder, a link)."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return of_stat(st) if statmod.S_ISREG(st.st_mode) else None


def of_stat(st: os.stat_result) -> Stat:
    """:class:`Stat` of a ``stat_result`` the caller already has."""
    return Stat((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns), st.st_dev)


#: bytes asked of each read past the size a stat gave (or of each read without one)
_READ_CHUNK = 1 << 16


def _read_to_end(fd: int, size: int = 0) -> bytes:
    """Every byte of the open file ``fd`` from its position on, read until a read returns nothing (as
    ``open(path, "rb").read()`` gives them); ``size``: the size a stat just gave, read in one go."""
    parts: list[bytes] = []
    ask = max(size + 1, _READ_CHUNK)
    while chunk := os.read(fd, ask):
        parts.append(chunk)
        ask = _READ_CHUNK
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the file at ``path``: ``open(path, "rb").read()`` without the buffered file objects, which
    cost half of reading a small file (some 5 of 10 us; issue 29, cold ``check``). Raises the same ``OSError``
    (a missing or unreadable file; ``IsADirectoryError`` from the read of a directory)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return _read_to_end(fd)
    finally:
        os.close(fd)


def read_stable(path: str | os.PathLike[str]) -> tuple[bytes, Stamp, int] | None:
    """``(bytes, stamp, checked_ns)`` of the file at ``path``, with the stat taken on the open file before and
    after the read; ``None`` when it cannot be read or changed while it was read (such bytes are never stored).
    ``checked_ns`` is the wall clock just before the read."""
    checked = time.time_ns()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            before = os.fstat(fd)
            data = _read_to_end(fd, before.st_size)
            after = os.fstat(fd)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None
    stamp = (before.st_size, before.st_mtime_ns, before.st_ino, before.st_ctime_ns)
    if stamp != (after.st_size, after.st_mtime_ns, after.st_ino, after.st_ctime_ns) or len(data) != before.st_size:
        return None
    return data, stamp, checked


_MOUNTS: dict[int, str] = {}


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def mount_table() -> bytes:
    """This process's mount table as read (``/proc/self/mountinfo``; ``b""`` where there is none): equal readings
    mean no file system was mounted or unmounted in between (a mount hides the files below its point and raises no
    change notification: :mod:`memzoi.stores.changefeed` walks when it changes)."""
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def mounted_below(folder: str, table: bytes) -> bool:
    """Whether the mount table ``table`` (:func:`mount_table`) has a mount point below ``folder`` (an absolute path,
    its links resolved here; field 5 of ``/proc/self/mountinfo`` is the mount point, octal-escaped)."""
    prefix = os.path.realpath(folder) + os.sep
    for line in table.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split(" ")
        if len(parts) > 4 and _unescape(parts[4]).startswith(prefix):
            return True
    return False


def _read_mounts() -> dict[int, str]:
    """device number → file-system type of every mount of this process (``/proc/self/mountinfo``: field 3 is
    ``major:minor``, the type follows the ``-`` separator); empty where there is no such file."""
    out: dict[int, str] = {}
    for line in mount_table().decode("utf-8", "replace").splitlines():
        parts = line.split(" ")
        try:
            major, minor = parts[2].split(":")
            kind = parts[parts.index("-", 6) + 1]
        except (IndexError, ValueError):
            continue
        out.setdefault(os.makedev(int(major), int(minor)), _unescape(kind))
    return out


def fs_type(dev: int) -> str:
    """The file-system type of the mount with device number ``dev`` (``ext4``, ``fuse.sshfs``, ``vfat`` …), ``""``
    when it cannot be told. Read once per process and again when a device appears that was not mounted then."""
    kind = _MOUNTS.get(dev)
    if kind is None:
        _MOUNTS.clear()
        _MOUNTS.update(_read_mounts())
        kind = _MOUNTS.setdefault(dev, "")
    return kind


def lacks_ctime(kind: str) -> bool:
    """True when file-system type ``kind`` is one of :data:`NO_CTIME` (its ctime follows the mtime, or is not
    kept)."""
    return any(kind.startswith(p[:-1]) if p.endswith("*") else kind == p for p in NO_CTIME)


def ctime_kept(st: Stat) -> bool:
    """Whether the stat stamp ``st`` can vouch for the file's bytes: its file system keeps a ctime that cannot be
    set back (see the module docstring). A known type decides; on an unknown one, only a ctime apart from the
    mtime shows that one is kept."""
    return ctime_kept_on(st.dev, st.stamp)


def ctime_kept_on(dev: int, stamp: Stamp) -> bool:
    """:func:`ctime_kept` of the stamp ``stamp`` of a file on the device ``dev``."""
    kind = fs_type(dev)
    if kind in KEEPS_CTIME:
        return True
    if lacks_ctime(kind):
        return False
    return stamp[1] != stamp[3]


def due(checked_ns: int, now_ns: int | None = None) -> bool:
    """Whether an entry confirmed by reading at ``checked_ns`` is drawn to be hashed anyway: older than
    :data:`MAX_TRUST_NS`, or in the random share :data:`SAMPLE_SHARE`."""
    now = time.time_ns() if now_ns is None else now_ns
    return now - checked_ns > MAX_TRUST_NS or random.random() < SAMPLE_SHARE


def not_racy(stamp: Stamp, checked_ns: int, window: int | None = None) -> bool:
    """True when the file's mtime and ctime were older than ``checked_ns`` by ``window`` (default :data:`RACY_NS`,
    read at each call; or :func:`racy_window` of the stamp)."""
    return max(stamp[1], stamp[3]) < checked_ns - (RACY_NS if window is None else window)


def racy_window(stamp: Stamp) -> int:
    """The racy window fitting ``stamp``'s file system: :data:`FINE_RACY_NS` where both its mtime and ctime have a
    part below the second (the file system keeps times finer than a second: its granularity is then the kernel's
    clock tick, at most 10 ms, or its own, 10 ms on exFAT), else :data:`RACY_NS` (whole seconds: 2 s on FAT, 1 s
    on ext3). Used where the racy rule would otherwise judge again every file written shortly before a scan."""
    fine = stamp[1] % 1_000_000_000 and stamp[3] % 1_000_000_000
    return FINE_RACY_NS if fine else RACY_NS


def vouches(current: Stat | None, stored: Stamp | list[Any] | tuple[Any, ...], checked_ns: int) -> bool:
    """True when the stat alone vouches that the file's bytes are still those a stored fact was made from: same
    stamp, not racy, a kept ctime and not drawn for a re-hash (the module docstring). False means: read and
    :func:`confirm`, or treat as changed."""
    return (
        current is not None
        and current.stamp == tuple(stored)
        and not_racy(current.stamp, checked_ns)
        and ctime_kept(current)
        and not due(checked_ns)
    )


def restamp_gains(stored: Stamp | list[Any] | tuple[Any, ...], checked_ns: int, read: Stamp, read_ns: int) -> bool:
    """Whether keeping a stored fact (made from bytes with the stat stamp ``stored``, read at ``checked_ns``) under
    the stamp ``read`` and clock ``read_ns`` of a read that confirmed the same bytes (:func:`confirm`) lets the stat
    vouch where the stored stamp would not: the stamp differs (a rename, a ``touch``), the stored one was racy and
    the read's is not, or it was confirmed more than half of :data:`MAX_TRUST_NS` ago. Otherwise the stored stamp
    says all the new one would (a file drawn for a re-hash, one on a file system without a kept ctime, whose bytes
    are hashed every time anyway; one still racy, such as a file dated after the clock, read again at each use until
    a read finds it out of the window) and a caller need not write it again. Either stamp is true of the bytes: this
    only saves writes, the rule is the same."""
    return (
        tuple(read) != tuple(stored)
        or (not not_racy(tuple(stored), checked_ns) and not_racy(read, read_ns))
        or read_ns - checked_ns > MAX_TRUST_NS // 2
    )


def trusted(stamp: Stamp, dev: int, stored: Stamp | list[Any] | tuple[Any, ...], checked_ns: int, now_ns: int) -> bool:
    """:func:`vouches` for a stamp and device the caller has already taken (``stamp`` of a regular file on the
    device ``dev``), at the wall clock ``now_ns`` (read once for a whole batch of files): the same four conditions
    written out in one function, for a caller that asks it of every file of a project (a search's refresh asks it
    55,000 times at 50,000 records; a property test holds it equal to :func:`vouches`)."""
    if stamp != tuple(stored) or max(stamp[1], stamp[3]) >= checked_ns - RACY_NS:  # another stamp, or racy
        return False
    kind = fs_type(dev)
    if kind not in KEEPS_CTIME and (lacks_ctime(kind) or stamp[1] == stamp[3]):  # ctime_kept_on
        return False
    return now_ns - checked_ns <= MAX_TRUST_NS and random.random() >= SAMPLE_SHARE  # not due


def confirm(path: str | os.PathLike[str], size: int, digest: bytes) -> tuple[bytes, Stamp, int] | None:
    """Read the file at ``path`` (:func:`read_stable`) and return the read when its bytes are those of BLAKE3
    ``digest`` (and ``size`` bytes long); ``None`` when they are not or cannot be read. The caller keeps its stored
    fact under the read's stamp and clock."""
    read = read_stable(path)
    if read is None or read[1][0] != size or blake3.blake3(read[0]).digest() != digest:
        return None
    return read


#: :func:`pack_stamp`'s layout: size, mtime_ns, inode (unsigned), ctime_ns, checked_ns, then the 32-byte digest.
_PACKED = struct.Struct("<qqQqq")


def pack_stamp(digest: bytes, stamp: Stamp, checked_ns: int) -> bytes | None:
    """The ``digest`` (BLAKE3, 32 bytes), ``stamp`` ``(size, mtime_ns, inode, ctime_ns)`` and read clock
    ``checked_ns`` of a file's bytes in 72 bytes (as a tuple of ints and a bytes object they held some 380 B a file,
    held for every file until a check's report is settled and stored); ``None`` when a value does not fit."""
    try:
        return _PACKED.pack(*stamp, checked_ns) + digest
    except (struct.error, TypeError):
        return None


def unpack_stamp(packed: bytes) -> tuple[bytes, Stamp, int]:
    """:func:`pack_stamp`'s ``(digest, stamp, checked_ns)`` back. Raises ``struct.error`` for bytes it did not make."""
    size, mtime, ino, ctime, checked = _PACKED.unpack_from(packed)
    return packed[_PACKED.size :], (size, mtime, ino, ctime), checked


def stamp_list(v: list[Any] | bytes) -> list[Any]:
    """A file's stamp as the stores' lists keep it, ``[size, mtime_ns, inode, ctime_ns, checked_ns, digest hex]``
    (a stored report's inputs, :data:`memzoi.stores.replay.Stamps`), from that list or from :func:`pack_stamp`'s
    bytes."""
    if isinstance(v, list):
        return v
    digest, stamp, checked = unpack_stamp(v)
    return [*stamp, checked, digest.hex()]


__all__ = [
    "KEEPS_CTIME",
    "MAX_TRUST_NS",
    "NO_CTIME",
    "RACY_NS",
    "SAMPLE_SHARE",
    "Stamp",
    "Stat",
    "confirm",
    "ctime_kept",
    "ctime_kept_on",
    "due",
    "fs_type",
    "lacks_ctime",
    "lstat",
    "not_racy",
    "racy_window",
    "of_stat",
    "pack_stamp",
    "read_bytes",
    "read_stable",
    "restamp_gains",
    "stamp_list",
    "trusted",
    "unpack_stamp",
    "vouches",
]
