"""The first stage of ``memzoi check`` for each file (:class:`memzoi.stores.firststage.FirstStage`), as the parent
receives it: analysed by :func:`check_chunk` (in a worker process or in the caller's, through the one routine
:func:`memzoi.stores.fileentry.make_entry`) or read back from the file's store entry by :func:`from_entry`
(:mod:`memzoi.stores.verdictcache`).

Each worker returns only what the report needs (the first stage, cross-file facts and line starts), never the
analysis or the text, which cost more to send than to recompute. With the cache, the worker that analyses a file
also makes its entry, which the parent stores; a later run that finds the entry rebuilds the same stage from it
(the tests hold the reports of both routes, and of a run without the cache, to be identical).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, NamedTuple

from ..base.freshness import pack_stamp, read_stable
from ..judge.pathsafety import repository_path, shown_path
from ..judge.workspace import place
from ..project.verdict import Local, ProjectContext
from ..stores.fileentry import context_of, make_entry
from ..stores.firststage import Entry, FirstStage, failed_stage, from_payload


class Checked(NamedTuple):
    """One file of a check as a worker returns it: its display path (secrets in it redacted), its
    :class:`~memzoi.stores.firststage.FirstStage` and, for a file analysed with the cache on, the store ``entry`` the
    parent keeps (:data:`memzoi.stores.firststage.Entry`); as the parent holds it (:func:`held`), ``kept``: that
    entry's stamp, read clock and digest packed (:func:`memzoi.base.freshness.pack_stamp`) in place of the entry."""

    display: str
    stage: FirstStage
    entry: Entry | None = None
    kept: bytes | None = None


def check_chunk(now: datetime, jobs: list[tuple[str, str]], cache: bool = False) -> list[Checked]:
    """Analyse the files ``jobs`` (``(absolute path, display path)`` pairs) into their first stages
    (:func:`memzoi.stores.fileentry.make_entry`). Runs in a worker process or in the caller's. A file whose
    analysis raises gets an ``internal_error`` finding instead (:mod:`memzoi.judge.barrier`); the chunk goes on. With
    ``cache``, each file of a project read stably also gets its store entry."""
    contexts: dict[str, ProjectContext] = {}
    links: dict[Any, bool] = {}  # symlink answers per directory and folder, asked once per chunk
    out: list[Checked] = []
    for path, display in jobs:
        # Redacted here, in the worker, where the analysis scans the same path anyway (one cached scan per file).
        display = shown_path(display)
        placement = place(path)
        try:
            ctx = context_of(placement, now, contexts)
        except Exception as err:  # the barrier: one file's bug never stops the run
            out.append(Checked(display, failed_stage(err, path, placement)[0]))
            continue
        read = read_stable(path) if cache and ctx.memzoi_dir is not None else None
        # never raises: the barrier is inside; without the cache no stage's revision is read (checkfiles.held)
        made = make_entry(path, placement, ctx, links, read, entry=cache, revision=cache)
        out.append(Checked(display, made.verdict, made.entry))
    return out


def _shown(display: str, path: str) -> str:
    """:func:`memzoi.judge.pathsafety.shown_path` of a cached file's ``display`` path without scanning it: a file with an
    entry has no secret in its path below ``.memzoi`` (such a file is never cached), so a display path that ends
    in that same part is shown as it is."""
    if os.sep == "/":  # the common case without splitting: both end in the same part from the last `.memzoi`
        i = path.rfind("/.memzoi/")
        tail = path[i + 1 :] if i >= 0 else None
        if tail is not None and (display == tail or display.endswith("/" + tail)):
            return display
    rel = repository_path(display)
    return display if rel is not None and rel == repository_path(path) else shown_path(display)


def from_entry(now: datetime, hit: tuple[str, str, str, str], links: dict[str, Any]) -> Checked | None:
    """The file of a store entry ``hit`` (``(display, path, .memzoi directory, payload)``), its stage read back
    (:func:`memzoi.stores.firststage.from_payload`); ``None`` when the payload cannot be read (the file is then
    analysed)."""
    display, path, md, payload = hit
    stage = from_payload(path, md, payload, now, links)
    return Checked(_shown(display, path), stage) if stage is not None else None


class Shared:
    """What the files of one run have in common, kept once (:func:`held`): each ``.memzoi`` directory's string and
    each first stage without findings (most files': a role, the span of the opening ``---``, whether attested)."""

    def __init__(self) -> None:
        self.dirs: dict[str, str] = {}
        self.clean: dict[tuple[Any, ...], Local] = {}


def held(r: Checked, path: str, display: str, shared: Shared) -> Checked:
    """What ``memzoi check``'s parent keeps of the file ``r`` until its report is settled (:mod:`memzoi.runs.check`):
    the same first stage, findings, facts and line starts, with less held per file (at 50,000 files the stages as
    received were some 2.8 KB a file, most of the parent's peak).

    ``path`` and ``display`` are the walk's strings for the file (used instead of the equal copies a worker sent
    back; a display path the worker redacted is kept); a first stage without findings and the ``.memzoi`` directory
    are shared with the run's other files (``shared``); the stage keeps no ``revision`` (``""``: nothing of a check
    compares stages); of the entry only ``(digest, stamp, checked_ns)`` is
    kept, packed in ``kept`` (:func:`memzoi.base.freshness.pack_stamp`; the stage then keeps no ``stamp``, which was the entry's, and nothing
    of a check reads it), without its payload (the parent has stored it already, and a stored
    report's inputs need no more, :func:`memzoi.runs.checkreplay.record`); where a value does not pack, the entry is
    held as ``(digest, stamp, checked_ns, None)``. Never pass such an entry to
    :meth:`memzoi.stores.verdictcache.ProjectCache.store`, which would read its ``None`` payload as "forget the entry"."""
    stage = r.stage
    first = stage.first
    if not first.own:
        first = shared.clean.setdefault((first.role, first.opening, first.attested, first.canonical), first)
    md = stage.memzoi_dir
    if md is not None:
        md = shared.dirs.setdefault(md, md)
    entry = r.entry
    kept = pack_stamp(entry[0], entry[1], entry[2]) if entry is not None else None
    return Checked(
        display if r.display == display else r.display,
        FirstStage(
            path if stage.path == path else stage.path,
            md,
            first,
            stage.facts,
            stage.starts,
            stage.length,
            stage.stamp if kept is None else None,
            "",
            stage.boundary,
        ),
        (entry[0], entry[1], entry[2], None) if entry is not None and kept is None else None,
        kept,
    )


__all__ = ["Checked", "Shared", "check_chunk", "from_entry", "held"]
