"""The first stage of ``memzoi check`` for each file (:func:`memzoi.verdict.local`), as the parent receives it: a
:class:`FileResult`, analysed by :func:`check_chunk` (in a worker process or in the caller's) or read back from
the file's verdict cache entry by :func:`from_entry` (:mod:`memzoi.verdictcache`).

Each worker returns only what the report needs (the first stage of the verdict, cross-file facts, and the text or
its line starts), never the analysis itself, which costs more to send than to recompute. With the cache, the
worker that analyses a file also makes its entry, which the parent stores; a later run that finds the entry
rebuilds the same result from it (the tests hold the reports of both routes, and of a run without the cache, to
be identical).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import blake3

from .filefacts import FileFacts, facts_from_analysis
from .gitfacts import GitFacts
from .pathsafety import repository_path, shown_path
from .text import LineIndex, decode
from .verdict import Local, ProjectContext, local
from .verdictcache import read_stable
from .verdictpayload import cache_parts, line_starts, read_payload
from .workspace import Placement, place


def analyze_bytes(*args: Any, **kwargs: Any) -> Any:
    """:func:`memzoi.analysis.analyze_bytes`, imported at the first file to analyse (a run served from the cache
    loads no analysis)."""
    from .analysis import analyze_bytes as analyze

    return analyze(*args, **kwargs)


def analyze_path(*args: Any, **kwargs: Any) -> Any:
    """:func:`memzoi.analysis.analyze_path`, imported at the first file to analyse."""
    from .analysis import analyze_path as analyze

    return analyze(*args, **kwargs)


@dataclass(slots=True)
class FileResult:
    """What :func:`memzoi.check.check_paths` needs from one analysed file (small to send back from a worker):
    the first stage of its verdict (:class:`memzoi.verdict.Local`) and its cross-file facts, and either its text or
    its line starts and length (a cached file, see :func:`memzoi.verdictpayload.read_payload`), to place the
    findings; for a file analysed with the cache on, its cache ``entry``."""

    display: str
    key: str  # absolute path
    memzoi_dir: str | None  # absolute
    first: Local
    facts: FileFacts
    text: bytes | None  # UTF-8 (lone surrogates passed through), to place the findings; bytes because the caller
    # decodes only the texts of files with findings. None for a file known by its entry:
    starts: str | None = None  # as the entry keeps them (memzoi.verdictpayload.line_starts)
    length: int = 0
    entry: tuple[Any, ...] | None = None  # what the parent stores: (BLAKE3 digest, stat stamp, checked_ns, payload or None, kept facts or None)

    def lines(self) -> LineIndex:
        """The line index of the file's text, from its starts when the text was not sent."""
        if self.starts is not None:
            return LineIndex.from_starts(line_starts(self.starts), self.length)
        return LineIndex(self.text.decode("utf-8", "surrogatepass") if self.text else "")

    def read_text(self) -> str:
        """The analysed text (for ledger findings): sent, or read again from the file of a cached result."""
        if self.text is not None:
            return self.text.decode("utf-8", "surrogatepass")
        try:
            with open(self.key, "rb") as fh:
                return decode(fh.read()).text
        except OSError:
            return ""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # One per file crosses the pipe: positional fields unpickle faster than slot state.
        return (FileResult, tuple(getattr(self, name) for name in self.__dataclass_fields__))


def check_chunk(now: datetime, jobs: list[tuple[str, str]], cache: bool = False) -> list[FileResult]:
    """Analyse the files ``jobs`` (``(absolute path, display path)`` pairs): the first stage of each file's
    verdict (:func:`memzoi.verdict.local`: its own findings, a stale attestation explained from git, canonical
    path) and what the caller needs for the second. Runs in a worker process or in the caller's. A file whose
    analysis raises gets an ``internal_error`` finding instead (:mod:`memzoi.barrier`); the chunk goes on. With
    ``cache``, each file of a project also gets its verdict cache entry (:func:`_cached_result`)."""
    contexts: dict[str, ProjectContext] = {}
    links: dict[Any, bool] = {}  # symlink answers per directory and folder, asked once per chunk
    out: list[FileResult] = []
    for path, display in jobs:
        # Redacted here, in the worker, where the analysis scans the same path anyway (one cached scan per file).
        display = shown_path(display)
        placement = place(path)
        md = os.path.abspath(placement.memzoi_dir) if placement.memzoi_dir is not None else None
        try:
            ctx = contexts.get(md or "")
            if ctx is None:
                ctx = contexts[md or ""] = ProjectContext.of(md, now=now, git=GitFacts(os.path.dirname(md)) if md else None)
            read = read_stable(path) if cache and md is not None else None
            if read is not None:
                out.append(_cached_result(now, read, path, display, md, ctx, placement, links))
                continue
            analysis = analyze_path(path, now=now, config=ctx.config, placement=placement)
            analysis, first = local(path, analysis, ctx, links)
            out.append(FileResult(display, path, md, first, facts_from_analysis(analysis),
                                   analysis.text.encode("utf-8", "surrogatepass")))
        except Exception as err:  # the barrier: one file's bug never stops the run
            from .barrier import failed_analysis

            failed = failed_analysis(err, path, placement)
            out.append(FileResult(display, path, md, Local(list(failed.findings), placement.role, (0, 0), False),
                                   facts_from_analysis(failed), b""))
    return out


def _cached_result(now: datetime, read: tuple[Any, ...], path: str, display: str, md: str, ctx: ProjectContext,
                   placement: Placement, links: dict[str, Any]) -> FileResult:
    """The result of a file read as ``read`` (:func:`memzoi.verdictcache.read_stable`), with the cache entry the
    parent stores for it (or, when the file must not be cached, tells it to forget any stored one). The result is
    the analysed one: what a later run rebuilds from the entry equals it (``tests/test_verdict_cache.py``), and
    rebuilding it here would cost a third of the entry's price again."""
    data, stamp, checked = read
    analysis = analyze_bytes(data, path, now=now, config=ctx.config, placement=placement)
    analysis, first = local(path, analysis, ctx, links)
    facts = facts_from_analysis(analysis)
    payload, kept = cache_parts(analysis, first, facts, analysis.document.lines.starts)
    digest = blake3.blake3(data).digest() if payload is not None else b""
    return FileResult(display, path, md, first, facts, analysis.text.encode("utf-8", "surrogatepass"),
                      entry=(digest, stamp, checked, payload, kept))


def _shown(display: str, path: str) -> str:
    """:func:`memzoi.pathsafety.shown_path` of a cached file's ``display`` path without scanning it: a file with an
    entry has no secret in its path below ``.memzoi`` (such a file is never cached), so a display path that ends
    in that same part is shown as it is."""
    if os.sep == "/":  # the common case without splitting: both end in the same part from the last `.memzoi`
        i = path.rfind("/.memzoi/")
        tail = path[i + 1 :] if i >= 0 else None
        if tail is not None and (display == tail or display.endswith("/" + tail)):
            return display
    rel = repository_path(display)
    return display if rel is not None and rel == repository_path(path) else shown_path(display)


def from_entry(now: datetime, hit: tuple[str, str, str, str], links: dict[str, Any]) -> FileResult | None:
    """The result of a file from its cache entry ``hit`` (``(display, path, .memzoi directory, payload)``);
    ``None`` when the payload cannot be read (the file is then analysed)."""
    display, path, md, payload = hit
    try:
        # A hit is a regular file, not a symlink (ProjectCache.lookup), so canonical_path need not ask again.
        first, facts, starts, length = read_payload(payload, path, md, now, links, mode=stat.S_IFREG)
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    return FileResult(_shown(display, path), path, md, first, facts, None, starts, length)


__all__ = ["FileResult", "check_chunk", "from_entry"]
