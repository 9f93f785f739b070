"""Where the two resident files are and what their caps are (reference ``zuno-memory.md`` §2 "Locations").

- global: ``$ZUNO_CONFIG_DIR/memory/MEMORY.md``, else ``~/.config/zuno/memory/MEMORY.md``; shared by every
  checkout;
- project: ``<root>/.zuno/RULES.md``.

Both, and the caps (2,200 and 3,000 characters), can be changed in ``[resident]`` of ``.memzoi/config.toml``
(:class:`memzoi.config.ResidentSection`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config import MemzoiConfig, load_config
from ..ledger import Refusal
from ..vocabulary import RESIDENT_SCOPES as SCOPES
from ..workspace import MEMZOI_DIR, find_project_root


@dataclass(frozen=True)
class ResidentFile:
    """One resident file: its ``scope`` (``global``/``project``), absolute ``path``, ``cap`` in characters, and the
    project's ``[safety] accepted_fingerprints`` (``accepted``), carried with the file so that the editor's scan
    and the write path's refusal read the same set (:mod:`.threats`)."""

    scope: str
    path: Path
    cap: int
    accepted: frozenset[str] = frozenset()


def default_global_path() -> Path:
    """``$ZUNO_CONFIG_DIR/memory/MEMORY.md``, else ``$HOME/.config/zuno/memory/MEMORY.md`` (Zuno ``scope.rs``)."""
    base = os.environ.get("ZUNO_CONFIG_DIR")
    if base:
        return Path(base) / "memory" / "MEMORY.md"
    return Path(os.path.expanduser("~")) / ".config" / "zuno" / "memory" / "MEMORY.md"


def project_config(project_root: Path) -> MemzoiConfig:
    """The project's configuration (defaults when absent). Raises :class:`Refusal` ``invalid_config`` when the
    file is invalid: resident writes never guess where the files are."""
    loaded = load_config(project_root / MEMZOI_DIR)
    if loaded.errors:
        raise Refusal("invalid_config", "; ".join(loaded.errors))
    return loaded.config


def resident_file(project_root: Path, scope: str, config: MemzoiConfig | None = None) -> ResidentFile:
    """The resident file of ``scope`` for the project at ``project_root`` (absolute, resolved root).

    Raises :class:`Refusal` ``invalid_scope`` for another scope, ``invalid_config`` for an invalid configuration.
    """
    if scope not in SCOPES:
        raise Refusal("invalid_scope", f"unknown scope `{scope}`; use global or project")
    config = config or project_config(project_root)
    section = config.resident
    if scope == "project":
        return ResidentFile("project", project_root / Path(section.project_path), section.project_char_limit,
                            config.accepted)
    path = Path(os.path.expanduser(section.global_path)) if section.global_path else default_global_path()
    return ResidentFile("global", path.absolute(), section.global_char_limit, config.accepted)


def resident_files(project_root: Path, config: MemzoiConfig | None = None) -> list[ResidentFile]:
    """Both resident files of the project, global first (the prompt's order)."""
    config = config or project_config(project_root)
    return [resident_file(project_root, s, config) for s in SCOPES]


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def which_file(path: Path, roots: Sequence[Path] = ()) -> tuple[Path, ResidentFile] | None:
    """``(project root, resident file)`` when ``path`` is a resident file of one of ``roots`` or of the project
    found from ``path`` itself (``.zuno/RULES.md`` is found from its own folder); else ``None``. A project whose
    configuration is invalid is skipped."""
    for root in [*roots, find_project_root(path)]:
        try:
            files = resident_files(Path(root).resolve())
        except Refusal:
            continue
        for file in files:
            if _same(file.path, path):
                return Path(root).resolve(), file
    return None
