"""The mark of a listing a refresh found current (issue 29: ``memzoi search`` at 50,000 records in 0.25 s): when
find's output (:class:`memzoi.stores.findlisting.Found`) is byte for byte the output of a refresh that kept every
file by its stamp, the comparison of 55,000 stamps with their rows is known before it is made, and a search reads
neither the rows' stamps nor the output's items (but those the sample draws).

A refresh (:func:`memzoi.stores.index_fresh.stale`) leaves the mark (:func:`mark_of`, :func:`write`: ``meta`` under
``listing``) when every listed file was left with a row whose stamp is the file's and vouches (kept by the bulk
comparison or by :func:`memzoi.base.freshness.trusted`, or read and restamped with its listed stamp, not racy),
every row had its file, every item find printed was a listed file, every device's file system keeps its ctime
(:data:`memzoi.base.freshness.KEEPS_CTIME`), and nothing was re-indexed. The mark holds the output's BLAKE3
digest, the devices, the folders holding files (for :func:`memzoi.stores.index_fresh.git_state`), the clock until
which every row stays within the trust age, and the generation of the ``files`` table it was made at: triggers
(:data:`memzoi.stores.index_schema.GEN_TRIGGERS`) count every insert, update and delete of a row in ``meta`` under
``files_gen``, so a mark is of the rows as they are only while that count is the mark's.

:func:`holds` gives the mark when it holds for a new output: the same digest (the same files with the same stamps
on the same devices), the same generation (the same rows), each device's file system still one that keeps its
ctime, the rows within the trust age, the racy window and trust age of the same length. Every row then vouches for
its file as the bulk comparison would find; what is left of :func:`memzoi.base.freshness.trusted` is its sample
(:func:`draws`), read as ever (:func:`sampled`), with git's state. ``tests/test_index_bulk_freshness.py`` holds the
plan so made equal to the per-file rule's.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
from typing import Any

import blake3

from ..base import freshness
from . import storedstamps
from .findlisting import Found, parse_item
from .index_schema import GEN_KEY, generation
from .planelisting import Listing
from .refreshplan import Judge, Mark, Plan

#: ``meta`` key of the mark.
KEY = "listing"


def _constants() -> list[int]:
    return [freshness.RACY_NS, freshness.MAX_TRUST_NS]


def holds(db: sqlite3.Connection, digest: str, now: int) -> Mark | None:
    """The mark when it holds for an output of digest ``digest`` at the wall clock ``now`` (ns) (see the module
    docstring); ``None`` otherwise. Raises ``sqlite3.Error``."""
    got = db.execute(
        "SELECT a.value, b.value FROM meta AS a, meta AS b WHERE a.key = ? AND b.key = ?", (KEY, GEN_KEY)
    ).fetchone()
    if got is None:
        return None
    try:
        value: dict[str, Any] = json.loads(got[0])
        mark = Mark(value["digest"], tuple(value["devices"]), tuple(value["folders"]), value["gen"])
        if mark.digest != digest or mark.gen != str(got[1]) or value["constants"] != _constants():
            return None
        if now > value["until"] or not all(freshness.fs_type(d) in freshness.KEEPS_CTIME for d in mark.devices):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    if not all(isinstance(f, str) for f in mark.folders) or not all(isinstance(d, int) for d in mark.devices):
        return None
    return mark


def write(db: sqlite3.Connection, mark: Mark, gen: str | None) -> None:
    """Leave ``mark`` in ``meta`` at the ``files`` generation ``gen`` (the current one: the caller's own restamps
    since ``mark.gen`` counted), inside the caller's write transaction; the trust age is counted from the row
    confirmed longest ago. Raises ``sqlite3.Error``."""
    if gen is None:
        return
    oldest = db.execute("SELECT min(checked_ns) FROM files").fetchone()[0]
    if oldest is None:
        return
    value = {
        "digest": mark.digest,
        "gen": gen,
        "constants": _constants(),
        "until": int(oldest) + freshness.MAX_TRUST_NS,
        "devices": list(mark.devices),
        "folders": list(mark.folders),
    }
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (KEY, json.dumps(value)))


def digest(found: Found) -> str:
    """The hex BLAKE3 digest of find's output ``found``."""
    return blake3.blake3(found.out).hexdigest()


def mark_of(plan: Plan, found: Found, listing: Listing, exact: bool, gen: str) -> Mark | None:
    """The mark of find's output ``found`` (parsed: ``listing``), its rows read at the ``files`` generation ``gen``
    (:mod:`memzoi.stores.currentlisting`), when ``plan`` re-indexes and drops nothing, every file judged one by one
    was left ``exact`` (:class:`memzoi.stores.refreshplan.Judge`), every item of the output is a listed file and
    every device keeps its ctime: every file then has a row whose stamp is its own and vouches."""
    devices = {listing.dev, *listing.devs.values()}
    if plan.changed or plan.gone or not exact or listing.unstated or not found.valid:
        return None
    if len(listing.stamps) != found.out.count(b"\0"):
        return None
    if not all(freshness.fs_type(d) in freshness.KEEPS_CTIME for d in devices):
        return None
    return Mark(digest(found), tuple(sorted(devices)), tuple(sorted(listing.folders)), gen)


def sampled(db: sqlite3.Connection, found: Found, mark: Mark, git: str, now: int) -> Plan | None:
    """The plan of :func:`memzoi.stores.index_fresh.stale` where ``mark`` holds for find's output ``found`` and
    git's state is still ``git``: the files the sample draws (:func:`draws`) read and judged as ``stale`` judges a
    drawn file; the mark left again with their restamps. ``None`` (decide the whole way) where a drawn item is not
    a record or packet with a row, which the mark rules out."""
    plan = Plan(git=git)
    items = found.items
    drawn = sorted((parse_item(items[i]) for i in draws(len(items))), key=lambda d: d[0] or "")
    keys = [key for key, _ in drawn if key is not None]
    if len(keys) < len(drawn):  # not so when the mark holds: every item is a record or packet
        return None
    rows = storedstamps.full_rows(db, keys)
    if len(rows) < len(keys):  # a row under a redacted key (its path bore a secret when it was written)
        from ..judge.pathsafety import redacted_path  # noqa: PLC0415 lazy: start-up

        keys = [k if k in rows else redacted_path(k) for k in keys]
        rows.update(storedstamps.full_rows(db, [k for k in keys if k not in rows]))
    judge = Judge(plan, now, None)
    for (plain, st), key in zip(drawn, keys, strict=True):
        if key not in rows:  # not so when the mark holds: every file has a row
            return None
        judge(f"{found.root}{os.sep}{plain}", key, rows[key], st, due=True)
    plan.changed.sort()
    plan.restamp.sort(key=lambda r: r[-1])
    if plan.restamp and not plan.changed and judge.exact:
        plan.mark = mark
    return plan


def write_stamps(db: sqlite3.Connection, plan: Plan) -> None:
    """The plan's writes after its files are re-indexed, inside the caller's write transaction: the restamps, git's
    state, and the mark where no other write to the rows came between (:func:`write`).
    Raises ``sqlite3.Error``."""
    mark = plan.mark if plan.mark and generation(db) == plan.mark.gen else None
    db.executemany(
        "UPDATE files SET size = ?, mtime_ns = ?, ino = ?, ctime_ns = ?, checked_ns = ? WHERE path = ?", plan.restamp
    )
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('git', ?)", (plan.git,))
    if mark:
        write(db, mark, generation(db))


def draws(count: int) -> list[int]:
    """The positions of ``count`` files that the sample draws (:data:`memzoi.base.freshness.SAMPLE_SHARE`), each
    independently with that chance, as :func:`memzoi.base.freshness.trusted` draws one file: the gaps between
    drawn positions are geometric, so the draw costs one random number per drawn file, not per file."""
    share = freshness.SAMPLE_SHARE
    if share <= 0:
        return []
    if share >= 1:
        return list(range(count))
    out: list[int] = []
    at, scale = -1, 1 / math.log1p(-share)
    while True:
        at += 1 + int(math.log(1.0 - random.random()) * scale)
        if at >= count:
            return out
        out.append(at)


__all__ = ["KEY", "digest", "draws", "generation", "holds", "mark_of", "sampled", "write", "write_stamps"]
