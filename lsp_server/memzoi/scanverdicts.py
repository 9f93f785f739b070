"""The first stage of each file of a project, for a long-lived caller that keeps it (the language server's scan),
in a compact form, taken from the verdict cache ``memzoi check`` writes when it vouches for the file's bytes.

A :class:`CompactVerdict` is what such a caller keeps of a file it has not opened: the first stage of its verdict
(:class:`memzoi.verdict.Local`: own findings without quick fixes for a cached file), its cross-file facts, its
line starts and length (to place findings without the text), the stat of the bytes it was made from (to notice
a change nobody reported) and a revision string of them. About a kilobyte, against some twenty for an
:class:`~memzoi.analysis.Analysis`; the second stage (:func:`memzoi.verdict.settle`: git visibility, ledger,
cross-file findings, grading) runs when the file's findings are asked for, as ``check`` runs it, so both give
the same findings.

:func:`first_stages` makes them on the caller's worker thread: a file the project's
:class:`~memzoi.verdictcache.ProjectCache` vouches for is rebuilt from its entry (:func:`memzoi.checkfiles.
from_entry`, as ``check`` does); any other file is analysed once, its entry made for the cache, and its analysis
handed back so the caller can keep it (the server's document cache, which the index reads). Never raises for a
file: a failed analysis is an ``internal_error`` finding (:mod:`memzoi.barrier`), an unreadable file is ``None``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import blake3

from .analysis import Analysis, analyze_bytes
from .barrier import failed_analysis
from .checkfiles import from_entry
from .filefacts import FileFacts, facts_from_analysis
from .text import LineIndex
from .verdict import Local, ProjectContext, local
from .verdictcache import ProjectCache, read_stable
from .verdictpayload import cache_parts, line_starts
from .workspace import place


@dataclass(frozen=True, slots=True)
class CompactVerdict:
    """The first stage of one file's verdict, compact (see the module docstring).

    ``path``: absolute. ``first``: own findings, ungraded (spans are code-point offsets of the file's text).
    ``facts``: its cross-file facts. ``starts``: its line starts, comma-separated
    (:func:`memzoi.verdictpayload.line_starts`); ``length``: its text's length in code points. ``stamp``: the
    ``(size, mtime_ns, inode, ctime_ns)`` of the bytes it was made from, ``None`` when unknown. ``revision``: a
    hex string that differs for different bytes (a BLAKE3 digest of them, or of the cache entry).
    """

    path: str
    first: Local
    facts: FileFacts
    starts: str
    length: int
    stamp: tuple[int, int, int, int] | None
    revision: str

    def lines(self) -> LineIndex:
        """The line index of the file's text, from its starts (:meth:`memzoi.text.LineIndex.from_starts`)."""
        return LineIndex.from_starts(line_starts(self.starts), self.length)

    def current(self) -> bool:
        """True when the file's stat is still the one this was made from (cheap: one ``lstat``). A caller that
        gets False analyses the file again."""
        return self.stamp is not None and _lstat(self.path) == self.stamp


@dataclass(frozen=True, slots=True)
class Scanned:
    """One file of :func:`first_stages`: its compact verdict, and its analysis of the bytes on disk when the file
    was analysed (``None`` when the cache vouched for it) with the BLAKE3 ``digest`` of those bytes."""

    verdict: CompactVerdict
    analysis: Analysis | None
    digest: bytes


def _lstat(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns


def open_cache(project_root: str | os.PathLike[str], ctx: ProjectContext) -> ProjectCache | None:
    """The verdict cache of the project at ``project_root`` under the configuration of ``ctx`` (the same database
    and keys as ``memzoi check``); ``None`` when it cannot be used. Never raises."""
    try:
        return ProjectCache.load(project_root, ctx.config)
    except Exception:  # noqa: BLE001 - the cache never breaks a scan: it is only not used
        return None


def first_stages(paths: list[str], ctx: ProjectContext, cache: ProjectCache | None,
                 links: dict[Any, bool] | None = None) -> list[Scanned | None]:
    """The :class:`Scanned` of each absolute path of ``paths`` (files of the project ``ctx`` describes, whose
    ``git`` explains stale attestations and whose ``now`` is the clock of retention findings), in order; ``None``
    for a file that cannot be read (or changed while it was read). Entries of analysed files are added to
    ``cache`` (written by its ``save``); ``links`` caches symlink answers across calls."""
    links = {} if links is None else links
    out: list[Scanned | None] = []
    for path in paths:
        try:
            out.append(_one(path, ctx, cache, links))
        except Exception as err:  # the barrier: one file's bug never stops the others
            out.append(_failed(err, path))
    return out


def _one(path: str, ctx: ProjectContext, cache: ProjectCache | None, links: dict) -> Scanned | None:
    md = ctx.memzoi_dir
    if cache is not None and md is not None:
        stamp = _lstat(path)  # before the lookup: a file changed after it shows as not current (analysed again)
        payload = _lookup(cache, path)
        if payload is not None:
            hit = from_entry(ctx.now, (path, path, md, payload), links)
            if hit is not None:
                revision = blake3.blake3(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]
                return Scanned(CompactVerdict(path, hit.first, hit.facts, hit.starts or "0", hit.length, stamp,
                                              revision), None, b"")
    read = read_stable(path)
    if read is None:
        return None
    data, stamp, checked = read
    analysis = analyze_bytes(data, path, now=ctx.now, config=ctx.config, placement=place(path))
    refined, first = local(path, analysis, ctx, links)
    facts = facts_from_analysis(refined)
    starts = refined.document.lines.starts
    digest = blake3.blake3(data).digest()
    if cache is not None and md is not None:
        cache.store(path, digest, stamp, checked, *cache_parts(refined, first, facts, starts))
    compact = CompactVerdict(path, first, facts, ",".join(map(str, starts)), len(refined.text), stamp,
                             digest.hex()[:32])
    return Scanned(compact, analysis, digest)


def _lookup(cache: ProjectCache, path: str) -> str | None:
    try:
        return cache.lookup(path)
    except Exception:  # noqa: BLE001 - an unreadable entry: the file is analysed
        return None


def _failed(err: BaseException, path: str) -> Scanned:
    failed = failed_analysis(err, path)
    first = Local(list(failed.findings), failed.placement.role, (0, 0), False)
    return Scanned(CompactVerdict(path, first, facts_from_analysis(failed), "0", 0, None, "failed"), failed, b"")


__all__ = ["CompactVerdict", "Scanned", "first_stages", "open_cache"]
