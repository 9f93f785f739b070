"""Which project an agent's MCP session serves: the decision behind ``memzoi-mcp``'s project discovery.

Agent clients start MCP servers in different places (Claude Code in the project with ``CLAUDE_PROJECT_DIR`` set,
Cursor in ``$HOME``, Codex with a scrubbed environment), so the project is found in this order: an explicit
``--root``; the client's MCP roots (``roots/list``), the first that lies in a Memzoi project; the
``CLAUDE_PROJECT_DIR`` environment variable; the working directory. Each candidate is resolved to its project root
as Memzoi does (:func:`memzoi.judge.workspace.find_project_root`, reference §7.2). Without a ``.memzoi`` folder anywhere
the server still answers: every tool then says how to create one (:func:`no_project_message`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..judge.workspace import MEMZOI_DIR, find_project_root


@dataclass(frozen=True)
class ProjectChoice:
    """The project a session serves: ``root`` (absolute), ``source`` (``--root``, ``roots``,
    ``CLAUDE_PROJECT_DIR`` or ``cwd``) and whether it holds a ``.memzoi`` folder."""

    root: Path
    source: str

    @property
    def found(self) -> bool:
        """True when the root holds a ``.memzoi`` folder."""
        return (self.root / MEMZOI_DIR).is_dir()


def root_uri_path(uri: str) -> Path | None:
    """The local path of an MCP root's ``file:`` URI; ``None`` for any other scheme or a malformed URI."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    return Path(path) if path.startswith("/") else None


def choose_project(
    explicit: str | os.PathLike[str] | None, roots: Iterable[str], env: Mapping[str, str], cwd: str | os.PathLike[str]
) -> ProjectChoice:
    """The project to serve (see the module docstring). ``explicit``: the ``--root`` option; ``roots``: the
    client's root URIs (empty when it has none or was not asked); ``env``: the server's environment; ``cwd``: its
    working directory. The first candidate whose project holds ``.memzoi`` wins; when none does, the first
    candidate given (``--root``, else the first root, else ``CLAUDE_PROJECT_DIR``, else ``cwd``) is returned, so
    the advice names the folder the user meant."""
    if explicit:
        return ProjectChoice(Path(explicit).expanduser().resolve(), "--root")
    candidates: list[tuple[Path, str]] = [(p, "roots") for p in map(root_uri_path, roots) if p is not None]
    if env.get("CLAUDE_PROJECT_DIR"):
        candidates.append((Path(env["CLAUDE_PROJECT_DIR"]).expanduser(), "CLAUDE_PROJECT_DIR"))
    candidates.append((Path(cwd), "cwd"))
    choices = [ProjectChoice(find_project_root(p) if p.exists() else p.resolve(), how) for p, how in candidates]
    return next((c for c in choices if c.found), choices[0])


def no_project_message(choice: ProjectChoice) -> str:
    """What every tool answers when the chosen project has no ``.memzoi`` folder: where it looked and how to fix
    it."""
    how = {
        "--root": "given with --root",
        "roots": "the client's workspace root",
        "CLAUDE_PROJECT_DIR": "from CLAUDE_PROJECT_DIR",
        "cwd": "the server's working directory",
    }[choice.source]
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    return (
        f"no .memzoi directory at {shown_local_path(choice.root)} ({how}); create one with `memzoi init` in the "
        "project, or start memzoi-mcp with --root PROJECT"
    )
