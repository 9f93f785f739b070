"""The index's drift from the git plane (``memzoi doctor``), like Memzoi's ``derived_index/drift.rs``
(``missing_from_index``, ``stale_in_index``, ``changed_in_index``, ``fts_out_of_sync``): judged by the refresh's own
decision, never by a second rule."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .index_queries import Drift
from .index_schema import checksum_sql


def drift_of(db: sqlite3.Connection, root: Path, schema_problem: str | None) -> Drift:
    """Compare the index ``db`` of the project ``root`` (whose schema problem, if any, is ``schema_problem``) with the
    git plane by the refresh's own decision (:func:`memzoi.stores.index_fresh.stale` of a walk): files without a row
    (``missing_from_index``; ``unreadable`` when they cannot be read: the rebuild skips them too, and "missing, run
    rebuild" would send the user round in a loop), rows whose file changed, whose values no longer match their
    checksum (withheld by every read) or whose admission git's state may have changed (``changed_in_index``), rows
    without a file (``stale_in_index``), and the FTS5 integrity check of both tables. Never writes."""
    from .index_fresh import plane_of, stale  # noqa: PLC0415 lazy: start-up
    from .index_rows import index_key  # noqa: PLC0415 lazy: start-up

    d = Drift(schema=schema_problem)
    if d.schema:
        return d
    held = {r[0] for r in db.execute("SELECT path FROM files")}
    plan = stale(db, root, plane_of(root))
    for path in plan.changed:
        rel = index_key(root, path)
        try:
            path.open("rb").close()
        except OSError:
            d.unreadable.append(rel)
            continue
        (d.changed_in_index if rel in held else d.missing_from_index).append(rel)
    damaged = f"SELECT path FROM files WHERE checksum IS NOT {checksum_sql()}"  # withheld by every read
    d.changed_in_index += [r[0] for r in db.execute(damaged) if r[0] not in d.changed_in_index]
    d.stale_in_index = sorted(plan.gone)
    for found in (d.missing_from_index, d.changed_in_index, d.unreadable):
        found.sort()
    for table in ("records_fts", "proposals_fts"):
        try:
            db.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError:
            d.fts_out_of_sync = True
    return d


__all__ = ["drift_of"]
