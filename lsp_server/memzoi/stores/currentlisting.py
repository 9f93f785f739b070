"""The mark of a listing a refresh found current (issue 29: ``memzoi search`` at 50,000 records in 0.25 s): when
find's output (:class:`memzoi.stores.findlisting.Found`) is byte for byte the output of a refresh that kept every
file by its stamp, the comparison of 55,000 stamps with their rows is known before it is made, and a search reads
neither the rows' stamps nor the output's items (but those the sample draws).

A refresh (:func:`memzoi.stores.index_fresh.stale`) leaves the mark (:func:`mark_of`, :func:`write`: ``meta`` under
``listing``) when every listed file was left with a row whose stamp is the file's listed stamp and vouches (kept by
the bulk comparison or by :func:`memzoi.base.freshness.trusted`, or read and restamped with its listed stamp) or
is racy, and every device's file system keeps its ctime (:data:`memzoi.base.freshness.KEEPS_CTIME`). A refresh
that re-indexed or dropped files leaves it only once its write is in (:func:`write_stamps`): every new row carries
the stamp find listed for its file (the stamp of the bytes the re-index read: a file edited between find's stat
and the read has another), no dropped row is left, and the ``files`` generation went from the one the rows were
judged at to the one after that write with no other write between. The racy rows (a stamp within the racy window
of its read, which a later write in the same clock tick would keep whole) are listed in the mark by key, and every
search that takes the mark reads them and compares their bytes (git's racy-entry rule) along with the sample. The
mark holds the output's BLAKE3
digest, the devices, the folders holding files (for :func:`memzoi.stores.index_fresh.git_state`), the clock until
which every row stays within the trust age, and the generation of the ``files`` table it was made at: triggers
(:data:`memzoi.stores.index_schema.GEN_TRIGGERS`) count every insert, update and delete of a row in ``meta`` under
``files_gen``, so a mark is of the rows as they are only while that count is the mark's.

:func:`holds` gives the mark when it holds for a new output: the same digest (the same files with the same stamps
on the same devices), the same generation (the same rows), each device's file system still one that keeps its
ctime, the rows within the trust age, the racy window and trust age of the same length. Every row then vouches for
its file as the bulk comparison would find, but the racy ones, read again; what is left of
:func:`memzoi.base.freshness.trusted` is its sample
(:func:`draws`), read as ever (:func:`sampled`; or, while find still runs, drawn from the rows and read meanwhile,
:func:`presample`, kept by :func:`settled` where the mark then holds), with git's state.
``tests/test_index_bulk_freshness.py`` holds the plan so made equal to the per-file rule's.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
from dataclasses import dataclass, replace
from typing import Any

import blake3

from ..base import freshness
from ..base.freshness import Stat
from . import storedstamps
from .findlisting import Found, parse_item
from .index_queries import _REDACTED_PREFIX as REDACTED_PREFIX  # the key prefix of a path that bore a secret
from .index_schema import GEN_KEY, generation
from .planelisting import Listing
from .refreshplan import Judge, Mark, Plan

#: ``meta`` key of the mark.
KEY = "listing"


def _constants() -> list[int]:
    # 2: the rule's version (racy rows listed in the mark and read again), so that no other rule takes this mark
    return [freshness.RACY_NS, freshness.MAX_TRUST_NS, 2]


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
        redacted = tuple((str(k), int(p)) for k, p in value["redacted"])
        racy = tuple(value["racy"])
        mark = Mark(value["digest"], tuple(value["devices"]), tuple(value["folders"]), value["gen"], redacted, racy)
        if mark.digest != digest or mark.gen != str(got[1]) or value["constants"] != _constants():
            return None
        if now > value["until"] or not all(freshness.fs_type(d) in freshness.KEEPS_CTIME for d in mark.devices):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    if not all(isinstance(f, str) for f in (*mark.folders, *mark.racy)) or not all(
        isinstance(d, int) for d in mark.devices
    ):
        return None
    return mark


def write(db: sqlite3.Connection, mark: Mark, gen: str | None) -> None:
    """Leave ``mark`` in ``meta`` at the ``files`` generation ``gen`` (the current one: the caller's own restamps
    since ``mark.gen`` counted), inside the caller's write transaction; the trust age is counted from the row
    confirmed longest ago. No mark is left (and an earlier one is dropped) when a folder's path bears a secret
    (:func:`memzoi.judge.pathsafety.shown_local_path` redacts it): the mark stores its folders in clear, and no
    secret is stored outside the file itself; the project is then compared in full at each refresh (correct,
    only slower). Raises ``sqlite3.Error``."""
    if gen is None:
        return
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    if any(shown_local_path(f) != f for f in mark.folders):
        db.execute("DELETE FROM meta WHERE key = ?", (KEY,))
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
        "redacted": [list(r) for r in mark.redacted],
        "racy": list(mark.racy),
    }
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (KEY, json.dumps(value)))


def digest(found: Found) -> str:
    """The hex BLAKE3 digest of find's output ``found``."""
    return blake3.blake3(found.out, max_threads=blake3.blake3.AUTO).hexdigest()


def mark_of(
    plan: Plan, found: Found, listing: Listing, judge: Judge, gen: str, redacted: dict[str, str]
) -> Mark | None:
    """The mark of find's output ``found`` (parsed: ``listing``), its rows read at the ``files`` generation ``gen``
    (:mod:`memzoi.stores.currentlisting`), when every file judged one by one was left exact by ``judge``
    (:class:`memzoi.stores.refreshplan.Judge`; its racy rows listed in the mark) and every device keeps its ctime:
    every file then has a row whose stamp is its own and vouches or is read again (an item that is not a record or
    packet is never drawn). Where ``plan`` re-indexes files, each with its listed stamp in ``plan.expect``, the
    mark is left only once their new rows carry those stamps (:func:`write_stamps`). ``redacted``: the files whose
    row is under a redacted key (key → plain key), marked by the byte offset of their item."""
    devices = {listing.dev, *listing.devs.values()}
    if not judge.exact or listing.unstated or not found.valid or not _plain(judge.racy):
        return None
    plan.expect = []
    for path in plan.changed:
        rel = path.relative_to(listing.root).as_posix()
        stamp = listing.stamps.get(rel)
        if stamp is None or not _plain([rel]):  # no listed stamp to hold its new row to
            return None
        plan.expect.append((rel, stamp))
    if not all(freshness.fs_type(d) in freshness.KEEPS_CTIME for d in devices):
        return None
    at: dict[str, int] = {}
    if redacted:
        plain = {p: k for k, p in redacted.items()}
        ends = tuple(b" " + os.fsencode(p) for p in plain)
        offset = 0
        for item in found.items:
            key = parse_item(item)[0] if item.endswith(ends) else None
            if key in plain:
                at[plain[key]] = offset
            offset += len(item) + 1
        if len(at) != len(redacted):
            return None
    folders = tuple(sorted(listing.folders))
    return Mark(digest(found), tuple(sorted(devices)), folders, gen, tuple(sorted(at.items())), tuple(judge.racy))


def _plain(keys: list[str] | tuple[str, ...]) -> bool:
    """True when no key is a redacted one (a mark lists racy rows by key: never a path that bore a secret)."""
    return not any(k.startswith(REDACTED_PREFIX) for k in keys)


@dataclass
class Presampled:
    """The files the sample drew from the rows while find ran (:func:`presample`), judged by ``judge``, but those
    under a redacted key (``later``: key, row, byte offset of the file's item in the marked output)."""

    digest: str
    judge: Judge
    later: list[tuple[str, tuple[Any, ...], int]]
    racy: tuple[str, ...] = ()


def presample(db: sqlite3.Connection, root: str, now: int) -> Presampled | None:
    """The sample of a refresh whose find is still running, drawn from the rows (:func:`draws` over the range of
    their ``rowid``: each row, so each file, with its own chance) and read meanwhile, for the mark in ``meta``
    (``None`` without one): where the mark then holds (:func:`settled`), the rows are the files one for one, every
    row's stamp is its file's, and a drawn file is judged as :func:`sampled` judges it. Raises ``sqlite3.Error``."""
    got = db.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    bounds = db.execute("SELECT min(rowid), max(rowid) FROM files").fetchone()
    if got is None or bounds[0] is None:
        return None
    try:
        value: dict[str, Any] = json.loads(got[0])
        at = {str(k): int(p) for k, p in value["redacted"]}
        mark_digest = str(value["digest"])
        racy = tuple(str(k) for k in value["racy"])
    except (ValueError, KeyError, TypeError):
        return None
    rows = storedstamps.rows_by_id(db, [bounds[0] + i for i in draws(bounds[1] - bounds[0] + 1)])
    rows.update(storedstamps.full_rows(db, [k for k in racy if k not in rows]))  # read again, as drawn ones are
    if not all(k in rows for k in racy) or not _plain(racy):
        return None
    out = Presampled(mark_digest, Judge(Plan(), now, None), [], racy)
    for key in sorted(rows):
        if key in at:
            out.later.append((key, rows[key], at[key]))
        elif key.startswith(REDACTED_PREFIX):  # a row the mark does not place: not this mark's rows
            return None
        else:
            out.judge(f"{root}{os.sep}{key}", key, rows[key], Stat(tuple(rows[key][:4]), 0), due=True)
    return out


def settled(found: Found, mark: Mark, pre: Presampled, git: str) -> Plan | None:
    """The plan of :func:`presample`'s draw once the mark ``mark`` holds for find's output ``found`` (the same
    digest, the rows at its generation) and git's state is ``git``: the files under a redacted key found at their
    item's offset and judged; ``None`` where an item is not the file of its row (decide the other way)."""
    from ..judge.pathsafety import redacted_path  # noqa: PLC0415 lazy: start-up

    if pre.racy != mark.racy:
        return None
    out = found.out
    for key, row, at in pre.later:
        end = out.find(b"\0", at)
        plain, st = parse_item(out[at:end]) if 0 <= at < end and (at == 0 or out[at - 1] == 0) else (None, None)
        if plain is None or st is None or redacted_path(plain) != key:
            return None
        pre.judge(f"{found.root}{os.sep}{plain}", key, row, st, due=True)
    return _finished(pre.judge, mark, git)


def _finished(judge: Judge, mark: Mark, git: str) -> Plan:
    """The plan ``judge`` made of the drawn files and the mark's racy rows, under git's state ``git``, with ``mark``
    to leave again where it restamped rows and left every one exact (listing those still racy)."""
    plan = judge.plan
    plan.git = git
    plan.changed.sort()
    plan.restamp.sort(key=lambda r: r[-1])
    if plan.restamp and not plan.changed and judge.exact and _plain(judge.racy):
        restamped = {r[-1] for r in plan.restamp}
        racy = {k for k in mark.racy if k not in restamped} | set(judge.racy)
        plan.mark = replace(mark, racy=tuple(sorted(racy)))
    return plan


def sampled(db: sqlite3.Connection, found: Found, mark: Mark, git: str, now: int) -> Plan | None:
    """The plan of :func:`memzoi.stores.index_fresh.stale` where ``mark`` holds for find's output ``found`` and
    git's state is still ``git``: the files the sample draws (:func:`draws`) read and judged as ``stale`` judges a
    drawn file (an item that is no record or packet is no file of the listing: not judged); the mark left again
    with their restamps. ``None`` (decide the whole way) where a drawn file has no row, which the mark rules out."""
    plan = Plan(git=git)
    items = found.items
    parsed = (parse_item(items[i]) for i in draws(len(items)))
    drawn = sorted(((key, st) for key, st in parsed if key is not None), key=lambda d: d[0])
    keys = [key for key, _ in drawn]
    racy = [k for k in mark.racy if k not in set(keys)]  # read again at every search (a stamp too new to vouch)
    rows = storedstamps.full_rows(db, [*keys, *racy])
    if len(rows) < len(keys):  # a row under a redacted key (its path bore a secret when it was written)
        from ..judge.pathsafety import redacted_path  # noqa: PLC0415 lazy: start-up

        keys = [k if k in rows else redacted_path(k) for k in keys]
        rows.update(storedstamps.full_rows(db, [k for k in keys if k not in rows]))
    judge = Judge(plan, now, None)
    for (plain, st), key in zip(drawn, keys, strict=True):
        if key not in rows:  # not so when the mark holds: every file has a row
            return None
        judge(f"{found.root}{os.sep}{plain}", key, rows[key], st, due=True)
    for key in racy:
        if key not in rows:
            return None
        judge(f"{found.root}{os.sep}{key}", key, rows[key], Stat(tuple(rows[key][:4]), 0), due=True)
    return _finished(judge, mark, git)


def write_stamps(db: sqlite3.Connection, plan: Plan, wrote: tuple[str | None, str | None] | None = None) -> None:
    """The plan's writes after its files are re-indexed, inside the caller's write transaction: the restamps, git's
    state, and the mark where no other write to the rows came between (:func:`write`). Where the plan re-indexed or
    dropped rows, ``wrote`` is the ``files`` generation before and after that write (one transaction): the mark is
    left where the write came right after the decision and nothing after it, every dropped row is gone and every
    new row carries its file's listed stamp (``plan.expect``); the racy ones are listed. Raises ``sqlite3.Error``."""
    mark = plan.mark
    if mark is not None and (plan.changed or plan.gone):
        ours = wrote is not None and wrote[0] == mark.gen and wrote[1] == generation(db)
        racy = _written(db, plan) if ours else None
        mark = replace(mark, racy=tuple(sorted({*mark.racy, *racy}))) if racy is not None else None
    elif mark is not None and generation(db) != mark.gen:
        mark = None
    db.executemany(
        "UPDATE files SET size = ?, mtime_ns = ?, ino = ?, ctime_ns = ?, checked_ns = ? WHERE path = ?", plan.restamp
    )
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('git', ?)", (plan.git,))
    if mark:
        write(db, mark, generation(db))


def _written(db: sqlite3.Connection, plan: Plan) -> list[str] | None:
    """The keys of the rows a re-index wrote whose stamp is racy, where each of ``plan.expect`` has a row with its
    listed stamp and no row of ``plan.gone`` is left; ``None`` otherwise (a file edited between find's stat and
    its read, one whose analysis left no row, one kept under a redacted key)."""
    keys = [k for k, _ in plan.expect]
    rows = storedstamps.full_rows(db, [*keys, *plan.gone])
    if any(k in rows for k in plan.gone) or len(keys) != len(plan.changed):
        return None
    racy = []
    for key, stamp in plan.expect:
        row = rows.get(key)
        if row is None or tuple(row[:4]) != tuple(stamp):
            return None
        if not freshness.not_racy(stamp, row[4]):
            racy.append(key)
    return racy


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
