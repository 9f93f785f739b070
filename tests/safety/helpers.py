"""The safety tests' record and pending proposal (the shared builder with their defaults), and where they live."""

from __future__ import annotations

from pathlib import Path

from memzoi.base.findings import CODES
from memzoi.judge.analysis import analyze_text

from .. import builders

SAFETY_CODES = frozenset(c for c, (_, group) in CODES.items() if group in ("gate", "detector"))


def record(
    *,
    scope: str = "repo",
    scope_id: str | None = None,
    visibility: str = "repo",
    content_class: str = "general_repo_knowledge",
    extra: str = "",
    body: str = "Use pnpm for installs.",
) -> str:
    """A current-profile fact ``rec`` whose gate fields and body can be varied. It has no ``description``, so a
    value planted in the body is in the file once (and ``extra`` may add a ``description``)."""
    return builders.record(
        "rec",
        type="fact",
        title="Use pnpm",
        timestamp="2026-07-06T00:00:00Z",
        description=None,
        scope=scope,
        scope_id=scope_id,
        visibility=visibility,
        content_class=content_class,
        extra=extra,
        body=body,
    )


def proposal(
    *,
    sensitivity: str = "repo-safe",
    scope: str = "kind: repo",
    content_class: str = "general_repo_knowledge",
    body: str = "Use pnpm for installs.",
) -> str:
    """A pending create proposal ``prop`` whose gate fields can be varied (``scope`` is the block's YAML lines,
    ``key: value`` each)."""
    block = dict(line.split(": ", 1) for line in scope.splitlines())
    return builders.packet(
        "prop",
        type="fact",
        title="Use pnpm",
        description="Use pnpm for installs.",
        reason="Seen in CI.",
        scope=block,
        timestamp="2026-07-06T00:00:00Z",
        proposal={
            "action": "create",
            "proposed_by": "agent",
            "proposed_at": "2026-07-06T00:00:00Z",
            "reason": "Seen in CI.",
        },
        sensitivity=sensitivity,
        content_class=content_class,
        body=body,
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
