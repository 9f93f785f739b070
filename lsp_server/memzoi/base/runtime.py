"""The runtime plane's location: ``${MEMZOI_HOME:-~/.memzoi}/projects/<repository-key>/`` (SPEC §7).

Key derivation is Memzoi's (reference §7.3), so both tools agree on which directory belongs to a repository;
the database file names inside it are ours (``memzoi-lsp-*.db``), so Memzoi's ``shared.db`` is never touched.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import blake3

LEDGER_DB = "memzoi-lsp-ledger.db"
LOCK_FILE = "memzoi-lsp-lifecycle.lock"
#: The project store (:mod:`memzoi.stores.store`: store entries, facts, search rows, replayable reports) in the worktree's
#: runtime directory.
STORE_DB = "memzoi-lsp-store.db"
#: The resident candidate database (:mod:`memzoi.resident.candidates`), one in the memzoi home for every project.
RESIDENT_DB = "memzoi-lsp-resident.db"
_GIT_TIMEOUT = 10


def memzoi_home() -> Path:
    """``$MEMZOI_HOME``, else ``$HOME/.memzoi``, else ``.memzoi`` (reference §7.1)."""
    env = os.environ.get("MEMZOI_HOME")
    if env:
        return Path(env)
    home = os.environ.get("HOME")
    return Path(home) / ".memzoi" if home else Path(".memzoi")


def zuno_config_dir() -> Path:
    """Zuno's configuration folder, which holds the user's global resident file and ``memzoi.toml``:
    ``$ZUNO_CONFIG_DIR``, else ``$HOME/.config/zuno`` (Zuno ``scope.rs``)."""
    base = os.environ.get("ZUNO_CONFIG_DIR")
    return Path(base) if base else Path(os.path.expanduser("~")) / ".config" / "zuno"


def sanitize(prefix: str) -> str:
    """ASCII alphanumerics, ``-`` and ``_`` lower-cased; every other char becomes ``-``; trimmed of ``-``;
    ``project`` when empty."""
    out = "".join(c.lower() if (c.isascii() and (c.isalnum() or c in "-_")) else "-" for c in prefix).strip("-")
    return out or "project"


def runtime_key(prefix: str, fields: list[bytes]) -> str:
    """``sanitize(prefix) + "-" + first 16 hex of BLAKE3(concat(u64_be(len) ‖ bytes))`` (reference §7.3)."""
    h = blake3.blake3()
    for f in fields:
        h.update(struct.pack(">Q", len(f)))
        h.update(f)
    return f"{sanitize(prefix)}-{h.hexdigest()[:16]}"


def git_env() -> dict[str, str]:
    """The environment for git child processes: inherited ``GIT_*`` variables cleared (reference §4.3)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout[:8192].decode("utf-8", errors="replace").strip()


@dataclass(frozen=True)
class RuntimeKeys:
    """Repository and worktree keys of a project root, whether it is inside git, and the git common dir (absolute,
    resolved; empty outside git), where :mod:`memzoi.base.checkout` keeps the checkout's id."""

    repository_key: str
    worktree_key: str
    in_git: bool
    git_common_dir: str = ""


def derive_keys(project_root: str | os.PathLike[str]) -> RuntimeKeys:
    """Memzoi's repository and worktree keys for ``project_root`` (reference §7.3).

    In git: ``runtime_key(display, [common_dir, relative_project])`` and ``runtime_key("worktree", [git_dir,
    relative_project])``; outside git the non-git variants. Paths are absolute and resolved.
    """
    root = Path(project_root).resolve()
    # One git process answers all three (a process costs more than its answer: three made a fifth of a replayed
    # check's wall time); it prints one line each, in order, or fails as a whole where any of them would.
    out = _git(root, "rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir", "--git-dir")
    lines = [line.strip() for line in out.splitlines()] if out else []
    top, common, git_dir = lines if len(lines) == 3 else (None, None, None)
    if top and common and git_dir:
        worktree = Path(top).resolve()
        rel = os.path.relpath(root, worktree)
        rel = "" if rel == "." else rel
        common_path = Path(common).resolve()
        if rel:
            display = Path(rel).name
        elif common_path.name == ".git":
            display = common_path.parent.name
        else:
            display = common_path.name or "repository"
        rel_b = rel.encode()
        return RuntimeKeys(
            runtime_key(display, [str(common_path).encode(), rel_b]),
            runtime_key("worktree", [str(Path(git_dir).resolve()).encode(), rel_b]),
            True,
            str(common_path),
        )
    raw = str(root).encode()
    return RuntimeKeys(outside_git_key(root), runtime_key("worktree", [b"non-git-worktree-v1", raw]), False)


def outside_git_key(project_root: str | os.PathLike[str]) -> str:
    """The repository key :func:`derive_keys` gives ``project_root`` (resolved) outside git, or where git refuses to
    work (another user's repository, not in ``safe.directory``): the folder a project kept its ledger in before
    git took it as a repository (reference §7.3's non-git variant)."""
    root = Path(project_root).resolve()
    return runtime_key(root.name, [b"non-git-repository-v2", str(root).encode()])


@lru_cache(maxsize=64)
def _cached_keys(root: str, has_git: bool) -> RuntimeKeys:
    return derive_keys(root)


def cached_keys(project_root: str | os.PathLike[str]) -> RuntimeKeys:
    """:func:`derive_keys`, cached per resolved root and git presence for the life of the process (deriving the
    keys runs git three times, which must not happen per file or per keystroke)."""
    root = Path(project_root).resolve()
    return _cached_keys(str(root), (root / ".git").exists())


def worktree_runtime_dir(project_root: str | os.PathLike[str]) -> Path:
    """``<home>/projects/<repository-key>/worktrees/<worktree-key>/``, where a worktree's derived state lives
    (the index, the verdict cache); keys from :func:`cached_keys`. Creates nothing."""
    keys = cached_keys(project_root)
    return memzoi_home() / "projects" / keys.repository_key / "worktrees" / keys.worktree_key


def project_runtime_dir(project_root: str | os.PathLike[str], *, create: bool = False) -> Path:
    """``<home>/projects/<repository-key>/`` for ``project_root``; created (mode 0700, see :func:`private_dir`)
    when ``create``."""
    keys = derive_keys(project_root)
    path = memzoi_home() / "projects" / keys.repository_key
    if create:
        private_dir(path)
    return path


#: Runtime state is private to its user: directories 0700, databases and lock files 0600.
DIR_MODE, FILE_MODE = 0o700, 0o600
#: SQLite's companion files of a database (WAL mode), which hold the same data.
DB_COMPANIONS = ("-wal", "-shm", "-journal")


def _runtime_chain(directory: Path) -> list[Path]:
    """``directory`` and its ancestors up to and including the memzoi home, when it lies under it (only those
    are ours to create or tighten); else just ``directory``."""
    home = Path(os.path.abspath(memzoi_home()))
    d = Path(os.path.abspath(directory))
    chain = [d]
    if d != home and home in d.parents:
        while chain[-1] != home:
            chain.append(chain[-1].parent)
    return chain


def private_dir(directory: str | os.PathLike[str]) -> Path:
    """Create ``directory`` (a runtime directory) with its missing parents, each new one mode 0700, whichever
    command runs first; existing ones from the memzoi home down to it that this user owns and that others may
    enter are tightened to 0700. Returns the path. Raises ``OSError`` when a directory cannot be created."""
    chain = _runtime_chain(Path(directory))
    chain[-1].parent.mkdir(parents=True, exist_ok=True)  # above the memzoi home: not runtime state
    for d in reversed(chain):
        d.mkdir(mode=DIR_MODE, exist_ok=True)
    for d in chain:
        _tighten(d, DIR_MODE)
    return Path(directory)


def private_file(path: str | os.PathLike[str]) -> Path:
    """Make sure the runtime file ``path`` (a database or lock file) exists with mode 0600 and that its SQLite
    companions (``-wal``, ``-shm``, ``-journal``), when present, are 0600 too, so SQLite (which gives new
    companions the database's mode) never creates a readable copy. Symlinks and other files that are not regular
    are refused (``OSError``).

    A file that exists is never opened: closing any descriptor of a file ends every POSIX lock the process holds on
    it (``fcntl``), SQLite's included. A database this process has open would then look unused to the others, and
    another process closing it would take itself for the last user: it checkpoints and deletes the WAL this one is
    still writing to (a store of two servers at once was left "malformed"; SQLite's "How To Corrupt" §2.2)."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        os.close(fd)  # a file made now: no lock of this process is on it yet
    except FileExistsError:
        mode = os.lstat(p).st_mode
        if not stat.S_ISREG(mode):  # a symlink is refused as O_NOFOLLOW refuses it
            raise OSError(errno.ELOOP if stat.S_ISLNK(mode) else errno.EEXIST, "not a regular file", str(p)) from None
    for q in (p, *(p.with_name(p.name + s) for s in DB_COMPANIONS)):
        _tighten(q, FILE_MODE)
    return p


def database_started(path: str | os.PathLike[str]) -> bool:
    """Whether the SQLite database file ``path`` holds anything: a regular file that is not empty, or an empty one
    whose ``-wal`` is not. SQLite creates the file when it opens it and writes its first page at the first write,
    so a first write that failed (a full disk) leaves a 0-byte file: readers take it, as an absent file, for "no
    database yet" (there is nothing in it to read or to lose). Raises ``OSError`` when the file cannot be looked
    at (a folder this user may not enter), as ``Path.exists`` does."""
    for name in (os.fspath(path), f"{os.fspath(path)}-wal"):
        try:
            st = os.stat(name)
        except (FileNotFoundError, NotADirectoryError):
            return False
        if not stat.S_ISREG(st.st_mode):
            return False
        if st.st_size:
            return True
    return False


def drop_empty_database(path: str | os.PathLike[str]) -> None:
    """Remove the database file ``path`` and its SQLite companions when it holds nothing (:func:`database_started`:
    what a first write that failed leaves), so no empty file stays behind; a database holding anything is kept. The
    caller made the file and its first write failed because the disk is full, so no other process wrote it either."""
    try:
        if database_started(path):
            return
        for f in (os.fspath(path), *(f"{os.fspath(path)}{s}" for s in DB_COMPANIONS)):
            if os.path.isfile(f) and not os.path.islink(f):
                os.unlink(f)
    except OSError:  # it stays: readers take an empty file for no database anyway
        pass


def _tighten(path: Path, mode: int) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid() or not stat.S_IMODE(st.st_mode) & 0o077:
        return
    os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077 & 0o7777 | (mode & 0o700))


#: What memzoi-lsp keeps directly in the memzoi home (shared by every project): files named ``memzoi-lsp-*`` (the
#: resident candidate database and its companions) and the folder of resident-file locks.
HOME_FILE_PREFIX, RESIDENT_LOCKS = "memzoi-lsp-", "resident-locks"


def _tree(top: Path) -> list[Path]:
    """``top`` and everything below it, never through a symlink (empty when ``top`` is absent or a link)."""
    if not top.exists() or top.is_symlink():
        return []
    out = [top]
    if top.is_dir():
        for dirpath, dirnames, filenames in os.walk(top):
            out.extend(Path(dirpath) / name for name in dirnames + filenames)
    return out


def home_state() -> list[Path]:
    """Every path of the memzoi home's own state that memzoi-lsp creates (see :data:`HOME_FILE_PREFIX`)."""
    home = memzoi_home()
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    out: list[Path] = []
    for name in names:
        if name.startswith(HOME_FILE_PREFIX) or name == RESIDENT_LOCKS:
            out.extend(_tree(home / name))
    return out


def tighten_tree(top: str | os.PathLike[str]) -> None:
    """Tighten ``top`` and everything below it that this user owns to 0700 (folders) and 0600 (files), never
    through a symlink: runtime state a user or an old version left readable becomes private again."""
    for p in _tree(Path(top)):
        _tighten(p, DIR_MODE if p.is_dir() else FILE_MODE)


def loose_modes(project_root: str | os.PathLike[str]) -> list[tuple[Path, int]]:
    """Runtime paths memzoi-lsp creates that other users may read, write or enter: ``[(path, mode)]`` (for
    ``memzoi doctor``): the memzoi home, ``projects/``, the project's runtime directory and everything under it,
    and the home's own state shared by every project (:func:`home_state`: the resident candidate database, the
    resident-file locks). Nothing is created or changed."""
    rdir = memzoi_home() / "projects" / derive_keys(project_root).repository_key
    out = []
    for d in reversed(_runtime_chain(rdir)):
        out.extend(_loose(d))
    for p in _tree(rdir)[1:] + home_state():
        out.extend(_loose(p))
    return out


def _loose(path: Path) -> list[tuple[Path, int]]:
    try:
        st = os.lstat(path)
    except OSError:
        return []
    if stat.S_ISLNK(st.st_mode) or not stat.S_IMODE(st.st_mode) & 0o077:
        return []
    return [(path, stat.S_IMODE(st.st_mode))]
