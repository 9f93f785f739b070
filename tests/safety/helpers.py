"""Shared builders for the safety tests: a valid record and a valid pending proposal, written under tmp paths."""

from __future__ import annotations

from pathlib import Path

from memzoi.analysis import analyze_text
from memzoi.findings import CODES

SAFETY_CODES = frozenset(c for c, (_, group) in CODES.items() if group in ("gate", "detector"))


def record(*, scope: str = "repo", scope_id: str | None = None, visibility: str = "repo",
           content_class: str = "general_repo_knowledge", extra: str = "", body: str = "Use pnpm for installs.") -> str:
    """A current-profile record ``rec`` whose frontmatter and body can be varied."""
    sid = f"scope_id: {scope_id}\n" if scope_id else ""
    return (
        "---\nid: rec\nkind: memory\nprofile: memzoi\ntype: fact\nlane: semantic\ntitle: Use pnpm\n"
        f"scope: {scope}\n{sid}visibility: {visibility}\ncontent_class: {content_class}\nstatus: active\n"
        'confidence: 1\ntimestamp: "2026-07-06T00:00:00Z"\nretention: {}\n'
        "origin:\n  origin_key: repository-record:rec\n  route: repository_materialization\n"
        f"{extra}---\n\n# Use pnpm\n\n{body}\n"
    )


def proposal(*, sensitivity: str = "repo-safe", scope: str = "kind: repo", content_class: str = "general_repo_knowledge",
             body: str = "Use pnpm for installs.") -> str:
    """A pending create proposal ``prop`` whose gate fields can be varied (``scope`` is the block's YAML)."""
    scope_yaml = "\n".join("  " + line for line in scope.splitlines())
    return (
        "---\nid: prop\nkind: proposal\nprofile: memzoi\ntype: fact\nlane: semantic\ntitle: Use pnpm\n"
        "description: Use pnpm for installs.\nstatus: proposed\nproposal:\n  action: create\n  proposed_by: agent\n"
        "  proposed_at: 2026-07-06T00:00:00Z\n  reason: Seen in CI.\n"
        f"scope:\n{scope_yaml}\ntimestamp: 2026-07-06T00:00:00Z\nsupersedes: []\nsensitivity: {sensitivity}\n"
        f"content_class: {content_class}\nretention: {{}}\norigin:\n  origin_key: repository-proposal:prop\n"
        f"  route: repository_proposal\n---\n\n# Use pnpm\n\n{body}\n"
    )


def workspace(tmp: Path, config: str | None = None) -> Path:
    """A ``.memzoi`` directory under ``tmp`` (with ``config.toml`` when given); returns it."""
    mz = tmp / ".memzoi"
    (mz / "records").mkdir(parents=True, exist_ok=True)
    (mz / "proposals" / "pending").mkdir(parents=True, exist_ok=True)
    if config is not None:
        (mz / "config.toml").write_text(config, encoding="utf-8")
    return mz


def safety(text: str, path: Path):
    """Safety findings of ``text`` analysed as the file at ``path``."""
    return [f for f in analyze_text(text, path).findings if f.code in SAFETY_CODES]
