"""The one routine that turns the one analysis of a file into its entry of the project's store
(:mod:`memzoi.stores.store`): :func:`make_entry`, and its worker form :func:`entry_chunk`.

A file is read once (:func:`memzoi.base.freshness.read_stable`) and analysed once
(:func:`memzoi.judge.analysis.analyze_bytes`); that one analysis gives the three parts of its entry, a
:class:`FileEntry`: its first stage (what ``memzoi check`` and the language server settle and show), its store
entry (stamp, BLAKE3 digest, compact verdict payload or its facts alone: :mod:`memzoi.stores.verdictcache`) and, for a
record or a proposal packet, its search rows (:func:`memzoi.stores.index_rows.index_row`: title, body and
findings, secrets redacted from the same analysis's findings). ``memzoi check`` (:mod:`memzoi.runs.checkfiles`), the
language server's scan (:mod:`memzoi.runs.scanverdicts`) and the index (``memzoi rebuild``, a refresh, an update:
:mod:`memzoi.stores.index_build`) all call it; no other code analyses a file for the store. A failing analysis is
the file's ``internal_error`` finding (:mod:`memzoi.judge.barrier`), in its stage and in its rows, never a crash.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import blake3

from ..base.freshness import read_stable
from ..base.pathnorm import absolute
from ..judge.workspace import RESERVED_NAMES, Placement, Role, place
from ..project.admission import GitVisibility
from ..project.filefacts import FileFacts, facts_from_analysis
from ..project.gitfacts import GitFacts
from ..project.verdict import FileVerdict, ProjectContext, judge, local, verdict_of
from . import firststage
from .firststage import Entry, FirstStage, Stamp, failed_stage, lstat_mode, pending_boundary
from .verdictpayload import cache_payload, facts_text

#: The search rows of one file (:func:`memzoi.stores.index_rows.index_row`), as they cross the pipe from a worker: a
#: plain dict pickled once (packing it again, pickled and compressed, cost 7 times the CPU: issue 29's rebuild bar).
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file's entry as :func:`make_entry` makes it: its first stage (``verdict``); its store ``entry``
    (:data:`memzoi.stores.firststage.Entry`; ``None`` when the bytes were not read stably, the analysis failed or no
    entry was asked for); and, for a record or a packet when rows were asked for, its search ``row``
    (:data:`Row`: what ``memzoi rebuild`` stores for those bytes)."""

    verdict: FirstStage
    entry: Entry | None
    row: Row | None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # One per file crosses the pipe from a worker: positional fields unpickle faster than slot state.
        return (FileEntry, (self.verdict, self.entry, self.row))


def indexed(path: str | os.PathLike[str], placement: Placement | None = None) -> bool:
    """True for a file the index holds: a record or a proposal packet (:func:`memzoi.judge.workspace.place`, or the
    ``placement`` already made of ``path``), not a reserved or stray file."""
    role = (placement or place(path)).role
    return role not in (Role.OTHER, Role.RESERVED) and os.path.basename(path) not in RESERVED_NAMES


@lru_cache(maxsize=256)
def _absolute(folder: str) -> str:
    return os.path.abspath(folder)


def project_dir(memzoi_dir: str | os.PathLike[str]) -> str:
    """``os.path.abspath(memzoi_dir)``, kept per absolute spelling (a file's ``.memzoi`` directory is asked for at
    every file: 2–3 us a time; a relative one depends on the working directory, so it is made absolute anew)."""
    text = os.fspath(memzoi_dir)
    return _absolute(text) if text.startswith("/") else os.path.abspath(text)


def context_of(placement: Placement, now: datetime | None, contexts: dict[str, ProjectContext]) -> ProjectContext:
    """The project context of ``placement`` (one per ``.memzoi`` directory in ``contexts``, each with its own git
    oracle and no ledger: ledger findings are settled by whoever shows a file), at the clock ``now``."""
    md = project_dir(placement.memzoi_dir) if placement.memzoi_dir is not None else ""
    ctx = contexts.get(md)
    if ctx is None:
        ctx = contexts[md] = ProjectContext.of(md or None, now=now, git=GitFacts(os.path.dirname(md)) if md else None)
    return ctx


def make_entry(
    path: str,
    placement: Placement,
    ctx: ProjectContext,
    links: dict[Any, bool],
    read: tuple[bytes, Stamp, int] | None,
    *,
    key: str | None = None,
    entry: bool = True,
    revision: bool = True,
) -> FileEntry:
    """The entry of the file at the absolute ``path`` (placed as ``placement``, in the project ``ctx`` describes,
    at ``ctx.now``) from its one analysis: its :class:`~memzoi.stores.firststage.FirstStage`
    (:func:`memzoi.project.verdict.local`: own findings, a stale attestation explained from ``ctx.git``, canonical
    path); with ``entry``, its store entry (:func:`memzoi.stores.verdictpayload.cache_payload`); with ``key`` (the
    file's index key, :func:`memzoi.stores.index_rows.index_key`), its search rows, judged with ``ctx``'s git
    visibility and without ledger or cross-file findings (:func:`memzoi.stores.index_rows.index_row`).

    ``read`` is ``(bytes, stamp, checked_ns)`` of a stable read (:func:`memzoi.base.freshness.read_stable`);
    ``None`` when the file could not be read stably: it is then read here (an unreadable file gets its
    ``canonical_path`` finding from :func:`memzoi.judge.analysis.analyze_path`) and gets no entry and no rows.
    ``links`` caches symlink answers. ``revision`` false: the stage's ``revision`` is ``""`` where the file gets
    neither an entry nor rows (its bytes are then not hashed: ``memzoi check --no-cache``, whose report compares
    no stages). Never raises: a failing analysis gives the ``internal_error`` stage and rows
    (:func:`memzoi.stores.firststage.failed_stage`)."""
    stamp: Stamp | None
    mode: int | None = None
    try:
        if read is not None:
            data, stamp, checked = read
            analysis = firststage.analyze_bytes(data, path, now=ctx.now, config=ctx.config, placement=placement)
        else:
            # one lstat gives the stamp and the mode the canonical-path check needs (a second one cost 0.5 % of
            # a cold check's CPU)
            data, (stamp, mode), checked = None, lstat_mode(path), 0
            analysis = firststage.analyze_path(path, now=ctx.now, config=ctx.config, placement=placement)
        refined, first = local(path, analysis, ctx, links, mode=mode)
        facts = facts_from_analysis(refined)
        # The line starts joined once, and the facts encoded once, for the stage, the entry and the rows
        starts = ",".join(map(str, refined.document.lines.starts))
        facts_json = (
            facts_text(facts) if (entry and data is not None) or (key is not None and read is not None) else None
        )
        digest = b""
        if revision or entry or key is not None:
            digest = blake3.blake3(data if data is not None else refined.text.encode("utf-8", "surrogatepass")).digest()
        made: Entry | None = None
        if entry and data is not None and stamp is not None:
            made = (digest, stamp, checked, cache_payload(refined, first, facts, starts, facts_json))
        mark = refined.retention
        md = project_dir(placement.memzoi_dir) if placement.memzoi_dir is not None else None
        boundary = pending_boundary(first, mark.boundary if mark is not None else None)
        stage = FirstStage(path, md, first, facts, starts, len(refined.text), stamp, digest.hex()[:32], boundary)
        if key is None or read is None:
            return FileEntry(stage, made, None)
        verdict = verdict_of(path, refined, first, ctx)
        return FileEntry(stage, made, _row(key, read, verdict, facts, digest, facts_json))
    except Exception as err:  # the barrier: the file is kept as refused, with the finding, and the run goes on
        stage, failed = failed_stage(err, path, placement)
        row = None
        try:
            if key is not None and read is not None:
                row = _row(key, read, judge(path, failed, ctx), None, None)
        except Exception:  # noqa: BLE001 - the file then gets no row, and the next refresh tries it again
            row = None
        return FileEntry(stage, None, row)


def _row(
    key: str,
    read: tuple[bytes, Stamp, int],
    verdict: FileVerdict,
    facts: FileFacts | None,
    digest: bytes | None,
    facts_json: str | None = None,
) -> Row:
    """The search rows of a file read as ``read`` and judged as ``verdict``
    (:func:`memzoi.stores.index_rows.index_row`; ``facts_json``: the facts' text the entry keeps too)."""
    data, stamp, checked = read
    return _index_row()(
        key, data, stamp, verdict, facts=facts, digest=digest, checked_ns=checked, facts_json=facts_json
    )


@cache
def _index_row() -> Callable[..., Row]:
    """:func:`memzoi.stores.index_rows.index_row`, imported at the first row made (``check``, which makes no rows,
    loads none of it) and kept: an import statement costs about 1 µs at every call, one per file of a scan."""
    from .index_rows import index_row  # noqa: PLC0415 lazy: start-up

    return index_row


def entry_chunk(jobs: list[tuple[str, str]], *, now: datetime | None, root: str) -> list[FileEntry | None]:
    """Worker: each job ``(absolute path, git visibility value)`` read once and made into its :class:`FileEntry`
    (:func:`make_entry`, with the search rows of a record or packet keyed relative to the project ``root``), or
    ``None`` when the file cannot be read or changed while it was read (the next refresh or event sees it
    again). One project context per ``.memzoi`` directory (:func:`context_of`); ``now`` is the clock of retention
    findings (``None``: the current time)."""
    from .index_rows import index_key  # noqa: PLC0415 lazy: start-up

    contexts: dict[str, ProjectContext] = {}
    links: dict[Any, bool] = {}
    base = Path(root)
    out: list[FileEntry | None] = []
    for path, visibility in jobs:
        read = read_stable(path)
        if read is None:
            out.append(None)
            continue
        placement = place(path)
        try:
            ctx = context_of(placement, now, contexts)
        except Exception as err:  # noqa: BLE001 - an unreadable configuration: the file's internal_error
            out.append(FileEntry(failed_stage(err, path, placement)[0], None, None))
            continue
        key = None
        if indexed(path, placement):
            key = index_key(base, path)
            if ctx.git is not None:
                ctx.git.set_visibility({absolute(path): GitVisibility(visibility)})
        out.append(make_entry(path, placement, ctx, links, read, key=key))
    return out


#: What :func:`row_chunk` gives of a file: ``(absolute path, store entry or None, search rows or None)``.
Made = tuple[str, Entry | None, Row | None]


def row_chunk(jobs: list[tuple[str, str]], *, now: datetime | None, root: str) -> list[Made | None]:
    """Worker: :func:`entry_chunk` without the first stages, for a caller that keeps only each file's store entry
    and search rows (``memzoi rebuild``, a refresh or an update of the index): a first stage is a quarter of what
    crosses the pipe, and pickling and unpickling it cost about 20 µs of CPU per file (issue 29: rebuild ≤ 1.2× a
    cold check, which needs its stages). ``None`` where :func:`entry_chunk` gives ``None``."""
    return [(m.verdict.path, m.entry, m.row) if m is not None else None for m in entry_chunk(jobs, now=now, root=root)]


__all__ = ["FileEntry", "Made", "Row", "context_of", "entry_chunk", "indexed", "make_entry", "project_dir", "row_chunk"]
