"""What git says about a project's files, for admission and provenance: one oracle per project.

:class:`GitFacts` answers the three questions a file's verdict and its hover ask git, each cached so that
judging a file while the user types never spawns git:

- **review visibility** (tracked, untracked, ignored, outside a worktree): filled by one batch of git calls per
  scan or per batch of changed files (:func:`memzoi.project.admission.git_visibility`), read per file;
- **the committed projection** of an attested record (``git show HEAD:<path>``), which names the fields a hand
  edit changed in a stale attestation (:func:`reviewed_projection`);
- **the last commit** touching a file (``git log -1``), for the provenance hover (:func:`last_commit`).

The last two are cached per file until git's state changes: :func:`state_stamp` reads the worktree's ``HEAD``,
``index``, the checked-out branch's ref and ``packed-refs``, in the worktree's own git directory (a linked
worktree's ``.git`` is a file naming it) and the common directory its ``commondir`` names.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

from ..base.runtime import git_env
from .admission import GitVisibility, _run, git_visibility, worktree_root

_UNKNOWN = GitVisibility.UNKNOWN  # read once: asked for every file of a scan (an enum member read costs ~0.3 µs)

#: Largest committed version read back to explain a stale attestation.
_SHOW_CAP = 4 << 20
#: Cached answers kept per oracle before the cache is emptied (a bound, not a tuning knob).
_CACHE_MAX = 4096
_T = TypeVar("_T")


def git_dirs(top: Path) -> tuple[Path, Path] | None:
    """``(git directory, common directory)`` of the worktree whose top is ``top``: ``.git`` itself for a main
    worktree; for a linked worktree, the directory its ``.git`` file names and the one that directory's
    ``commondir`` names. ``None`` when neither can be read."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            return dot, dot
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = Path(line[len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else (top / gitdir)
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir, gitdir
    common_dir = Path(common) if os.path.isabs(common) else gitdir / common
    return gitdir, common_dir


def state_stamp(top: Path | None) -> tuple[Any, ...]:
    """A value that changes whenever a commit, checkout, reset or staging changes what ``HEAD`` and the index
    say: size and mtime of ``HEAD``, ``index``, the branch ref ``HEAD`` names, and ``packed-refs``."""
    if top is None:
        return ()
    dirs = git_dirs(top)
    if dirs is None:
        return (str(top),)
    gitdir, common = dirs
    files = [gitdir / "HEAD", gitdir / "index", common / "packed-refs"]
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        head = ""
    if head.startswith("ref:"):
        files.append(common / head[4:].strip())
    parts: list[Any] = [str(top), head]
    for p in files:
        try:
            st = p.stat()
            parts.append((st.st_mtime_ns, st.st_size))
        except OSError:
            parts.append(None)
    return tuple(parts)


def reviewed_projection(path: str | os.PathLike[str], record_id: str, top: Path | None = None) -> dict[str, Any] | None:
    """The semantic projection of the committed (``HEAD``) version of a record, when that version's attestation
    verifies, i.e. the content the decision attested; ``None`` when it is untracked, not attested, already stale
    in ``HEAD``, or git cannot answer. One ``git show`` (GIT_* cleared, output bounded). ``top`` is the
    worktree's top when the caller knows it (saves a ``rev-parse``)."""
    from ..judge.attestation import validate_metadata  # noqa: PLC0415 lazy: start-up
    from ..judge.revision import RevisionError, lifecycle_projection, revision_hash, semantic_projection  # noqa: PLC0415 lazy: start-up
    from ..read.document import frame  # noqa: PLC0415 lazy: start-up

    text = committed_text(path, top)
    if text is None:
        return None
    doc = frame(text)
    if not isinstance(doc.data, dict) or doc.data.get("materialization") is None:
        return None
    metadata, problems = validate_metadata(doc, doc.data["materialization"])
    if metadata is None or problems:
        return None
    try:
        projection = semantic_projection(doc.data, doc.body)
        lifecycle = lifecycle_projection(dict(doc.data["materialization"]))
        ok = revision_hash(record_id, projection, lifecycle) == metadata.revision.revision_hash
    except RevisionError:
        return None
    return projection if ok else None


def committed_text(path: str | os.PathLike[str], top: Path | None = None) -> str | None:
    """The text of the committed (``HEAD``) version of ``path``: ``None`` when it is untracked, not UTF-8, larger
    than the bound of a read-back, or git cannot answer. One ``git show`` (GIT_* cleared)."""
    here = os.path.dirname(os.path.abspath(path))
    top = top if top is not None else worktree_root(Path(here))
    if top is None:
        return None
    real = os.path.join(os.path.realpath(here), os.path.basename(path))
    try:
        rel = Path(real).relative_to(top).as_posix()
    except ValueError:
        return None
    res = _run(["show", f"HEAD:{rel}"], top, cap=_SHOW_CAP)
    if res is None or res[0] != 0:
        return None
    try:
        return res[1].decode("utf-8")
    except UnicodeDecodeError:
        return None


def last_commit(path: Path | None) -> dict[str, str] | None:
    """The last git commit touching ``path``: ``{hash, author, date, subject}``, or ``None`` (no git, untracked,
    error). Runs git with stdin closed and its output captured (never on a protocol's stdout)."""
    if path is None:
        return None
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%h%x1f%an%x1f%ad%x1f%s", "--date=short", "--", path.name],
            cwd=path.parent,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=3,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    parts = out.stdout.strip().split("\x1f")
    if len(parts) != 4:
        return None
    return dict(zip(("hash", "author", "date", "subject"), parts))


class GitFacts:
    """The git oracle of one project rooted at ``root`` (see the module docstring). Thread-safe.

    ``history=False`` answers no committed projection (a caller that must not run ``git show``, or a text that
    is not on disk).
    """

    def __init__(self, root: str | os.PathLike[str] | None, *, history: bool = True) -> None:
        self.root = Path(root) if root is not None else None
        self.history = history and root is not None
        self._visibility: dict[str, GitVisibility] = {}
        self._lock = threading.Lock()
        self._top: Path | None | bool = False  # False: not asked yet
        self._cache: dict[tuple[Any, ...], Any] = {}

    # -- review visibility --------------------------------------------------------------------------------------

    def ask(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Ask git the review visibility of ``paths`` (one batch of at most three git processes)."""
        if self.root is None:
            return
        found = git_visibility(self.root, paths)
        with self._lock:
            self._visibility.update(found)

    def set_visibility(self, found: dict[str, GitVisibility]) -> None:
        """Take visibility answers a caller already asked (keys: absolute paths)."""
        with self._lock:
            self._visibility.update(found)

    def visibility(self, path: str | os.PathLike[str] | None) -> GitVisibility:
        """The review visibility last asked for ``path`` (``UNKNOWN`` when never asked)."""
        if path is None:
            return _UNKNOWN
        found = self._visibility.get(path) if isinstance(path, str) else None  # keys are absolute: most callers'
        return found if found is not None else self._visibility.get(os.path.abspath(path), _UNKNOWN)

    def forget(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Drop the visibility of ``paths`` (deleted files)."""
        with self._lock:
            for p in paths:
                self._visibility.pop(os.path.abspath(p), None)

    # -- answers cached per git state ----------------------------------------------------------------------------

    def top(self) -> Path | None:
        """The worktree's top (asked once)."""
        if self._top is False:
            self._top = worktree_root(self.root) if self.root is not None else None
        top = self._top
        return None if isinstance(top, bool) else top  # never False once asked

    def _cached(self, key: tuple[Any, ...], compute: Callable[[], _T]) -> _T:
        key = (*key, state_stamp(self.top()))
        with self._lock:
            if key in self._cache:
                # A key starts with its question ("show", "log"), and each question stores only what its own
                # compute returned (reviewed_projection, last_commit below), so the value has compute's type.
                return cast(_T, self._cache[key])
        value = compute()
        with self._lock:
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[key] = value
        return value

    def reviewed_projection(self, path: str | os.PathLike[str], record_id: str) -> dict[str, Any] | None:
        """:func:`reviewed_projection`, cached per file until git's state changes (``None`` without history)."""
        if not self.history:
            return None
        top = self.top()
        if top is None:
            return None
        return self._cached(
            ("show", os.path.abspath(path), record_id), lambda: reviewed_projection(path, record_id, top)
        )

    def last_commit(self, path: Path) -> dict[str, str] | None:
        """:func:`last_commit`, cached until the file or git's state changes."""
        try:
            st = path.stat()
            file_stamp: tuple[Any, ...] = (st.st_mtime_ns, st.st_size)
        except OSError:
            file_stamp = ()
        return self._cached(("log", str(path), file_stamp), lambda: last_commit(path))


__all__ = ["GitFacts", "git_dirs", "last_commit", "reviewed_projection", "state_stamp"]
