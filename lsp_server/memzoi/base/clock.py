"""The clock of verdicts (:func:`utc_now`), apart from :mod:`memzoi.judge.retention` so that a check served from the
verdict cache reads it without loading the analysis; and the RFC 3339 instants Memzoi writes (:func:`parse_rfc3339`,
re-exported by :mod:`memzoi.models.common`), read without the validation models."""

from __future__ import annotations

import re
from datetime import UTC, datetime

_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def utc_now() -> datetime:
    """The current instant (UTC, timezone-aware); the default clock of :func:`evaluate_retention` callers."""
    return datetime.now(UTC)


def parse_rfc3339(value: str) -> datetime | None:
    """Parse an RFC 3339 timestamp with a ``Z`` or numeric offset; ``None`` when it is not one.

    Fractional seconds of any length are accepted (Memzoi writes microseconds); the result is timezone-aware.
    """
    m = _RFC3339.match(value)
    if not m:
        return None
    year, month, day, hour, minute, second, frac, tz = m.groups()
    frac = frac[1:7].ljust(6, "0") if frac else "000000"
    tz = "+00:00" if tz in ("Z", "z") else tz
    iso = f"{year}-{month}-{day}T{hour}:{minute}:{second}.{frac}{tz}"
    try:
        return datetime.fromisoformat(iso)
    except ValueError:
        return None


__all__ = ["parse_rfc3339", "utc_now"]
