"""Workspace discovery: project root, the roles of paths under ``.memzoi/``, and the file walk.

Rules come from Memzoi (reference §1.1, §1.2, §2.1, §7.2): the walk is recursive, skips hidden entries and
symlinks, collects regular ``*.md`` files, never treats ``index.md`` or ``log.md`` as records, and a record's id
is its path below ``.memzoi/records/`` without ``.md``.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from .projectroot import (
    MEMZOI_DIR as MEMZOI_DIR,  # re-exported: the name every caller imports from here
    discover,
)

RESERVED_NAMES = frozenset({"index.md", "log.md"})


class Role(enum.Enum):
    """What a path is by its place in the ``.memzoi`` tree."""

    RECORD = "record"
    PENDING = "pending"
    APPLIED = "applied"
    REJECTED = "rejected"
    RESERVED = "reserved"
    OTHER = "other"  # outside the managed folders: the role comes from the frontmatter's `kind`

    @property
    def is_proposal(self) -> bool:
        """True for packets under ``proposals/``."""
        return self in (Role.PENDING, Role.APPLIED, Role.REJECTED)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a file sits: its role, the ``.memzoi`` directory above it (if any) and its managed identity.

    ``identity`` is the record concept id (records) or the proposal file id (packets): the path below the
    records root or the proposal status folder, ``/``-separated, without ``.md``. ``hidden`` marks a file below
    ``.memzoi`` whose name or a folder's name (below ``.memzoi``) starts with ``.``: Memzoi's walk skips it, so it
    is never a record, packet or reserved file, but it is committed content all the same (role ``OTHER``).
    """

    role: Role
    memzoi_dir: Path | None = None
    identity: str | None = None
    hidden: bool = False


_PROPOSAL_DIRS = {
    ("proposals", "pending"): Role.PENDING,
    ("proposals", "resolved", "applied"): Role.APPLIED,
    ("proposals", "resolved", "rejected"): Role.REJECTED,
}


def place(path: str | os.PathLike[str]) -> Placement:
    """Classify ``path`` (absolute or relative) by the nearest ``.memzoi`` directory among its parents."""
    text = os.fspath(path)
    folder, name = os.path.split(text)
    if not name or name in (".", "..", MEMZOI_DIR) or not folder:
        return _place_parts(Path(text).parts, Path(text).name)
    # A workspace has few folders and many files: the folder's parts are parsed once.
    memzoi_dir, rel = _folder_parts(folder)
    if memzoi_dir is None:
        return Placement(Role.OTHER)
    return _classify(memzoi_dir, rel + (name,), name)


@lru_cache(maxsize=4096)
def _folder_parts(folder: str) -> tuple[Path | None, tuple[str, ...]]:
    """The ``.memzoi`` directory above ``folder`` (nearest) and the parts of ``folder`` below it."""
    parts = Path(folder).parts
    try:
        idx = len(parts) - 1 - parts[::-1].index(MEMZOI_DIR)
    except ValueError:
        return None, ()
    return Path(*parts[: idx + 1]), parts[idx + 1 :]


def _place_parts(parts: tuple[str, ...], name: str) -> Placement:
    try:
        idx = len(parts) - 1 - parts[::-1].index(MEMZOI_DIR)
    except ValueError:
        return Placement(Role.OTHER)
    return _classify(Path(*parts[: idx + 1]), parts[idx + 1 :], name)


def _classify(memzoi_dir: Path, rel: tuple[str, ...], name: str) -> Placement:
    """Role and identity of the file at ``rel`` (parts below ``memzoi_dir``) named ``name``."""
    if any(p.startswith(".") and p not in (".", "..") for p in rel):
        return Placement(Role.OTHER, memzoi_dir, hidden=True)
    if name in RESERVED_NAMES:
        return Placement(Role.RESERVED, memzoi_dir)
    if len(rel) >= 2 and rel[0] == "records":
        return Placement(Role.RECORD, memzoi_dir, _strip_md("/".join(rel[1:])))
    for prefix, role in _PROPOSAL_DIRS.items():
        n = len(prefix)
        if len(rel) > n and tuple(rel[:n]) == prefix:
            return Placement(role, memzoi_dir, _strip_md("/".join(rel[n:])))
    return Placement(Role.OTHER, memzoi_dir)


#: Editor swap, backup, lock and autosave files and this project's own atomic-write temporaries: vim's
#: ``.x.md.swp`` (``.swo``…) and ``x.md~`` and its ``4913`` probe, emacs's ``.#x.md`` lock and ``#x.md#`` autosave,
#: ``.x.md.<hex>.tmp`` (:func:`memzoi.base.fsio.temp_name`). They are transient, not committed content.
_EDITOR_TEMPORARY = re.compile(r"^\..+\.sw[a-p]$|~$|^\.#|^#.*#$|^4913$|^\..+\.[0-9a-f]{12}\.tmp$")


def editor_temporary(name: str) -> bool:
    """True for the name of an editor swap/backup/lock/autosave file or an atomic-write temporary (see
    :data:`_EDITOR_TEMPORARY`)."""
    # Every alternative starts with `.` or `#`, ends with `~` (before an optional newline, as `$` reads it) or is
    # `4913`: other names, nearly all of a walk's, skip the search (a tenth of a replayed check's walk).
    if name[:1] not in (".", "#") and name[-1:] not in ("~", "\n") and not name.startswith("4913"):
        return False
    return _EDITOR_TEMPORARY.search(name) is not None


def below_plane(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` lies below ``records/`` or ``proposals/`` of its nearest ``.memzoi`` directory: where
    Memzoi looks for records and packets (and skips ``index.md``/``log.md``)."""
    memzoi_dir, rel = _folder_parts(os.path.dirname(os.fspath(path)))
    return memzoi_dir is not None and rel[:1] in (("records",), ("proposals",))


#: :func:`takes_part`'s role values, read once (a member's ``.value`` read through its class costs some 0.5 µs)
_RESERVED, _OTHER = Role.RESERVED.value, Role.OTHER.value


def takes_part(path: str, role: str) -> bool:
    """Whether the file at ``path`` (any spelling whose parts name its folders: absolute, relative or a display
    path) with placement ``role`` (a :class:`memzoi.judge.workspace.Role` value) takes part in cross-file checks: the
    records and packets :func:`memzoi.project.crosscheck.plane_paths` lists, and Markdown files outside any ``.memzoi``
    folder given to ``memzoi check``. Reserved files (``index.md``/``log.md``) and stray files below ``.memzoi``
    but outside ``records/`` and ``proposals/`` (``config.toml``, ``notes/x.md`` even with record frontmatter) do
    not: Memzoi never reads them as records, so ``check`` and the language server scan them for secrets only. Nor
    does a file below ``.memzoi`` whose name is not UTF-8 (:func:`unread_entry`): ``check`` never reads it. The
    one rule both use."""
    if role == _RESERVED or unread_entry(path) is not None:  # check never reads a name that is not UTF-8
        return False
    return not (
        role == _OTHER and (not path.endswith(".md") or (MEMZOI_DIR in Path(path).parts and not below_plane(path)))
    )


#: Where a packet of each id may be, in the order a reference to it is resolved: Memzoi moves a pending packet to
#: ``resolved/applied`` or ``resolved/rejected`` (reference §2.1; an applied or rejected identity is terminal), so the resolved one is the current one.
PACKET_FOLDERS = (("proposals", "resolved", "applied"), ("proposals", "resolved", "rejected"), ("proposals", "pending"))


def record_file(memzoi_dir: Path, record_id: str) -> Path | None:
    """The file of the record ``record_id`` (``records/<id>.md``, reference §1.2) when it exists, else ``None``.
    A value that is not a Memzoi id (``..``, an absolute path, control characters) names no file: a path is never
    built from it."""
    from ..models.common import is_identifier  # noqa: PLC0415 lazy: start-up - pydantic is not loaded to place a path

    rid = record_id.strip()
    if not is_identifier(rid):
        return None
    path = memzoi_dir / "records" / f"{rid}.md"
    return path if path.is_file() else None


def linked_record_file(memzoi_dir: Path, record_id: str) -> Path | None:
    """The path of the record ``record_id`` (``records/<id>.md``) when it is a symlink or is reached through a
    symlinked folder (``.memzoi``, ``records`` or one below it): ``memzoi check`` refuses it (``canonical_path``) and
    nothing indexes it, yet it is there. ``None`` otherwise, and for a value that is not an id (as
    :func:`record_file`). Only ``lstat`` is asked: the link is never followed to read its target."""
    from ..models.common import is_identifier  # noqa: PLC0415 lazy: start-up

    rid = record_id.strip()
    if not is_identifier(rid):
        return None
    parts = ("records", *f"{rid}.md".split("/"))
    chain = [memzoi_dir, *(memzoi_dir.joinpath(*parts[: i + 1]) for i in range(len(parts)))]
    path = chain[-1]
    return path if os.path.lexists(path) and any(os.path.islink(p) for p in chain) else None


def packet_file(memzoi_dir: Path, proposal_id: str) -> Path | None:
    """The file of the proposal packet ``proposal_id`` (the first of :data:`PACKET_FOLDERS` holding
    ``<id>.md``), else ``None``; as :func:`record_file`, a value that is not an id names no file."""
    from ..models.common import is_identifier  # noqa: PLC0415 lazy: start-up

    pid = proposal_id.strip()
    if not is_identifier(pid):
        return None
    for folder in PACKET_FOLDERS:
        path = memzoi_dir.joinpath(*folder, f"{pid}.md")
        if path.is_file():
            return path
    return None


def _strip_md(rel: str) -> str:
    return rel[:-3] if rel.endswith(".md") else rel


def find_project_root(start: str | os.PathLike[str]) -> Path:
    """Memzoi's project root for ``start`` (a file or directory), reference §7.2.

    The nearest ancestor holding ``.memzoi/records/`` or ``.memzoi/config.toml``; else the nearest holding
    ``.git``; else ``start``'s directory. Never walks down.
    """
    return Path(discover(start))  # the rule is in projectroot, which start-up can import without the rest


@dataclass
class WalkResult:
    """Files found by :func:`walk`, sorted by path, plus what was skipped and why."""

    files: list[Path] = field(default_factory=list)
    symlinks: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    reserved: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)
    undecodable: list[Path] = field(default_factory=list)


def utf8_name(name: str) -> bool:
    """True when a file name (as ``os`` decoded it, surrogate-escaped) is valid UTF-8. Memzoi ids are ASCII, and a
    name that is not UTF-8 cannot be shown, indexed or turned into a URI."""
    if name.isascii():  # most names: no encoding needed
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unread_entry(path: str, memzoi_dir: str | None = None) -> str | None:
    """The entry on ``path`` below ``memzoi_dir`` (else below the first ``.memzoi`` folder ``path`` names) whose
    name is not UTF-8, the one nearest that folder: ``memzoi check``'s walk reports it (``canonical_path``) and never
    reads or enters it, so neither is anything below it (:func:`memzoi.project.checkpaths.expand`). ``None`` when
    every name below is UTF-8, and for a path below no ``.memzoi``. A string operation (no file is asked)."""
    if path.isascii():
        return None
    parts = path.split(os.sep)
    if memzoi_dir is not None:
        if not path.startswith(memzoi_dir.rstrip(os.sep) + os.sep):
            return None
        first = len(memzoi_dir.rstrip(os.sep).split(os.sep))
    elif MEMZOI_DIR in parts:
        first = parts.index(MEMZOI_DIR) + 1
    else:
        return None
    bad = next((i for i in range(first, len(parts)) if not utf8_name(parts[i])), None)
    return None if bad is None else os.sep.join(parts[: bad + 1])


def walk(root: str | os.PathLike[str], *, include_reserved: bool = False) -> WalkResult:
    """Collect regular ``*.md`` files below ``root`` the way Memzoi does.

    Hidden entries (name starting with ``.``) other than ``root`` itself, and symlinks, are skipped and listed;
    ``index.md``/``log.md`` are listed as reserved (and included when ``include_reserved``). Unreadable
    directories are listed in ``errors``, names that are not UTF-8 in ``undecodable``. Never follows symlinks, never raises for I/O errors.
    """
    out = WalkResult()
    base = Path(root)

    def visit(d: Path) -> Iterator[tuple[Path]]:  # yields each subfolder; see depth_first
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as err:
            out.errors.append((d, err.strerror or str(err)))
            return
        for e in entries:
            p = Path(e.path)
            if e.name.startswith("."):
                out.hidden.append(p)
                continue
            if not utf8_name(e.name):
                out.undecodable.append(p)
                continue
            if e.is_symlink():
                out.symlinks.append(p)
                continue
            if e.is_dir(follow_symlinks=False):
                yield (p,)
            elif e.is_file(follow_symlinks=False) and e.name.endswith(".md"):
                if e.name in RESERVED_NAMES:
                    out.reserved.append(p)
                    if include_reserved:
                        out.files.append(p)
                else:
                    out.files.append(p)

    if base.is_symlink():
        out.symlinks.append(base)
    elif base.is_dir():
        depth_first(visit(base), visit)
    out.files.sort()
    return out


def depth_first(top: Iterator[Any], visit: Callable[..., Iterator[Any]]) -> None:
    """Drive a walk written as generators (each yields the arguments of the subfolder to visit next), depth
    first in the order the folders are yielded, with an explicit stack instead of recursion."""
    stack = [top]
    while stack:
        try:
            sub = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        stack.append(visit(*sub))


def plane_file_name(name: str) -> bool:
    """True when a regular file named ``name``, below ``records`` or ``proposals``, is a record or packet by Memzoi's
    walk rules: Markdown, not ``index.md``/``log.md``, not hidden, a UTF-8 name (:func:`plane_entries` and the
    index's stat-by-name listing, :mod:`memzoi.stores.planelisting`)."""
    return name.endswith(".md") and name not in RESERVED_NAMES and not name.startswith(".") and utf8_name(name)


def plane_entries(memzoi_dir: str) -> list[os.DirEntry[str]]:
    """The directory entries of the records and packets below ``memzoi_dir/records`` and ``memzoi_dir/proposals``
    (a string path), by Memzoi's walk rules as :func:`walk` applies them (no hidden entries, no symlinks, no
    non-UTF-8 names, no ``index.md``/``log.md``, Markdown only; a symlinked ``records`` or ``proposals`` is not
    entered), in walk order (sorted, depth first), without a ``Path`` per file: the fast listing of ``memzoi
    check``'s cross-file pass and the index's refresh. An unreadable folder is left out; never raises ``OSError``."""
    out: list[os.DirEntry[str]] = []

    def visit(d: str) -> Iterator[tuple[str]]:  # yields each subfolder (see depth_first)
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            name = e.name
            if name.startswith(".") or not utf8_name(name) or e.is_symlink():
                continue
            if e.is_dir(follow_symlinks=False):
                yield (e.path,)
            elif plane_file_name(name) and e.is_file(follow_symlinks=False):
                out.append(e)

    for sub in ("records", "proposals"):
        top = os.path.join(memzoi_dir, sub)
        if not os.path.islink(top) and os.path.isdir(top):
            depth_first(visit(top), visit)
    return out


def managed_roots(memzoi_dir: Path) -> list[Path]:
    """The folders of a ``.memzoi`` directory that hold records and packets, in scan order."""
    return [memzoi_dir / "records", memzoi_dir / "proposals"]


def linked_plane(memzoi_dir: str | os.PathLike[str]) -> list[Path]:
    """The folders of the git plane that are symlinks: ``memzoi_dir`` itself (then nothing below it is looked
    at), else those of ``records`` and ``proposals`` that are. Memzoi never reads through them, so neither does
    anything here: ``check`` reports them as ``canonical_path``, rebuild, search and doctor refuse them
    (:func:`linked_plane_message`), the language server skips them."""
    base = Path(memzoi_dir)
    if base.is_symlink():
        return [base]
    return [p for p in managed_roots(base) if p.is_symlink()]


def linked_plane_message(links: list[Path]) -> str:
    """Why nothing below the symlinked git-plane folders ``links`` is read, and what to do (as ``check`` says).
    The folders are named as :func:`~memzoi.judge.pathsafety.shown_local_path` shows them."""
    from .pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up (only a message pays for the detectors)

    names = ", ".join(shown_local_path(p) for p in links)
    return (
        f"{names} {'is a symlink' if len(links) == 1 else 'are symlinks'}: Memzoi never reads through symlinks, "
        "so nothing below is checked, indexed, searched or admitted (canonical_path, see `memzoi check`); "
        "replace the link with the folder itself"
    )


def through_linked_plane(memzoi_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (below ``memzoi_dir``) is reached through a symlinked folder of :func:`linked_plane`."""
    p = Path(os.path.abspath(path))
    return any(p == link or link in p.parents for link in (Path(os.path.abspath(q)) for q in linked_plane(memzoi_dir)))


def posix(path: Path) -> str:
    """``path`` with ``/`` separators (identities and output paths are ``/``-separated everywhere)."""
    return PurePosixPath(*path.parts).as_posix() if path.parts else ""
