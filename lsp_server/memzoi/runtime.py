"""The runtime plane's location: ``${MEMZOI_HOME:-~/.memzoi}/projects/<repository-key>/`` (SPEC §7).

Key derivation is Memzoi's (reference §7.3), so both tools agree on which directory belongs to a repository;
the database file names inside it are ours (``memzoi-lsp-*.db``), so Memzoi's ``shared.db`` is never touched.
"""

from __future__ import annotations

import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import blake3

LEDGER_DB = "memzoi-lsp-ledger.db"
INDEX_DB = "memzoi-lsp-index.db"
LOCK_FILE = "memzoi-lsp-lifecycle.lock"
_GIT_TIMEOUT = 10


def memzoi_home() -> Path:
    """``$MEMZOI_HOME``, else ``$HOME/.memzoi``, else ``.memzoi`` (reference §7.1)."""
    env = os.environ.get("MEMZOI_HOME")
    if env:
        return Path(env)
    home = os.environ.get("HOME")
    return Path(home) / ".memzoi" if home else Path(".memzoi")


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
    """Repository and worktree keys of a project root, and whether it is inside git."""

    repository_key: str
    worktree_key: str
    in_git: bool


def derive_keys(project_root: str | os.PathLike[str]) -> RuntimeKeys:
    """Memzoi's repository and worktree keys for ``project_root`` (reference §7.3).

    In git: ``runtime_key(display, [common_dir, relative_project])`` and ``runtime_key("worktree", [git_dir,
    relative_project])``; outside git the non-git variants. Paths are absolute and resolved.
    """
    root = Path(project_root).resolve()
    top = _git(root, "rev-parse", "--show-toplevel")
    common = _git(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
    git_dir = _git(root, "rev-parse", "--path-format=absolute", "--git-dir")
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
        )
    raw = str(root).encode()
    return RuntimeKeys(
        runtime_key(root.name, [b"non-git-repository-v2", raw]),
        runtime_key("worktree", [b"non-git-worktree-v1", raw]),
        False,
    )


def project_runtime_dir(project_root: str | os.PathLike[str], *, create: bool = False) -> Path:
    """``<home>/projects/<repository-key>/`` for ``project_root``; created (mode 0700) when ``create``."""
    keys = derive_keys(project_root)
    path = memzoi_home() / "projects" / keys.repository_key
    if create:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
