"""The listing of a long-lived process's index refreshes kept current by change notifications (issue 29: the MCP
server's ``search_memory`` at 50,000 records in 0.25 s, where a walk that stats 55,000 files costs 0.27 s).

A :class:`ChangeFeed` holds the :class:`~memzoi.stores.planelisting.Listing` of the project's last full walk and the
paths a watcher of ``.memzoi`` reported since (:meth:`ChangeFeed.events`, fed by the caller's watcher: the MCP
server runs watchfiles, which reads inotify). A refresh (:meth:`ChangeFeed.listing`) stats only those paths, plus
the files the notifications do not cover (those with more than one hard link: a write through a link outside the
watched folders raises no event), and walks the whole plane again (:func:`memzoi.stores.planelisting.walk`) when the
notifications cannot vouch for the listing: no walk yet, the watcher not running or failed, a barrier not passed in
time, a folder created, removed or renamed (or ``records``, ``proposals``; any event of ``.memzoi`` itself, or a
``.memzoi`` replaced by another folder the watches do not follow, makes every refresh walk from then on), more than
:data:`DIRTY_LIMIT` paths at once (watchfiles drops the kernel's queue-overflow notice, so a burst that large is
taken as one), a file on another device, the project on a file system whose notifications are not reliable or whose
ctime follows the mtime (anything but the local types of :data:`memzoi.base.freshness.KEEPS_CTIME`: network and FUSE
mounts, FAT media; there every file is stat'ed and hashed as before), a change of the mount table, or a walk older
than :data:`MAX_AGE_NS`. The stamps are judged by :func:`memzoi.stores.index_fresh.stale`'s one freshness rule (racy
stamps, file systems without a kept ctime, the sampled re-hash). Until the watches are seen in place and one refresh
listed through the feed (the server's opening refresh), a refresh takes find's listing instead, as ``memzoi search``
does (:func:`refreshing`).

**Events in flight** are drained before a refresh by a write barrier (:meth:`ChangeFeed.barrier`): a file is created in
a private folder (an :class:`~memzoi.base.ownedfolder.OwnedFolder` in the memzoi home, never in the repository) that the
same watcher watches, and the refresh waits until its event arrives. inotify queues the events of one instance in the
order they happen, and the watcher hands them over in that order, so every change completed before the barrier's file
was created has been handed over by then. Where that does not hold: writes through a memory map (no event), a file
linked from outside ``.memzoi`` after the walk and written through that link (no event; the sampled re-hash and the walk
every :data:`MAX_AGE_NS` catch it), changes below a mount point inside ``.memzoi`` (a full walk every time), and a
kernel queue overflow smaller than :data:`DIRTY_LIMIT` distinct paths (watchfiles does not pass the overflow notice on;
bounded by the walk every :data:`MAX_AGE_NS`).
"""

from __future__ import annotations

import contextlib
import os
import stat as statmod
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from ..base import freshness
from ..base.ownedfolder import OwnedFolder
from ..judge.workspace import MEMZOI_DIR, plane_file_name, utf8_name
from .planelisting import Listing, walk

if TYPE_CHECKING:  # find's listing is imported where it is used (refreshing)
    from .findlisting import Found

#: More changed paths than this since the last refresh: walk instead (a burst that may have overflowed the queue).
DIRTY_LIMIT = 4096
#: A listing last walked longer ago than this (monotonic ns) is walked again: bounds what notifications miss.
MAX_AGE_NS = 60 * 1_000_000_000
#: How long a refresh waits for its barrier's event (s) before it walks instead.
BARRIER_TIMEOUT_S = 2.0
#: How long a barrier file's event is waited for before another is written (s): the watches may not be in place yet.
RETRY_S = 0.1
_PLANE = ("records", "proposals")


class ChangeFeed:
    """The listing of the project ``root`` kept by change notifications (see the module docstring). ``sentinels``
    is the private folder of the barrier's files (made here, removed by :meth:`close`), which the watcher must watch
    together with ``<root>/.memzoi`` (one inotify instance). Thread-safe: the watcher thread calls :meth:`events`,
    :meth:`running` and :meth:`failed`; refreshes call :meth:`listing` one at a time (:attr:`refreshing`)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)  # as the index resolves its root
        self.memzoi = os.path.join(self.root, MEMZOI_DIR)
        self._owned = OwnedFolder("changefeed-")  # in the memzoi home; OSError when it cannot be made
        self.sentinels = self._owned.path
        self.refreshing = threading.Lock()  # one refresh at a time: it alone changes the kept listing
        self._cond = threading.Condition()
        self._dirty: set[str] = set()
        self._state = "starting"  # running | failed | closed
        self._overflow = False
        self._asked = self._seen = 0  # the last barrier token written; the highest one handed over by the watcher
        self._base: Listing | None = None
        self._walked_ns = 0
        self._known_dirs: set[str] = set()  # folders on the walk's way since the last walk, with their parents
        # full walks made, listings given from notifications without a walk, paths stat'ed in place of a walk
        self.walks = self.served = self.stats = 0  # (for tests and benchmarks)
        self.why = "no walk yet"  # why the last listing was a full walk ("" when it was not)
        self._watched = _folder_id(self.memzoi)  # the .memzoi the watches are set on (they follow its inode)
        self._root_changed, self._mounts, self._below = False, b"", False  # see listing, _full_reason and _walk

    # -- the watcher's side ------------------------------------------------------------------------------------------
    def running(self) -> None:
        """The watcher is set up (its watches are in place once a barrier passes)."""
        with self._cond:
            if self._state == "starting":
                self._state = "running"
            self._cond.notify_all()

    def failed(self, reason: str) -> None:
        """The watcher stopped (``reason`` for the log): every refresh walks from now on."""
        with self._cond:
            if self._state != "closed":
                self._state = "failed"
                self.why = f"the watcher stopped: {reason}"
            self._cond.notify_all()

    def events(self, paths: Iterable[str]) -> None:
        """Take one batch of notified paths (absolute; any change kind: a path is judged by its state on disk)."""
        prefix = self.sentinels + os.sep
        with self._cond:
            for path in paths:
                if path.startswith(prefix):
                    name = path[len(prefix) :]
                    if name.isdigit():
                        self._seen = max(self._seen, int(name))
                elif path == self.memzoi:  # itself removed, renamed or its attributes changed: the watches may be
                    self._root_changed = True  # gone, and a folder made in its place may reuse its inode
                elif path != self.sentinels:
                    self._dirty.add(path)
            if len(self._dirty) > DIRTY_LIMIT:
                self._overflow = True
                self._dirty.clear()
            self._cond.notify_all()

    # -- the refresh's side ------------------------------------------------------------------------------------------
    def begin(self) -> int:
        """Write a barrier file now and return its token (``0`` when the watcher has stopped or the file could not
        be written: the refresh then walks). :meth:`barrier` waits for it."""
        with self._cond:
            if self._state in ("failed", "closed"):
                return 0
            self._asked += 1
            token = self._asked
        return token if self._write_sentinel(token) else 0

    def barrier(self, timeout: float = BARRIER_TIMEOUT_S, first: int | None = None) -> bool:
        """Wait until the watcher hands over the event of the barrier file ``first`` (:meth:`begin`; written here
        when ``None``) or of a later one: every change completed before it was written has then been handed over
        (see the module docstring). False when the watcher is not running or no such event came within ``timeout``
        seconds (the caller walks). A file whose event does not come within :data:`RETRY_S` (the watches not in place
        yet) is followed by another: any of them vouches, all being written after the call began. Never raises."""
        deadline = time.monotonic() + timeout
        start = self.begin() if first is None else first
        if not start:
            return False

        def done() -> bool:
            return self._seen >= start or self._state in ("failed", "closed")

        while True:
            left = deadline - time.monotonic()
            with self._cond:
                if self._cond.wait_for(done, max(0.0, min(left, RETRY_S))):
                    return self._seen >= start and self._state == "running"
            if left <= RETRY_S or not self.begin():
                return False

    def vouches(self) -> bool:
        """Whether the watches were seen in place (a barrier passed) and a refresh (the opening one) listed since."""
        with self._cond:
            return self._state == "running" and self._seen > 0 and self.walks > 0

    def _write_sentinel(self, token: int) -> bool:
        name = os.path.join(self.sentinels, str(token))
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.sentinels, str(token - 1)))
        except OSError as err:
            self.failed(f"the barrier file could not be written ({err.strerror})")
            return False
        return True

    def listing(self, token: int | None = None) -> Listing:
        """The project's current listing: the kept one with the notified paths and the linked files stat'ed again,
        or a full walk where the notifications cannot vouch for it (the module docstring; :attr:`why` says which),
        after the barrier ``token`` (:meth:`begin`; a new one when ``None``). The listing returned is the one kept:
        read it, never change it. Never raises for I/O errors."""
        with self._cond:
            confirmed = self._seen > 0
        # a watcher never seen to hand over a barrier may still be setting up its watches (notify lists the whole
        # tree first: a second at 50,000 files): the call walks at once rather than wait for it
        passed = self.barrier(BARRIER_TIMEOUT_S if confirmed else 0.0, first=token) if token != 0 else False
        with self._cond:
            dirty, self._dirty = self._dirty, set()
            overflow, self._overflow = self._overflow, False
            state = self._state
        if state == "running" and (self._root_changed or _folder_id(self.memzoi) != self._watched):
            self.failed("the .memzoi folder was replaced or changed (the watches stay on the one they were set on)")
            state = "failed"
        why = self._full_reason(passed, state, overflow)
        if not why and self._base is not None:
            why = self._apply(self._base, dirty)
        if why:
            walked = self._walk(why)
            # kept only when the watches were in place before the walk began (its barrier passed): a change between
            # a walk and the watches' start would never be notified
            self._base = walked if passed and state == "running" else None
            return walked
        self.why = ""
        self.served += 1
        assert self._base is not None
        return self._base

    def _full_reason(self, passed: bool, state: str, overflow: bool) -> str:
        if state != "running":
            return self.why if state == "failed" else "the watcher is not running yet"
        if not passed:
            return "the watcher did not hand over the barrier's event in time (or is setting up its watches)"
        if overflow:
            return f"more than {DIRTY_LIMIT} changed paths at once"
        if self._base is None:
            return "no walk yet"
        if time.monotonic_ns() - self._walked_ns > MAX_AGE_NS:
            return "the last walk is older than the trust age of notifications"
        if self._below or freshness.mount_table() != self._mounts:
            return "a file system was mounted or unmounted since the last walk, or is mounted below .memzoi"
        return _unreliable(self._base)

    def _walk(self, why: str) -> Listing:
        self._walked_ns = time.monotonic_ns()
        self._mounts = freshness.mount_table()  # read before the walk: a mount during it is seen by the next call
        self._below = freshness.mounted_below(self.memzoi, self._mounts)  # a mount point with no file listed yet
        listing = walk(self.root)
        self._known_dirs = self._with_parents(listing.folders)
        self.walks += 1
        self.why = why
        return listing

    def _apply(self, base: Listing, dirty: set[str]) -> str:
        """Stat the ``dirty`` paths and ``base``'s linked files into ``base``; a reason to walk instead, or ``""``."""
        changed = False
        for path in sorted(dirty):
            what = self._place(path)
            if what == "walk":
                return f"a folder changed: {path}"
            if what:
                before = what in base.stamps or what in base.unstated
                why = self._restat(base, what, path)
                if why:
                    return why
                changed |= before != (what in base.stamps)
        for key in sorted(base.linked):
            why = self._restat(base, key, base.path(key))
            if why:
                return why
        if changed:
            base.folders = {os.path.dirname(base.path(k)) for k in (*base.stamps, *base.unstated)}
        return ""

    def _place(self, path: str) -> str:
        """What a notified ``path`` is to the listing: its index key when it is (or may be) a record or packet,
        ``"walk"`` when it is a folder on the walk's way (new, gone or replaced), ``""`` when the walk ignores it."""
        prefix = self.memzoi + os.sep
        if not path.startswith(prefix):
            return "walk" if self.memzoi.startswith(path) else ""  # .memzoi itself or a folder above it
        parts = path[len(prefix) :].split(os.sep)
        if parts[0] not in _PLANE:
            return ""  # config.toml and the rest of .memzoi: the index's stamp follows the configuration
        if len(parts) == 1 or path in self._known_dirs:
            return "walk"
        key = MEMZOI_DIR + "/" + "/".join(parts)
        base = self._base
        if base is not None and (key in base.stamps or key in base.unstated):
            return key
        try:
            st = os.lstat(path)
        except OSError:
            return ""  # gone and never listed: nothing the walk would have listed
        if statmod.S_ISDIR(st.st_mode):
            return "walk"
        if not plane_file_name(parts[-1]) or not self._on_the_way(os.path.dirname(path)):
            return ""
        return key

    def _on_the_way(self, folder: str) -> bool:
        """Whether Memzoi's walk (``workspace.plane_entries``) enters ``folder``: no link, hidden or non-UTF-8 name."""
        if folder in self._known_dirs:
            return True
        here = self.memzoi
        for name in folder[len(self.memzoi) + 1 :].split(os.sep):
            here = os.path.join(here, name)
            try:
                st = os.lstat(here)
            except OSError:
                return False
            if not statmod.S_ISDIR(st.st_mode) or name.startswith(".") or not utf8_name(name):
                return False  # the walk enters no symlink, no hidden folder, no name that is not UTF-8
        self._known_dirs |= self._with_parents((folder,))
        return True

    def _with_parents(self, folders: Iterable[str]) -> set[str]:
        """``folders`` and their parents up to ``.memzoi`` (a folder of folders moved away raises one event)."""
        out: set[str] = set()
        prefix = self.memzoi + os.sep
        for folder in folders:
            while folder.startswith(prefix) and folder not in out:
                out.add(folder)
                folder = os.path.dirname(folder)
        return out

    def _restat(self, base: Listing, key: str, path: str) -> str:
        """Put ``key``'s current stat into ``base`` (a regular file) or take it out (gone, a link, a folder)."""
        self.stats += 1
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        base.stamps.pop(key, None)
        if key in base.unstated:
            base.unstated.remove(key)
        base.devs.pop(key, None)
        base.linked.discard(key)
        if st is None or not statmod.S_ISREG(st.st_mode):
            return f"a folder in place of a file: {path}" if st is not None and statmod.S_ISDIR(st.st_mode) else ""
        if st.st_dev != base.dev:
            return f"a file on another device: {path}"
        base.stamps[key] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)  # freshness.of_stat's
        if st.st_nlink > 1:
            base.linked.add(key)
        return ""

    def close(self) -> None:
        """Stop using notifications and remove the barrier's folder."""
        with self._cond:
            self._state = "closed"
            self._cond.notify_all()
        self._owned.close()


def _folder_id(path: str) -> tuple[int, int] | None:
    """The device and inode of the folder ``path`` (``None`` when it is not one)."""
    with contextlib.suppress(OSError):
        if statmod.S_ISDIR((st := os.stat(path)).st_mode):
            return (st.st_dev, st.st_ino)
    return None


def _unreliable(listing: Listing) -> str:
    """Why notifications cannot vouch for ``listing``'s files (a mount below ``.memzoi``, a file system whose type
    is not a local one that keeps its ctime), or ``""``."""
    if listing.devs:
        return "a mount below .memzoi"
    kind = freshness.fs_type(listing.dev) if listing.dev != -1 else "ext4"
    if kind not in freshness.KEEPS_CTIME:
        return f"notifications are not relied on for a {kind or 'unknown'} file system"
    return ""


_FEEDS: dict[str, ChangeFeed] = {}
_FEEDS_LOCK = threading.Lock()


def register(feed: ChangeFeed) -> None:
    """Use ``feed`` for the refreshes of its project in this process (:func:`refreshing`)."""
    with _FEEDS_LOCK:
        old = _FEEDS.pop(feed.root, None)
        _FEEDS[feed.root] = feed
    if old is not None and old is not feed:
        old.close()


def unregister(root: str | os.PathLike[str]) -> None:
    """Stop using the feed of ``root`` (closed)."""
    with _FEEDS_LOCK:
        feed = _FEEDS.pop(os.path.realpath(root), None)
    if feed is not None:
        feed.close()


def feed_of(root: str | os.PathLike[str]) -> ChangeFeed | None:
    """The feed registered for the project ``root``, if any."""
    return _FEEDS.get(os.path.realpath(root))


@contextlib.contextmanager
def refreshing(root: str | os.PathLike[str]) -> Iterator[Callable[[], Listing | Found] | None]:
    """The listing function (``walked`` of :meth:`memzoi.stores.index.Index.refresh`) of one refresh of ``root``'s
    index: the feed's (:meth:`ChangeFeed.listing`, held: one started meanwhile waits) once it vouches; before, find's
    (:func:`memzoi.stores.calllisting.ahead`: started when the call arrived, or now), as ``memzoi search`` takes it,
    not waiting for the opening refresh; ``None`` without a feed (the refresh walks)."""
    feed = feed_of(root)
    if feed is None or not feed.vouches():
        from .calllisting import ahead  # noqa: PLC0415 lazy: start-up

        yield None if feed is None else ahead(feed.root)
        return
    with feed.refreshing:
        token = feed.begin()  # its barrier's event travels while the refresh reads the stored stamps
        yield lambda: feed.listing(token)


__all__ = [
    "BARRIER_TIMEOUT_S",
    "DIRTY_LIMIT",
    "MAX_AGE_NS",
    "RETRY_S",
    "ChangeFeed",
    "feed_of",
    "refreshing",
    "register",
    "unregister",
]
