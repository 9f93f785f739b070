"""What the command line and the editor show about resident memory: the rendered prompt blocks with usage, the
candidates of a project's files, which candidate wrote an entry (``None``: edited by hand), and what the last
reviewed write left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..judge.config_model import MemzoiConfig
from ..ledger import Refusal
from . import candidates as db
from .candidates import Candidate
from .format import char_count, parse, render_block, usage
from .scope import ResidentFile, project_config, resident_files
from .store import read_file


@dataclass
class ScopeView:
    """One resident file as the prompt sees it: entries, characters used, the usage label and the block
    (``""`` when empty), or ``error`` when the file cannot be read."""

    file: ResidentFile
    entries: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def used(self) -> int:
        """Characters of the serialized entries."""
        return char_count(self.entries)

    @property
    def block(self) -> str:
        """The rendered prompt block (Zuno ``render.rs``)."""
        return render_block(self.file.scope, self.entries, self.file.cap)

    def to_json(self) -> dict[str, Any]:
        """``{"scope", "path", "cap", "used", "usage", "entries", "block", "error"}``."""
        return {
            "scope": self.file.scope,
            "path": str(self.file.path),
            "cap": self.file.cap,
            "used": self.used,
            "usage": usage(self.used, self.file.cap),
            "entries": self.entries,
            "block": self.block,
            "error": self.error,
        }


def scope_views(project_root: str | Path, config: MemzoiConfig | None = None) -> list[ScopeView]:
    """Both resident files of the project, global first. Never raises for a file that cannot be read (its
    view carries the error)."""
    root = Path(project_root).resolve()
    out = []
    for file in resident_files(root, config or project_config(root)):
        try:
            _, text, _ = read_file(file.path)
            out.append(ScopeView(file, parse(text or "")))
        except Refusal as err:
            out.append(ScopeView(file, error=err.message))
    return out


def listed_views(project_root: str | Path, config: MemzoiConfig | None = None) -> list[ScopeView]:
    """:func:`scope_views` as a listing shows them: the project file only when ``project_root`` is a project (it
    holds ``.memzoi/`` or ``.zuno/``). An editor whose workspace is no project (the global file's own folder, Zuno's
    config folder) is shown the global file alone, never a project file made up in that folder (newuser5 D4)."""
    root = Path(project_root).resolve()
    views = scope_views(root, config)
    if (root / ".memzoi").is_dir() or (root / ".zuno").is_dir():
        return views
    return [v for v in views if v.file.scope != "project"]


def candidates_for(
    project_root: str | Path, config: MemzoiConfig | None = None, files: list[ResidentFile] | None = None
) -> list[Candidate]:
    """The candidates of the project's two resident files (pending first, newest first; Zuno's listing order),
    read without write access (:func:`.candidates.read`: a read-only memzoi home still lists them)."""
    root = Path(project_root).resolve()
    paths = [str(f.path) for f in files or resident_files(root, config or project_config(root))]
    return db.read(lambda conn: db.list_for_paths(conn, paths), [])


def entry_provenance(entries: list[str], history: list[Candidate]) -> list[Candidate | None]:
    """For each entry, the reviewed candidate that put it there, or ``None`` when none did (edited by hand): the
    most recently applied ``add``/``replace`` whose content is the entry (an ``uncertain`` one counts when it was
    applied once), else an applied explicit recovery whose
    after entries hold it (the user chose that state after a crash). The editor's hover and its
    ``resident_hand_edit`` findings both use this rule."""
    wrote: dict[str, Candidate] = {}
    # An uncertain candidate that was applied once (its undo refused, say) did write its entry under review.
    applied = sorted(
        (c for c in history if c.status == "applied" or (c.status == "uncertain" and c.time_applied)),
        key=lambda c: c.time_applied or 0,
    )
    for cand in applied:
        if cand.action in ("add", "replace") and cand.content:
            wrote[cand.content] = cand
    for cand in applied:
        if cand.action == "recover":
            for entry in cand.after or []:
                wrote.setdefault(entry, cand)
    return [wrote.get(e) for e in entries]


def last_written(history: list[Candidate]) -> tuple[Candidate, list[str]] | None:
    """The candidate that last wrote the file and the entries it left there (its after snapshot when applied,
    its before snapshot when undone), or ``None`` when no candidate has written the file."""
    best: tuple[int, Candidate, list[str]] | None = None
    for cand in history:
        if cand.status == "applied" and cand.after is not None:
            snap = cand.after
        elif cand.status == "undone" and cand.before is not None:
            snap = cand.before
        else:
            continue
        if best is None or cand.time_updated > best[0]:
            best = (cand.time_updated, cand, snap)
    return None if best is None else (best[1], best[2])


def hand_edited(entries: list[str], history: list[Candidate]) -> bool:
    """Whether a file holding ``entries`` carries a hand edit no reviewed write has seen: it differs from what the
    last reviewed write left (:func:`last_written`: an entry added, changed, removed or moved by hand), or no
    reviewed write has touched it yet and it has entries (written by hand). A write to such a file first keeps a
    ``.bak`` copy of its bytes (:func:`memzoi.resident.service.apply`), so each hand edit is copied once: the
    file a reviewed write left is in that candidate's snapshots."""
    last = last_written(history)
    return bool(entries) if last is None else last[1] != entries
