"""One resident file on disk: reading, drift checks, backups and exact snapshot replacement (reference
``zuno-memory.md`` §2 "Exact snapshot replacement").

A :class:`ResidentStore` remembers the file's stamp (mtime and size, taken before the content) when it loads.
:meth:`ResidentStore.replace_exact` then re-reads the file and runs the drift checks, structural ones first:

- ``RoundTrip``: the trimmed text differs from its entries serialized again (a hand edit Zuno would not write);
- ``EntryOverflow``: one entry is larger than the whole cap;
- ``Stamp``: mtime or size differs from what this store saw at load (a file appearing after load counts).

Bytes are decoded by :mod:`.encoding` (UTF-8, with or without a byte order mark, LF, CRLF or CR; UTF-16/32 and
other undecodable files are refused ``unreadable``, never written), and a write keeps the file's layout (its line
endings, byte order mark and surrounding whitespace); a file mixing line endings is drift (``LineEndings``).
On drift the exact bytes are copied to ``<name>.bak.<unix-seconds>`` beside the file (a copy already holding them
is named instead) and the write is refused (``external_drift``), the file untouched; a proposal or a preview that
finds drift is refused with nothing copied (it would write nothing). Then the current entries must equal the expected snapshot
(``state_mismatch`` otherwise), the replacement is threat-scanned and capped, and the file is replaced with
:func:`memzoi.base.fsutil.atomic_write`, keeping its mode. Writers hold memzoi's lock of the file
(:func:`resident_lock`) and the companion lock Zuno's writers take (:func:`write_lock`).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..base.fsio import ReadOnlyTarget, mount_point
from ..base.fsutil import UnsafeWriteError, atomic_write, read_state
from ..base.gitexclude import exclude, hide_temporaries
from ..base.lock import DEFAULT_TIMEOUT, LockBusy, lifecycle_lock, path_lock
from ..base.newfolders import make_folders
from ..base.runtime import RESIDENT_LOCKS, memzoi_home, private_dir, runtime_key, tighten_tree
from ..base.runtime_errors import classify, runtime_error
from ..ledger import Refusal
from .encoding import Layout, decode, mixed_endings
from .format import parse, round_trips, serialize
from .locator import Operation, check_cap, project
from .scope import ResidentFile
from .threats import refuse_threats

#: Mode of a resident file memzoi creates (an existing file keeps its own).
NEW_FILE_MODE = 0o644

Stamp = tuple[int, int] | None


def runtime_root() -> Path:
    """``${MEMZOI_HOME:-~/.memzoi}``, created with mode 0700: resident candidates and locks live there, never
    in a repository."""
    return private_dir(memzoi_home())


#: The suffix of the lock companion Zuno's writers take beside a resident file (``zuno_atomic_file::
#: PathWriteGuard``, ``crates/zuno-atomic-file/src/write_guard.rs`` @1131486: ``<name>.zuno-write-lock``).
WRITE_LOCK_SUFFIX = ".zuno-write-lock"
#: Folders whose repository already excludes the lock companions (checked once per process while they exist).
_hidden: dict[Path, bool] = {}
#: How long a write waits for the companion lock before refusing (seconds; Zuno itself never waits).
WRITE_LOCK_TIMEOUT = DEFAULT_TIMEOUT


def resolved(path: Path) -> Path:
    """``path`` with its folder's symlinks and ``..`` resolved, as far as they exist (Zuno
    ``canonical_destination``): one identity for a resident file however its folder is spelled
    (``$ZUNO_CONFIG_DIR`` through a symlink, say). The file's own name is kept: a symlinked resident file is
    refused before any write (:func:`read_file`), so no lock is taken beside whatever it points at."""
    return Path(os.path.realpath(path.parent)) / path.name


@contextmanager
def resident_lock(path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold memzoi's lock of resident file ``path`` (one lock file per *resolved* path under the runtime root):
    every memzoi process with the same ``MEMZOI_HOME`` (CLI, server, MCP) runs one operation on the file at a
    time, reconciliation and decisions included. Writers also take :func:`write_lock`, which excludes other
    programs. Raises :class:`Refusal` ``lock_busy`` after ``timeout`` s."""
    try:
        locks = private_dir(runtime_root() / RESIDENT_LOCKS)
        tighten_tree(locks)  # every lock folder, not only this file's: doctor reports them all
    except OSError as err:  # a full or read-only MEMZOI_HOME: named, with what to do
        raise runtime_error(err, memzoi_home() / RESIDENT_LOCKS, "directory") from err
    folder = locks / runtime_key("resident", [str(resolved(path)).encode()])
    try:
        with lifecycle_lock(path, timeout=timeout, runtime_dir=folder):
            yield
    except LockBusy as err:
        raise Refusal.of_local_path("lock_busy", f"{path}: {err}", path) from err


@contextmanager
def write_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the OS lock of ``<resolved name>.zuno-write-lock`` beside resident file ``path``, the lock Zuno's
    writers take (:data:`WRITE_LOCK_SUFFIX`), from before the file is checked until its write is recorded: memzoi
    and Zuno, and memzoi processes with different ``MEMZOI_HOME``, then never check-and-replace the file at the
    same time. The folder is created if needed (the write would create it), never wider than the folder above it
    (:func:`memzoi.base.newfolders.make_folders`). The companion stays beside the file,
    where Zuno locks it, and is kept out of ``git status``: ``*.zuno-write-lock`` is added to the repository's
    ``info/exclude`` before it is created (:func:`memzoi.base.gitexclude.exclude`; once per folder and process while
    it stays in place). Raises :class:`Refusal`
    ``lock_busy`` after ``timeout`` s (default :data:`WRITE_LOCK_TIMEOUT`), ``unsafe_path`` when the companion is
    not a regular file or cannot be opened."""
    target = resolved(path)
    companion = target.with_name(target.name + WRITE_LOCK_SUFFIX)
    held = ExitStack()
    try:  # only taking the lock is translated here; errors of the locked block stay what they are
        make_folders(companion.parent)  # never wider than the folder above it
        if not companion.exists() or not _hidden.get(companion.parent):
            # before the companion is created: it never shows as an untracked file (issue 28)
            _hidden[companion.parent] = exclude(companion.parent, "*" + WRITE_LOCK_SUFFIX)
        held.enter_context(path_lock(companion, timeout=WRITE_LOCK_TIMEOUT if timeout is None else timeout))
    except LockBusy as err:
        raise Refusal.of_local_path(
            "lock_busy", f"{path}: {err} (Zuno or another memzoi process is writing the file)", path
        ) from err
    except OSError as err:
        raise write_refusal(err, companion, "the writer lock") or Refusal.of_local_path(
            "unsafe_path",
            f"{companion}: cannot take the writer lock ({err.strerror or type(err).__name__}); it must be "
            "a regular file beside the resident file",
            path,
        ) from err
    with held:
        yield


def write_refusal(err: OSError, path: Path, what: str) -> Refusal | None:
    """The refusal of a write of ``path`` (``what`` it is, in words: "the file", "the writer lock") that failed
    with ``err`` because of its disk, else ``None``: ``read_only_file_system`` with the advice a record's write
    gets (:class:`~memzoi.base.fsio.ReadOnlyTarget`), ``disk_full`` naming the file and the full disk, as the
    ledger's message does. The code is :func:`~memzoi.base.runtime_errors.classify`'s (the errno, else the file
    system holding ``path``)."""
    code = classify(err, path)
    if code == "read_only_file_system":
        where = path
        while not where.exists() and where.parent != where:  # the mount of what exists: the lock may not yet
            where = where.parent
        ro = ReadOnlyTarget(
            errno.EROFS, f"on a read-only file system (mounted at {mount_point(where)})", str(path), "file_system"
        )
        return Refusal.of_local_path(code, f"{path}: {what} is {ro.strerror}; {ro.advice} and retry", path)
    if code == "disk_full":
        return Refusal.of_local_path(
            code,
            f"{path}: {what} cannot be written: the disk holding {path.parent} is full; free some space on it, "
            "then run the command again",
            path,
        )
    return None


def _unreadable(path: Path, err: OSError) -> Refusal:
    """The ``unreadable`` refusal of the resident file ``path``, named as :meth:`Refusal.of_local_path` names it,
    with the OS error's strerror, never its text, which repeats the path."""
    return Refusal.of_local_path(
        "unreadable", f"{path}: cannot read ({err.strerror or type(err).__name__}); check permissions", path
    )


def read_raw(path: Path) -> tuple[Stamp, bytes | None, int | None]:
    """``(stamp, bytes, mode)`` of ``path``; ``(None, None, None)`` when absent (an absent file is an empty store).

    The stamp (mtime ns, size) is taken before the content. Raises :class:`Refusal` ``unreadable`` for a file
    that exists but cannot be read (never read as empty), ``unsafe_path`` for a symlink.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise _unreadable(path, err) from err
    try:
        data = read_state(path)
    except UnsafeWriteError as err:
        raise Refusal.of_local_path(
            "unsafe_path",
            f"{err}; memzoi never reads or writes resident memory through a symlink: "
            "point `[resident]` in .memzoi/config.toml at the real file",
            path,
        ) from err
    except OSError as err:
        raise _unreadable(path, err) from err
    if data is None:
        return None, None, None
    assert st is not None
    return (st.st_mtime_ns, st.st_size), data, stat.S_IMODE(st.st_mode)


def read_file(path: Path) -> tuple[Stamp, str | None, int | None]:
    """``(stamp, text, mode)`` of ``path`` as :func:`read_raw`, the bytes decoded by :func:`.encoding.decode`
    (text without its byte order mark, line breaks as in the file). Raises :class:`Refusal` ``unreadable`` also
    for UTF-16/32 or other bytes that are not UTF-8 text (named, with what to do), ``unsafe_path`` for a symlink.
    """
    stamp, data, mode = read_raw(path)
    if data is None:
        return None, None, None
    return stamp, decode(data, path)[0], mode


def structural_drift(text: str, cap: int) -> str | None:
    """The reason of Zuno's ``RoundTrip``, ``LineEndings`` or ``EntryOverflow`` drift when ``text`` shows one, in
    words (the check's name is not shown), else ``None``. ``LineEndings`` (a file mixing LF, CRLF and CR) is memzoi's: a write in one style could not keep
    the other entries' bytes."""
    mixed = mixed_endings(text)
    if mixed:
        return (
            f"the file mixes {mixed} line endings, so a write could not keep its other entries' "
            "bytes; re-save it with one line-ending style"
        )
    if not round_trips(text):
        return (
            "the file is not in the form memzoi writes (entries trimmed, joined by a line holding "
            "only §, no empty entries)"
        )
    for i, entry in enumerate(parse(text)):
        if len(entry) > cap:
            return f"entry {i + 1} is too long: it has {len(entry):,} characters, more than the whole cap of {cap:,}"
    return None


def backup(path: Path, data: bytes, mode: int | None) -> Path:
    """Copy ``data`` (the drifted bytes of ``path``) to ``<name>.bak.<unix-seconds>`` beside it, keeping the mode;
    a later second is used when that name already holds other bytes. A backup beside it that already holds exactly
    ``data`` is returned instead (:func:`_kept`): a refusal retried over the same bytes adds no copy. Returns the
    backup path."""
    kept = _kept(path, data)
    if kept is not None:
        return kept
    secs = int(time.time())
    while True:
        target = path.with_name(f"{path.name}.bak.{secs}")
        existing = read_state(target) if target.exists() else None
        if existing is None or existing == data:
            break
        secs += 1
    if existing is None:
        hide_temporaries(target.parent)  # the copy is written through a temporary file beside it
        atomic_write(target, data, mode=mode if mode is not None else NEW_FILE_MODE)
    return target


def _kept(path: Path, data: bytes) -> Path | None:
    """The newest ``<name>.bak.<unix-seconds>`` regular file beside ``path`` that holds exactly ``data``, or
    ``None``. Only same-sized files are read; an unreadable one is passed over."""
    prefix = f"{path.name}.bak."
    found = []
    try:
        with os.scandir(path.parent) as it:
            for entry in it:
                if entry.name.startswith(prefix) and entry.name[len(prefix) :].isdigit():
                    found.append((int(entry.name[len(prefix) :]), entry))
    except OSError:
        return None
    for _secs, entry in sorted(found, key=lambda f: f[0], reverse=True):
        try:
            same_size = entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size == len(data)
            if same_size and read_state(Path(entry.path)) == data:  # a regular file only: a FIFO would block
                return Path(entry.path)
        except OSError:
            continue
    return None


class ResidentStore:
    """A resident file loaded once: its entries, stamp, mode, exact bytes and :class:`.encoding.Layout` (see the
    module docstring). A write keeps the layout: the file's line endings, byte order mark and surrounding
    whitespace."""

    def __init__(self, file: ResidentFile) -> None:
        self.file = file
        self._load(*read_raw(file.path))

    def _load(self, stamp: Stamp, data: bytes | None, mode: int | None) -> None:
        self.stamp, self.data, self.mode = stamp, data, mode
        self.text, self.layout = decode(data, self.file.path) if data is not None else ("", Layout())
        self.entries = parse(self.text)

    @property
    def exists(self) -> bool:
        """Whether the file existed at load."""
        return self.stamp is not None

    def check_drift(self, *, keep: bool = True) -> None:
        """Re-read the file and refuse (``external_drift``) when a drift check fails, after backing it up (Zuno's
        ``ExternalDrift`` names its backup) when ``keep``: a check that stands for a write. A proposal or a
        preview, which would write nothing anyway, passes ``keep=False`` and leaves no file behind (a retried
        proposal made a copy each time)."""
        stamp, data, mode = read_raw(self.file.path)
        text = decode(data, self.file.path)[0] if data is not None else None
        reason = structural_drift(text, self.file.cap) if text is not None else None
        if reason is None and stamp != self.stamp:
            reason = (
                "the file appeared after memzoi read it"
                if self.stamp is None
                else "the file changed (modification time or size) after memzoi read it"
            )
        if reason is None:
            return
        saved = backup(self.file.path, data, mode) if data is not None and keep else None
        kept = f"; its bytes are kept in {saved}" if saved else ""
        raise Refusal(
            "external_drift",
            f"{self.file.path}: external drift ({reason}), so nothing was written{kept}; reconcile the file one "
            "entry at a time (or accept it as it is) and retry",
            str(self.file.path),
        )

    def preview(self, op: Operation, *, keep: bool = True) -> list[str]:
        """The after snapshot of ``op`` (the store's ``entries`` is the before snapshot), validated as the write
        will be: drift, locator, threat scan, cap. Raises :class:`Refusal`; writes only a drift backup, and that
        only when ``keep`` (:meth:`check_drift`)."""
        self.check_drift(keep=keep)
        after = project(self.entries, op)
        refuse_threats(after, self.file.accepted)
        check_cap(self.file.scope, after, self.file.cap, self.entries)
        return after

    def keep_copy(self) -> Path | None:
        """Copy the file's bytes as loaded to a ``.bak.<unix-seconds>`` file beside it (:func:`backup`) before a
        write replaces them; ``None`` (nothing copied) when the file is absent or empty."""
        if not self.data:
            return None
        try:
            return backup(self.file.path, self.data, self.mode)
        except UnsafeWriteError:
            raise
        except OSError as err:
            refusal = write_refusal(err, self.file.path, "its .bak copy")
            if refusal is None:
                raise
            raise refusal from err

    def replace_exact(
        self, expected: list[str], replacement: list[str], *, hook: Callable[[str], None] | None = None
    ) -> None:
        """Replace the file's entries ``expected`` by ``replacement`` atomically (the caller holds
        :func:`resident_lock` and :func:`write_lock`), in the file's own layout (line endings, byte order mark,
        surrounding whitespace). Raises :class:`Refusal` (``external_drift``, ``state_mismatch``,
        ``threat_blocked``, ``cap_exceeded``, ``unsafe_path``, ``unreadable``) with nothing written, or
        ``OSError``."""
        self.check_drift()
        if self.entries != expected:
            raise Refusal(
                "state_mismatch",
                f"{self.file.path}: the entries are not the audited snapshot this write starts from (the file "
                "changed outside review), so nothing was written",
                str(self.file.path),
            )
        if replacement == expected and self.exists:
            return  # a no-op (an identical add, an accepted recovery) leaves the file's bytes alone
        refuse_threats(replacement, self.file.accepted)
        check_cap(self.file.scope, replacement, self.file.cap, expected)
        # before the temporary file beside it is made: one a killed write leaves never enters a commit
        hide_temporaries(self.file.path.parent)
        try:
            atomic_write(
                self.file.path,
                self.layout.encode(serialize(replacement)),
                mode=self.mode if self.mode is not None else NEW_FILE_MODE,
                hook=hook,
            )
        except UnsafeWriteError as err:
            raise Refusal.of_local_path(
                "unsafe_path", f"{err}; memzoi never writes resident memory through a symlink", self.file.path
            ) from err
        except OSError as err:
            refusal = write_refusal(err, self.file.path, "the file")
            if refusal is None:
                raise
            raise refusal from err
        self._load(*read_raw(self.file.path))
