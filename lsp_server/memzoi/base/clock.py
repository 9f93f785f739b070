"""The clock of verdicts (:func:`utc_now`), apart from :mod:`memzoi.judge.retention` so that a check served from the
verdict cache reads it without loading the analysis."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current instant (UTC, timezone-aware); the default clock of :func:`evaluate_retention` callers."""
    return datetime.now(UTC)


__all__ = ["utc_now"]
