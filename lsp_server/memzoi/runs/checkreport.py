"""The report of ``memzoi check`` (:class:`CheckReport` of :class:`Located` findings), its stored form for replay
(:func:`dump`, :func:`load`; :mod:`memzoi.stores.replay`), and the checks of one text or one Zuno resident file that need
no walk (:func:`check_text`, :func:`resident_arg`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.findings import Finding, Severity, finding

if TYPE_CHECKING:
    from ..resident.scope import ResidentFile


@dataclass(frozen=True, slots=True)
class Located:
    """A finding with the display path of its file and 0-based ``(line, character)`` start and end, where
    characters are code points."""

    path: str
    finding: Finding
    start: tuple[int, int]
    end: tuple[int, int]


@dataclass
class CheckReport:
    """Result of :func:`check_paths`: findings sorted by path and position, what was looked at, and the
    ``.memzoi`` directories the checked files belong to (as found above each path) or whose ``config.toml`` was
    given; the caller reports their configuration errors."""

    findings: list[Located] = field(default_factory=list)
    files_checked: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (display path, reason)
    memzoi_dirs: set[Path] = field(default_factory=set)

    @property
    def has_errors(self) -> bool:
        """True when any finding has error severity (``memzoi check`` then exits 1)."""
        return any(l.finding.severity == 1 for l in self.findings)


def dump(report: CheckReport) -> bytes | None:
    """The stored form of ``report`` (JSON, UTF-8): every located finding without quick fixes and with no finding
    data but a detector's ``fingerprint`` (no output format shows the rest; a reference's target can hold a
    secret), what was looked at and the ``.memzoi`` directories; ``None`` when that data does not survive JSON. It holds exactly what the report prints, which names the kind of a secret and where it is, never its
    value (a finding's ``fingerprint`` is a domain-separated digest, :mod:`memzoi.safety.fingerprint`); no text of a
    file is stored."""
    rows = []
    for l in report.findings:
        f = l.finding
        # Of a finding's data, the formats print only a detector's fingerprint (SARIF's partialFingerprints): the
        # rest (a reference's target, a field's value) can hold a secret the message redacts, so it is not kept.
        fp = f.data.get("fingerprint") if f.data else None
        rows.append(
            [
                l.path,
                f.code,
                f.message,
                f.start,
                f.end,
                int(f.severity),
                {"fingerprint": fp} if fp else None,
                *l.start,
                *l.end,
            ]
        )
    try:
        text = json.dumps(
            [rows, report.files_checked, [list(s) for s in report.skipped], sorted(str(p) for p in report.memzoi_dirs)],
            separators=(",", ":"),
            allow_nan=False,
        )
        if json.loads(text)[0] != rows:  # data JSON would change (a tuple, a non-string key)
            return None
    except (TypeError, ValueError):
        return None
    return text.encode("utf-8", "surrogatepass")


def load(data: bytes) -> CheckReport:
    """The report :func:`dump` stored. Raises ``ValueError``, ``TypeError``, ``KeyError`` or ``IndexError`` for
    data it did not write."""
    rows, checked, skipped, dirs = json.loads(data.decode("utf-8", "surrogatepass"))
    sev = {int(s): s for s in Severity}
    findings = [
        Located(p, Finding(c, m, s, e, sev[v], (), d or {}), (sl, sc), (el, ec))
        for p, c, m, s, e, v, d, sl, sc, el, ec in rows
    ]
    return CheckReport(findings, int(checked), [(a, b) for a, b in skipped], {Path(d) for d in dirs})


def check_text(data: bytes, filename: str | None) -> CheckReport:
    """Check one file's bytes read from elsewhere (``memzoi check -``, an editor buffer): ``filename`` places it
    (a record, a proposal packet, …) and names it in the findings, and its project's ``[rules]`` apply. The
    file's own findings only: cross-file and git findings need the file on disk."""
    from ..judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up
    from ..judge.workspace import place  # noqa: PLC0415 lazy: start-up
    from ..project.admission import opening_span  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import Local, ProjectContext, settle  # noqa: PLC0415 lazy: start-up
    from ..read.text import LineIndex  # noqa: PLC0415 lazy: start-up

    path = os.path.abspath(filename) if filename else None
    if path is not None and path.endswith(".md"):
        from ..resident.editor import check_file  # noqa: PLC0415 lazy: start-up - a resident file is checked as the editor does

        resident = check_file(Path(path), data)
        if resident is not None:
            text, found = resident
            index = LineIndex(text)
            report = CheckReport(files_checked=1)
            report.findings = [
                Located(shown_path(filename or path), f, index.position(f.start), index.position(f.end)) for f in found
            ]
            return report
    from ..judge.analysis import analyze_bytes  # noqa: PLC0415 lazy: start-up

    placement = place(path) if path else place("-")
    ctx = ProjectContext.of(placement.memzoi_dir)  # no git and no ledger facts: the text is not on disk
    analysis = analyze_bytes(data, path, placement=placement, config=ctx.config)
    first = Local(list(analysis.findings), placement.role, opening_span(analysis), False)
    found = settle(path, first, ctx, text=analysis.text)
    index = LineIndex(analysis.text)
    report = CheckReport(files_checked=1, memzoi_dirs={Path(ctx.memzoi_dir)} if ctx.memzoi_dir else set())
    shown = shown_path(filename) if filename else "-"
    report.findings = [Located(shown, f, index.position(f.start), index.position(f.end)) for f in found]
    return report


def _where(arg: str) -> tuple[Path, ResidentFile] | None:
    """Where ``arg`` is a Zuno resident file (:func:`memzoi.resident.scope.which_file`), ``None`` when it is not."""
    if not arg.endswith(".md") or os.path.isdir(arg) or os.path.islink(arg):
        return None
    from ..judge.workspace import find_project_root  # noqa: PLC0415 lazy: start-up
    from ..resident.scope import which_file  # noqa: PLC0415 lazy: start-up

    # Which files are resident is asked of the light scope module first: the editor's findings (threats, YAML,
    # candidates) load only for such a file, not for every record given by name.
    return which_file(Path(os.path.abspath(arg)), [find_project_root(Path.cwd())])


def is_resident(arg: str) -> bool:
    """Whether the command-line path ``arg`` names a Zuno resident file (``.zuno/RULES.md``, the global
    ``MEMORY.md``), which :func:`resident_arg` checks apart from the walk."""
    return _where(arg) is not None


def resident_arg(arg: str, report: CheckReport) -> bool:
    """Check ``arg`` as a Zuno resident file (``.zuno/RULES.md``, the global ``MEMORY.md``) when it is one, with
    the findings the editor shows (cap, drift, threats, hand edits) instead of a record's; True when it was."""
    where = _where(arg)
    if where is None:
        return False
    from ..judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up
    from ..read.text import LineIndex  # noqa: PLC0415 lazy: start-up
    from ..resident.editor import check_file  # noqa: PLC0415 lazy: start-up

    shown = shown_path(arg)
    try:
        checked = check_file(Path(arg), where=where)
    except OSError as err:
        report.files_checked += 1
        report.findings.append(
            Located(
                shown,
                finding(
                    "canonical_path",
                    f"cannot read the file: {err.strerror}; check that it exists and is readable",
                    0,
                    0,
                ),
                (0, 0),
                (0, 0),
            )
        )
        return True
    if checked is None:
        return False
    text, found = checked
    index = LineIndex(text)
    report.files_checked += 1
    report.findings.extend(Located(shown, f, index.position(f.start), index.position(f.end)) for f in found)
    return True


__all__ = ["CheckReport", "Located", "check_text", "dump", "is_resident", "load", "resident_arg"]
