"""What is pending, read as far as the runtime home allows (newuser5 D1): the packets from the folder (cross-file
facts from the index, else from the files), the local and resident candidates from their databases; a part that
cannot be read is left out and named in ``warnings``, never answered from an outdated index row (promise 3). The
command line's ``proposals list`` and the agent's ``list_pending`` both read through here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.runtime_errors import RuntimeStateError
from ..ledger import Refusal

if TYPE_CHECKING:  # the row type only: the judge loads when a listing is asked for
    from ..lifecycle.pending import PendingPacket


def listed_packets(root: Path) -> tuple[list[PendingPacket], str | None]:
    """Every pending packet of the project at ``root`` (:func:`memzoi.lifecycle.pending.list_pending`), and a
    warning when the index could not be used: a full, read-only or damaged runtime folder must not hide what is
    pending, so the cross-file facts are then read from the files. Raises :class:`Refusal` for anything else
    (``no_project``)."""
    from ..lifecycle.pending import list_pending  # noqa: PLC0415 lazy: start-up
    from .recall import Reader  # noqa: PLC0415 lazy: start-up

    try:
        with Reader(root) as r:
            return list_pending(r.root, r.index), None
    except (Refusal, RuntimeStateError) as err:
        if isinstance(err, Refusal) and err.code != "index_unavailable":
            raise
        return list_pending(root.resolve(), None), f"{err.message}; cross-file facts are read from the files"


def _local(root: Path) -> list[dict[str, Any]]:
    from ..lifecycle.candidates import list_candidates  # noqa: PLC0415 lazy: start-up

    return [
        {
            "id": c.id,
            "title": c.title,
            "type": c.type,
            "lane": c.lane,
            "confidence": c.confidence_bp / 10_000,
            "proposed_by": c.actor,
            "created_at": c.created_at,
        }
        for c in list_candidates(root)
    ]


def list_pending(root: Path, include_resolved: bool = False) -> dict[str, Any]:
    """The pending proposal packets as every listing shows them (:func:`listed_packets`: ``can_apply`` and
    ``blocked_by`` from the core's one can-apply rule, the title withheld where a detector fires), the pending
    local candidates and the pending resident-memory candidates (read where the defaults put the resident files
    when the configuration is broken, :func:`memzoi.resident.scope.read_config`); with ``include_resolved``,
    ``rejected`` too (:func:`memzoi.lifecycle.rejections.rejected_packets`: fingerprint and reason). ``warnings``
    names each part that could not be read (then empty) and why. Raises :class:`Refusal` ``no_project``."""
    from ..resident.scope import read_config  # noqa: PLC0415 lazy: start-up
    from .resident_read import pending_candidates  # noqa: PLC0415 lazy: start-up

    packets, warning = listed_packets(root)
    warnings = [warning] if warning else []
    out: dict[str, Any] = {"proposals": [p.to_json() for p in packets]}
    config, config_warning = read_config(root)
    warnings += [config_warning] if config_warning else []
    parts: list[tuple[str, str, Any]] = [
        ("local_candidates", "local candidates", lambda: _local(root)),
        ("resident_candidates", "resident candidates", lambda: pending_candidates(root, config, strict=True)),
    ]
    if include_resolved:
        from ..lifecycle.rejections import rejected_packets  # noqa: PLC0415 lazy: start-up

        parts.append(("rejected", "rejected proposals", lambda: rejected_packets(root)))
    for key, what, read in parts:
        try:
            out[key] = read()
        except (Refusal, RuntimeStateError) as err:
            out[key] = []
            warnings.append(f"{what} cannot be read: {err.message}")
    return {**out, "warnings": warnings}
