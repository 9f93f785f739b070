"""Expanding a command-line path into the files ``memzoi check`` checks (:func:`expand`), with the path-level
findings (symlinks, names that are not UTF-8) and the entries skipped, and why.

The walk is a committer's view of a project: every file below ``.memzoi`` (hidden ones too, but not editor swap,
backup and lock files nor a ``.git`` folder), elsewhere only Markdown that starts with frontmatter and is not
hidden; symlinks are never followed. :mod:`memzoi.runs.check` analyses what it
finds.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..base.findings import Finding, finding
from ..base.freshness import of_stat
from ..judge.configplain import CONFIG_NAME
from ..judge.pathsafety import shown_path
from ..judge.workspace import MEMZOI_DIR, depth_first, editor_temporary, unread_entry, utf8_name

_SNIFF = ("---", "+++", "{", "\ufeff---", "\ufeff+++", "\ufeff{")


class UsageError(Exception):
    """A command-line path that does not exist or cannot be checked (exit code 2)."""


@dataclass
class Expanded:
    """What one command-line path expands to (:func:`expand`): ``files`` as ``(path, display path)`` pairs,
    ``skipped`` entries with reasons, path-level ``path_findings`` (display path, finding), and ``complete``:
    the absolute paths of the ``.memzoi`` directories walked in full (every record and packet in them is among
    ``files``), for which cross-file checks need not list the directory again."""

    files: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    path_findings: list[tuple[str, Finding]] = field(default_factory=list)
    complete: set[str] = field(default_factory=set)
    configs: set[str] = field(default_factory=set)  # .memzoi directories whose config.toml was given
    #: the absolute paths of the symlinks the walk gave ``canonical_path`` findings (:func:`refused_link`)
    links: list[str] = field(default_factory=list)
    #: the absolute paths of the entries below ``.memzoi`` the walk gave ``canonical_path`` findings for a name that
    #: is not UTF-8 (:func:`memzoi.judge.workspace.unread_entry`): never read, nor entered
    names: list[str] = field(default_factory=list)
    #: every folder the walk listed: ``(absolute path, its stat stamp (size, mtime_ns, inode, ctime_ns), its device,
    #: the wall clock just before that stat)``, taken before the listing (:mod:`memzoi.base.freshness`' rule)
    folders: list[tuple[str, tuple[int, int, int, int], int, int]] = field(default_factory=list)
    #: whether what the walk found follows from those listings alone: a directory argument, no symlink met (its
    #: target decides), no file outside ``.memzoi`` sniffed for frontmatter (its bytes decide), every folder stat'ed
    listed_only: bool = True


def expand(
    arg: str, *, on_file: Callable[[str, str, tuple[int, int] | None], None] | None = None, files: bool = True
) -> Expanded:
    """Expand one command-line path into the files to check.

    A file is checked as given. A directory is walked: every regular file below a ``.memzoi`` directory (records,
    packets, reserved ``index.md``/``log.md``, ``config.toml``, hidden files and any stray file: all of them are
    committed, so all are scanned for secrets; editor swap, backup and lock files and a ``.git`` folder are not
    committed content and are skipped), and elsewhere only Markdown files that start with frontmatter. Hidden
    entries outside ``.memzoi`` are skipped; a symlinked ``.memzoi`` and symlinks inside one give a ``canonical_path``
    finding (also when the argument itself is, or lies below, such a folder). The display paths of skipped entries
    and path findings go through :func:`memzoi.judge.pathsafety.shown_path` (a secret-bearing path is shown redacted);
    those of ``files`` are redacted when the file is checked (:func:`memzoi.runs.check.check_paths`). Raises
    :class:`UsageError` for a path that does not exist. ``on_file(path, display, inode)`` is called for each file
    as soon as it is found (a caller can start on it while the walk goes on), with the absolute, normalized path
    and, for a file found by the walk, ``(device of its folder, inode)`` from the directory listing. With
    ``files=False`` the files are only handed to ``on_file`` and ``Expanded.files`` stays empty (a caller that keeps
    its own list of them, as ``memzoi check`` does, holds each file once).
    """
    out = Expanded()
    require_exists(arg)
    if unread_entry(os.path.abspath(arg)) is not None:
        # given by name (pre-commit passes staged files) as the walk meets it: reported, never read or entered
        out.listed_only = False
        out.path_findings.extend((shown_path(arg), f) for f in name_findings())
        out.names.append(os.path.abspath(arg))
        return out
    # A name that is not UTF-8 keeps its undecodable bytes (surrogateescape): the output formats spell them
    # losslessly (memzoi.base.printable), so the shown path still names the real file.
    shown_arg = arg
    if not os.path.isdir(arg):
        out.listed_only = False
        _expand_file(arg, shown_arg, out, on_file, files)
        return out
    if _linked_managed_folder(arg):
        out.listed_only = False
        # A `.memzoi` folder (or a folder below one) that is a symlink is never read, however it is reached.
        out.path_findings.extend((shown_path(shown_arg), f) for f in _symlink_findings(folder=True))
        return out
    # The walk starts from the real directory, so placement (records/, proposals/…) does not depend on how the
    # argument is spelled (`.`, a symlink to a folder); the display keeps the spelling.
    root = os.path.realpath(arg)
    if os.path.basename(root) == MEMZOI_DIR:
        out.complete.add(root)
    walk = _Walk(out, on_file, files or on_file is None)
    depth_first(walk.visit(root, shown_arg, MEMZOI_DIR in Path(root).parts), walk.visit)
    return out


def _expand_file(
    arg: str,
    shown_arg: str,
    out: Expanded,
    on_file: Callable[[str, str, tuple[int, int] | None], None] | None,
    files: bool = True,
) -> None:
    """A path that is not a directory: a file checked as given, the configuration, a symlink (a finding) or a
    special file (:class:`UsageError`)."""
    link, config, regular = os.path.islink(arg), _is_config(arg), os.path.isfile(arg)
    if link or config or not regular:  # shown here; a record's display is redacted when it is checked
        shown_arg = shown_path(shown_arg)
    if link:
        out.path_findings.extend((shown_arg, f) for f in _symlink_findings())
        return
    if not regular and not config:
        raise UsageError(f"{shown_arg}: not a regular file (a pipe or device); pass a record or packet file")
    if config:
        # The project configuration is TOML, not a record: its settings are checked (and reported by the
        # caller through ``CheckReport.memzoi_dirs``) instead of reporting missing frontmatter. It is
        # committed like the records: scanned for secrets too.
        out.skipped.append((shown_arg, "project configuration: its settings are checked"))
        out.configs.add(os.path.dirname(os.path.abspath(arg)))
    if files or on_file is None:
        out.files.append((arg, shown_arg))
    if on_file is not None:
        on_file(os.path.abspath(arg), shown_arg, None)


class _Walk:
    """The walk of one directory argument: what each entry is (skipped, a path finding, a folder to walk, a file
    to check), collected in ``out``; ``on_file`` hears of each file as soon as it is found."""

    def __init__(
        self, out: Expanded, on_file: Callable[[str, str, tuple[int, int] | None], None] | None, files: bool = True
    ) -> None:
        self.out, self.on_file, self.files = out, on_file, files

    def found(self, path: str, shown: str, inode: tuple[int, int]) -> None:
        if self.files:
            self.out.files.append((path, shown))
        if self.on_file is not None:
            self.on_file(path, shown, inode)

    def visit(self, d: str, shown: str, managed: bool) -> Iterator[tuple[str, str, bool]]:
        """Walk folder ``d``: a generator yielding each subfolder to walk before going on (the folders being
        walked live on an explicit stack, :func:`memzoi.judge.workspace.depth_first`, so no folder depth can
        exhaust the interpreter's). ``managed``: ``d`` is ``.memzoi`` or below it. The folder's stat is taken
        just before it is listed (:attr:`Expanded.folders`)."""
        checked = time.time_ns()
        try:
            stamp, dev = of_stat(os.lstat(d))
            self.out.folders.append((d, stamp, dev, checked))
        except OSError:
            self.out.listed_only = False
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            self.out.skipped.append((shown, f"unreadable directory: {err.strerror}"))
            return
        device: list[int] = []  # the folder's device, read once when its first file is found
        prefix = shown if not shown or shown.endswith("/") else shown + "/"  # os.path.join(shown, name)'s
        for e in entries:
            if self._named_out(e.name, shown, managed, d):
                continue
            q_shown = prefix + e.name
            if e.is_symlink():
                self._symlink(e, q_shown, managed)
            elif e.is_dir(follow_symlinks=False):
                if e.name == MEMZOI_DIR and not managed:
                    self.out.complete.add(os.path.abspath(e.path))
                yield e.path, q_shown, managed or e.name == MEMZOI_DIR
            else:
                self._file(e, d, q_shown, managed, device)

    def _named_out(self, name: str, shown: str, managed: bool, d: str) -> bool:
        """Whether the entry ``name`` is left out for its name (editor file, hidden, not UTF-8), recorded why."""
        if managed and editor_temporary(name):
            # transient files of editors (and of our own atomic writes), not committed content; given by name
            # (pre-commit passes staged files) they are checked like any file
            self.out.skipped.append((shown_path(os.path.join(shown, name)), "editor swap, backup or lock file"))
            return True
        if name.startswith(".") and name != MEMZOI_DIR and not (managed and name != ".git"):
            # Memzoi skips hidden entries, but below .memzoi they are committed with the rest: they are scanned
            # for secrets as stray files are (memzoi.judge.workspace.Placement.hidden); elsewhere they are skipped
            self.out.skipped.append((shown_path(os.path.join(shown, name)), "hidden"))
            return True
        if utf8_name(name):
            return False
        q_shown = os.path.join(shown, name)
        if managed:
            self.out.path_findings.extend((shown_path(q_shown), f) for f in name_findings())
            self.out.names.append(os.path.abspath(os.path.join(d, name)))
        else:
            self.out.skipped.append((shown_path(q_shown), "name is not UTF-8"))
        return True

    def _symlink(self, e: os.DirEntry[str], q_shown: str, managed: bool) -> None:
        """A symlink is never followed: a finding where Memzoi would read it, else skipped."""
        self.out.listed_only = False  # where the link leads decides
        to_folder = _links_to_folder(e)
        if refused_link(e.name, to_folder, managed):
            self.out.path_findings.extend((shown_path(q_shown), f) for f in _symlink_findings(folder=to_folder))
            self.out.links.append(os.path.abspath(e.path))
        else:
            self.out.skipped.append((shown_path(q_shown), "symlink"))

    def _file(self, e: os.DirEntry[str], d: str, q_shown: str, managed: bool, device: list[int]) -> None:
        """A regular file: every one below ``.memzoi``, elsewhere Markdown that starts with frontmatter."""
        if not e.is_file(follow_symlinks=False):
            return
        if not managed:
            if not e.name.endswith(".md"):
                return
            self.out.listed_only = False  # its first bytes decide
            if not _looks_like_memzoi(e.path):
                self.out.skipped.append((q_shown, "no frontmatter (not a Memzoi file)"))
                return
        # Every committed file below .memzoi: records and packets are analysed in full, reserved and
        # stray files (config.toml included) scanned for secrets (memzoi.judge.analysis.scan_only).
        if not device:
            device.append(os.stat(d).st_dev)
        self.found(e.path, q_shown, (device[0], e.inode()))


def require_exists(arg: str) -> None:
    """Raise :class:`UsageError` for an empty or missing path argument."""
    if arg == "":
        raise UsageError("an empty path was given; pass a .memzoi file, a directory or a project root")
    try:
        os.lstat(arg)
    except OSError as err:  # lexists() said "missing" for a name too long or a folder that cannot be entered
        shown = shown_path(arg)  # a name that bears a secret is not echoed
        if err.errno == errno.ENAMETOOLONG:
            raise UsageError(
                f"{shown}: the name is longer than the file system allows; pass an existing file, "
                "a directory or a project root"
            ) from None
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            raise UsageError(
                f"{shown}: no such file or directory; pass a .memzoi file, a directory or a project root"
            ) from None
        raise UsageError(f"{shown}: cannot be read ({err.strerror}); check its permissions") from None


def _is_config(arg: str) -> bool:
    """True for the project configuration file, ``.memzoi/config.toml``."""
    return (
        os.path.basename(arg) == CONFIG_NAME and os.path.basename(os.path.dirname(os.path.abspath(arg))) == MEMZOI_DIR
    )


def _linked_managed_folder(arg: str) -> bool:
    """True when the directory ``arg``, as spelled, is a ``.memzoi`` folder or lies below one and that folder or
    one between it and ``arg`` is a symlink (Memzoi refuses a symlinked records root or packet folder). A symlink
    given as the argument that is not itself such a folder (an alias of a project's ``.memzoi``) is followed."""
    parts = Path(os.path.abspath(arg)).parts
    if MEMZOI_DIR not in parts:
        return False
    first = len(parts) - 1 - parts[::-1].index(MEMZOI_DIR)
    return any(os.path.islink(os.path.join(*parts[: i + 1])) for i in range(first, len(parts)))


def _looks_like_memzoi(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return True  # let the analysis report the read error
    return head.decode("utf-8", errors="ignore").startswith(_SNIFF)


def _links_to_folder(entry: os.DirEntry[str]) -> bool:
    """True when the symlink ``entry`` resolves to a folder; False for one to a file, a dangling link and a link
    that cannot be resolved (a loop raises ``ELOOP`` from :meth:`os.DirEntry.is_dir`, which would end the walk)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def refused_link(name: str, to_folder: bool, managed: bool) -> bool:
    """Whether a symlink named ``name`` met by the walk is reported (``canonical_path``, :func:`link_findings`): below
    ``.memzoi`` (``managed``) one named like a record or packet (``*.md``) or leading to a folder, and a symlinked
    ``.memzoi`` anywhere. Any other symlink is skipped. The one rule of ``memzoi check`` and the language server."""
    return (managed and (name.endswith(".md") or to_folder)) or name == MEMZOI_DIR


def link_findings(path: str) -> list[Finding]:
    """What ``memzoi check`` reports for the symlink ``path`` its walk met (:func:`refused_link`): ``canonical_path``
    and ``unsafe_output_path`` at the start of the file, worded for a link to a folder or to a file (a dangling or
    unresolvable link counts as one to a file). The link is never followed to read its target."""
    try:
        folder = os.path.isdir(path)
    except (OSError, ValueError):
        folder = False
    return _symlink_findings(folder=folder)


def name_findings() -> list[Finding]:
    """What ``memzoi check`` reports for an entry below ``.memzoi`` whose name is not UTF-8 (a file, a folder or a
    symlink; :func:`memzoi.judge.workspace.unread_entry`): ``canonical_path`` at the start of the file, never read."""
    message = (
        "this file name is not valid UTF-8, so Memzoi cannot read it as a record "
        "or proposal; rename it to its id (lower-case letters, digits and `-`)"
    )
    return [finding("canonical_path", message, 0, 0)]


def refused_findings(path: str, *, opened: bool = False) -> list[Finding] | None:
    """What ``memzoi check`` reports for the entry ``path`` its walk refuses without reading it (:attr:`Expanded.names`,
    :attr:`Expanded.links`): :func:`name_findings` for a name that is not UTF-8 (the walk asks the name first),
    else :func:`link_findings` for a symlink. ``opened``: the file is open in an editor; then a symlink gives
    ``None`` (its buffer is analysed, and admission adds what ``check`` says of the link), while a name that is not
    UTF-8 still gives ``check``'s one finding (``check`` never reads the file, so no text of it is judged). The one
    answer of ``check`` and the language server."""
    if unread_entry(os.path.abspath(path)) is not None:
        return name_findings()
    return None if opened else link_findings(path)


def _symlink_findings(folder: bool = False) -> list[Finding]:
    """``canonical_path`` and Memzoi's ``unsafe_output_path`` for a symlink (:func:`memzoi.project.admission.linked_findings`)."""
    from .admission import linked_findings  # noqa: PLC0415 lazy: start-up

    if folder:
        message = (
            "this folder is a symlink: Memzoi never reads through symlinks, so nothing below it is checked, "
            "indexed or admitted; replace the link with the folder itself"
        )
    else:
        message = "symlinks are never read as Memzoi files (Memzoi skips them); replace the link with the file itself"
    return linked_findings(message, 0, 0)


__all__ = [
    "Expanded",
    "UsageError",
    "expand",
    "link_findings",
    "name_findings",
    "refused_findings",
    "refused_link",
    "require_exists",
]
