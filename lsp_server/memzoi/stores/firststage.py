"""The one carrier of a file's first stage (:class:`FirstStage`), made by the one routine that analyses a file into
its entry (:func:`memzoi.stores.fileentry.make_entry`, used by ``memzoi check``, the language server's scan and the
index) or read back from its store entry (:func:`from_payload`).

A :class:`FirstStage` is the first stage of one file's verdict (:class:`memzoi.project.verdict.Local`: its own findings,
ungraded, without quick fixes once stored), its cross-file facts, its line starts and length (to place findings
without its text), the stat of the bytes it was made from, a revision string of them and the instant its
retention boundary passes. It is frozen and small (about a kilobyte, against some twenty for an
:class:`~memzoi.judge.analysis.Analysis`), so a worker sends it and a long-lived holder keeps it; the second stage
(:func:`memzoi.project.verdict.settle`: git visibility, ledger, cross-file findings, ``[rules]`` grading) is run by
whoever shows the findings, so every surface gives the same ones.

It is made in exactly two ways: analysed from the file's bytes (:func:`memzoi.stores.fileentry.make_entry`, which
also gives the entry of the project's store, :mod:`memzoi.stores.verdictcache`), or read back from that entry
(:func:`from_payload`). The tests hold both routes equal (``tests/test_verdict_cache.py``, ``tests/test_scan_verdicts.py``).
"""

from __future__ import annotations

import os
import stat as statmod
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import blake3

from ..base.freshness import of_stat
from ..project.filefacts import FileFacts, facts_from_analysis
from ..project.verdict import Local
from ..read.text import LineIndex, decode
from .verdictpayload import line_starts, payload_boundary, read_payload

if TYPE_CHECKING:  # reading a stage back from its entry loads no analysis (nor the detectors)
    from ..judge.analysis import Analysis
    from ..judge.workspace import Placement

#: ``(size in bytes, mtime_ns, inode, ctime_ns)`` of the bytes a stage was made from (:mod:`memzoi.base.freshness`).
Stamp = tuple[int, int, int, int]
#: What the store keeps for one analysed file: ``(BLAKE3 digest, stamp, checked_ns, payload or None)``, the arguments
#: of :meth:`memzoi.stores.verdictcache.ProjectCache.store` after the path.
Entry = tuple[bytes, Stamp, int, str | None]


@dataclass(frozen=True, slots=True)
class FirstStage:
    """The first stage of one file's verdict (see the module docstring).

    ``path``: absolute. ``memzoi_dir``: the absolute ``.memzoi`` directory of its project, ``None`` outside one.
    ``first``: own findings, ungraded (spans are code-point offsets of the file's text). ``facts``: its
    cross-file facts. ``starts``: its line starts, comma-separated (:func:`memzoi.stores.verdictpayload.line_starts`);
    ``length``: its text's length in code points. ``stamp``: the stat of the bytes it was made from, ``None``
    when unknown. ``revision``: a hex string that differs for different bytes (a BLAKE3 digest of them, or of
    the store entry). ``boundary``: when its retention boundary passes (``None``: never, or already passed).
    """

    path: str
    memzoi_dir: str | None
    first: Local
    facts: FileFacts
    starts: str
    length: int
    stamp: Stamp | None
    revision: str
    #: the instant its retention boundary passes (:class:`memzoi.judge.retention.RetentionMark`), ``None`` without one:
    #: from then on ``retention_query_only`` applies, so the holder judges the file again
    boundary: datetime | None = None

    def lines(self) -> LineIndex:
        """The line index of the file's text, from its starts (:meth:`memzoi.read.text.LineIndex.from_starts`)."""
        return LineIndex.from_starts(line_starts(self.starts), self.length)

    def plain_lines(self, offsets: Iterable[int]) -> LineIndex | None:
        """The line index of the file's text (:meth:`lines`) when it alone gives the LSP position of each of
        ``offsets`` in every position encoding, so that the text need not be read to place findings (issue 29, warm
        start: a scan published some 600 files with findings by reading each); ``None`` otherwise. That holds when
        the text is ASCII, a code point being then one code unit in UTF-8, UTF-16 and UTF-32 alike: it has as many
        code points as the bytes it was decoded from (strict UTF-8 decoding gives that for ASCII only; bytes that
        did not decode carry an ``invalid_encoding`` finding, and are excluded), and each offset lies inside its
        line whatever the line's break (:meth:`memzoi.read.text.LineIndex.inside_line`)."""
        if (
            self.stamp is None
            or self.length != self.stamp[0]
            or any(f.code == "invalid_encoding" for f in self.first.own)
        ):
            return None
        lines = self.lines()
        return lines if all(lines.inside_line(o) for o in offsets) else None

    def read_text(self) -> str:
        """The file's text, read again (for ledger findings, which need it rarely): ``""`` when unreadable."""
        try:
            with open(self.path, "rb") as fh:
                return decode(fh.read()).text
        except OSError:
            return ""

    def current(self) -> bool:
        """True when the file's stat is still the one this was made from (cheap: one ``lstat``). A caller that
        gets False analyses the file again."""
        return self.stamp is not None and lstamp(self.path) == self.stamp

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # One per file crosses the pipe from a worker: positional fields unpickle faster than slot state (read by
        # one C-level attrgetter, 3x faster than a generator of getattr).
        return (_unpickled, _STAGE_FIELDS(self))


#: every field of a :class:`FirstStage` in declaration order (its pickled form)
_STAGE_FIELDS: Callable[[FirstStage], tuple[Any, ...]] = attrgetter(*FirstStage.__dataclass_fields__)


def _unpickled(path: str, memzoi_dir: str | None, *rest: Any) -> FirstStage:
    """A :class:`FirstStage` from a worker: its project's folder, the same for each of the project's files, is kept
    as one string rather than one copy per file (1.2 MB of a scan's compact verdicts at 11,000 files)."""
    return FirstStage(path, sys.intern(memzoi_dir) if memzoi_dir is not None else None, *rest)


@cache
def _analysers() -> tuple[Callable[..., Analysis], Callable[..., Analysis]]:
    """``(analyze_bytes, analyze_path)`` of :mod:`memzoi.judge.analysis`, imported at the first file to analyse (a
    run served from the store loads no analysis) and kept: an import statement costs 1.5–2 µs at every call."""
    from ..judge.analysis import analyze_bytes as by_bytes, analyze_path as by_path  # noqa: PLC0415 lazy: start-up

    return by_bytes, by_path


def analyze_bytes(*args: Any, **kwargs: Any) -> Analysis:
    """:func:`memzoi.judge.analysis.analyze_bytes` (see :func:`_analysers`)."""
    return _analysers()[0](*args, **kwargs)


def analyze_path(*args: Any, **kwargs: Any) -> Analysis:
    """:func:`memzoi.judge.analysis.analyze_path` (see :func:`_analysers`)."""
    return _analysers()[1](*args, **kwargs)


def lstamp(path: str) -> Stamp | None:
    """The stat :data:`Stamp` of ``path`` (not following a symlink), ``None`` when it cannot be taken."""
    return lstat_mode(path)[0]


def lstat_mode(path: str) -> tuple[Stamp | None, int | None]:
    """``(stamp, st_mode)`` of one ``lstat`` of ``path`` (:func:`lstamp` and the mode beside it), ``(None, None)``
    when it cannot be taken."""
    try:
        st = os.lstat(path)
    except OSError:
        return None, None
    return of_stat(st).stamp, st.st_mode


def pending_boundary(first: Local, boundary: datetime | None) -> datetime | None:
    """``boundary`` when it has not passed yet for the first stage ``first`` (no ``retention_query_only`` among
    its findings), else ``None``: the instant from which a holder of ``first`` must judge the file again."""
    if boundary is None or any(f.code == "retention_query_only" for f in first.own):
        return None
    return boundary


def failed_stage(err: BaseException, path: str, placement: Placement | None = None) -> tuple[FirstStage, Analysis]:
    """The first stage of a file whose analysis raised ``err``: its ``internal_error`` finding
    (:func:`memzoi.judge.barrier.failed_analysis`), no stamp (so a holder analyses it again), and the failed analysis."""
    from ..judge.barrier import failed_analysis  # noqa: PLC0415 lazy: start-up

    failed = failed_analysis(err, path, placement)
    md = failed.placement.memzoi_dir
    first = Local(list(failed.findings), failed.placement.role, (0, 0), False)
    stage = FirstStage(
        path,
        os.path.abspath(md) if md is not None else None,
        first,
        facts_from_analysis(failed),
        "0",
        0,
        None,
        "failed",
    )
    return stage, failed


def from_payload(
    path: str,
    memzoi_dir: str,
    payload: str,
    now: datetime,
    links: dict[Any, bool],
    stamp: Stamp | None = None,
    revision: str | None = None,
) -> FirstStage | None:
    """The first stage of the file at the absolute ``path`` read back from its store entry's ``payload``
    (:func:`memzoi.stores.verdictpayload.read_payload`, completed at the clock ``now``: ``retention_query_only`` and
    ``canonical_path`` are asked again); ``None`` when the payload cannot be read (the file is then analysed).
    The store hands out only regular files, not symlinks (:meth:`memzoi.stores.verdictcache.ProjectCache.lookup`).
    ``revision``: the stage's revision when the caller has one (the hex of the digest of the bytes the entry
    vouched for); else a BLAKE3 digest of the payload is taken."""
    try:
        first, facts, starts, length = read_payload(payload, path, memzoi_dir, now, links, mode=statmod.S_IFREG)
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    if revision is None:
        revision = blake3.blake3(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return FirstStage(
        path,
        memzoi_dir,
        first,
        facts,
        starts or "0",
        length,
        stamp,
        revision,
        pending_boundary(first, payload_boundary(payload)),
    )


__all__ = [
    "Entry",
    "FirstStage",
    "Stamp",
    "failed_stage",
    "from_payload",
    "lstamp",
    "lstat_mode",
    "pending_boundary",
]
