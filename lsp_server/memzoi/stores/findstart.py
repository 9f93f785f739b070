"""GNU find started over a project's ``records`` and ``proposals`` in a process of its own (:func:`start`), with nothing
imported but :mod:`os`, :mod:`subprocess`, :mod:`shutil` and :mod:`time`, so that ``memzoi search`` can start it before
the interpreter has loaded anything else (:func:`start_early`, from :func:`memzoi.cli.main.list_ahead`): find's listing
at 50,000 records is about 0.18 s of CPU on the other CPU, and every module imported before it starts delays its end
(issue 29, target: a search at 50,000 records in 0.25 s). What its output means and how it is read is
:mod:`memzoi.stores.findlisting`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

from ..judge.projectroot import MEMZOI_DIR

TYPE_CHECKING = False  # typing itself would cost the start of find some 2 ms; mypy reads this name as true
if TYPE_CHECKING:
    from typing import BinaryIO

#: What find prints of each file: device, inode, size, mtime, ctime (``seconds.fraction``), path; NUL-terminated.
FORMAT = "%D %i %s %T@ %C@ %p\\0"


def _command(starts: list[str]) -> list[str] | None:
    """find's argument list for the folders ``starts`` (relative to the project root), ``None`` without find."""
    exe = shutil.which("find")
    if exe is None:
        return None
    # Every regular file but hidden ones: the names are judged in the parse (a name test per file in find cost a
    # tenth of its CPU time at 50,000 records).
    return [exe, *starts, "-name", ".*", "-prune", "-o", "-type", "f", "-printf", FORMAT]


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
    """A find started by :func:`start` over the project ``root`` (absolute) whose ``.memzoi`` is on the device
    ``dev``, writing its output ``out`` and errors ``err`` to anonymous files (not pipes: 4 MB at 50,000 records
    would block find on a 64 KB pipe until :meth:`wait` reads it, after the caller's imports, where find is meant to
    run beside them). :meth:`wait` gives its output; :meth:`discard` stops it unread. Either closes the files.
    ``started_ns`` (``time.monotonic_ns``) was taken before find started: every change completed before it is in
    the listing."""

    def __init__(
        self, root: str, dev: int, proc: subprocess.Popen[bytes], out: BinaryIO, err: BinaryIO, started_ns: int
    ) -> None:
        self.root, self.dev, self.proc, self.out, self.err = root, dev, proc, out, err
        self.started_ns = started_ns

    def wait(self) -> bytes | None:
        """find's output once it has exited; ``None`` when it exited other than 0, wrote to stderr or its output
        cannot be read back (the caller then walks in Python). Closes the anonymous files. Where the wait is
        interrupted (``KeyboardInterrupt``, ``SystemExit``), find is killed and reaped before that propagates."""
        with self.out, self.err:
            try:
                code = self.proc.wait()
            except BaseException:  # interrupted (SIGINT, SIGTERM as SystemExit): find must not outlive the wait
                self._stop()
                raise
            if code != 0:
                return None
            try:
                self.err.seek(0)
                if self.err.read(1):
                    return None
                self.out.seek(0)
                return self.out.read()
            except OSError:
                return None

    def discard(self) -> None:
        """Stop find if it still runs and reap it (no zombie is left), and close the anonymous files: the listing
        is not used. Never raises ``OSError``."""
        with self.out, self.err:
            self._stop()

    def _stop(self) -> None:
        try:
            if self.proc.poll() is None:
                self.proc.kill()
        except OSError:
            pass  # it exited meanwhile: wait() reaps it all the same
        self.proc.wait()


#: Holds of SIGTERM on the main thread (nested count) and the signal that came during them (0: none).
_HOLD = [0, 0]


def terminated(signum: int, frame: object) -> None:
    """The SIGTERM handler of a command that starts find (:func:`memzoi.cli.main.entry`): ends the process through
    ``SystemExit(128 + signum)``, so that the ``finally`` clauses stop and reap find rather than leave it running
    orphaned. While a find is being started and kept (:func:`held`) it only notes the signal: the hold ends the
    process once the find is where its cleanup reaches it (Popen returns after find's exec, and a signal raised
    inside it would lose the child)."""
    if _HOLD[0]:
        _HOLD[1] = signum
        return
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def held(cleanup: Callable[[], object]) -> Iterator[None]:
    """Within the context, on the main thread, :func:`terminated` holds SIGTERM; leaving the outermost hold after one
    came calls ``cleanup`` (which stops the finds started inside) and raises ``SystemExit(128 + signum)``. Elsewhere
    (a thread, which never runs a signal handler) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _HOLD[0] += 1
    try:
        yield
    finally:
        _HOLD[0] -= 1
        if not _HOLD[0] and _HOLD[1]:
            signum, _HOLD[1] = _HOLD[1], 0
            cleanup()
            raise SystemExit(128 + signum)


def start(project_root: str | os.PathLike[str]) -> Finding | None:
    """Start find over the project's ``records`` and ``proposals`` (those that are folders, not symlinks, below a
    ``.memzoi`` that is not a symlink: the folders :func:`memzoi.stores.planelisting.walk` lists); ``None`` where
    there is nothing to list or find cannot be started (the caller walks in Python). Never raises ``OSError``. Called
    within :func:`held` (by :func:`start_early` and :class:`memzoi.stores.findlisting.Ahead`), so that a SIGTERM
    that comes while find starts waits until the find is kept where its cleanup reaches it."""
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
            started_ns = time.monotonic_ns()
            proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            opened.pop_all()
    except (OSError, ValueError):
        return None
    return Finding(root, dev, proc, out, err, started_ns)


#: The find started by :func:`start_early` and not yet taken (:func:`take_early`): at most one.
_EARLY: list[Finding] = []


def start_early(project_root: str | os.PathLike[str]) -> None:
    """Start find (:func:`start`) over ``project_root`` before the command that will want its listing is even
    parsed (``memzoi search``: :func:`memzoi.cli.main.list_ahead`), so that find runs while the interpreter imports
    the parser and the command. :func:`take_early` hands it to the command when the command's root is the same and
    discards it (killed and reaped, never read) when not; :func:`drop_early` discards one nothing took. The
    listing is still taken after the command started, as the refresh's input: it is only started sooner. Never
    raises ``OSError``."""
    drop_early()
    with held(drop_early):  # kept before a SIGTERM may end the process
        finding = start(project_root)
        if finding is not None:
            _EARLY.append(finding)


def take_early(root: str) -> Finding | None:
    """The find of :func:`start_early` when it lists ``root`` (absolute), else ``None``: one over another root is
    discarded, since the command's root is the one that counts."""
    if not _EARLY:
        return None
    finding = _EARLY.pop()
    if finding.root == root:
        return finding
    finding.discard()
    return None


def drop_early() -> None:
    """Discard the find of :func:`start_early` if nothing took it (:meth:`Finding.discard`): the process must not
    leave it running or unreaped on any way out (a usage error, ``--help``, a refusal, an exception)."""
    while _EARLY:
        _EARLY.pop().discard()


__all__ = ["FORMAT", "Finding", "drop_early", "start", "start_early", "take_early"]
