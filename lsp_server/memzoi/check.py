"""Checking paths: expand command-line paths into Memzoi files, analyse each, and collect located findings.

Shared by ``memzoi check`` and the language server's "check workspace" command. One unreadable or malformed
file never stops the others.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Analysis, analyze_path
from .admission import check_admission, refine_stale
from .crossfile import check_cross_file
from .findings import Finding, finding
from .text import LineIndex
from .workspace import MEMZOI_DIR, RESERVED_NAMES, place, utf8_name

_SNIFF = ("---", "+++", "{", "\ufeff---", "\ufeff+++", "\ufeff{")


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
    """Result of :func:`check_paths`: findings sorted by path and position, and what was looked at."""

    findings: list[Located] = field(default_factory=list)
    files_checked: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (display path, reason)
    analyses: dict[str, Analysis] = field(default_factory=dict)

    @property
    def has_errors(self) -> bool:
        """True when any finding has error severity (``memzoi check`` then exits 1)."""
        return any(l.finding.severity == 1 for l in self.findings)


class UsageError(Exception):
    """A command-line path that does not exist or cannot be checked (exit code 2)."""


def expand(arg: str) -> tuple[list[tuple[Path, str]], list[tuple[str, str]], list[tuple[str, Finding]]]:
    """Expand one command-line path into ``(file, display path)`` pairs.

    A file is checked as given. A directory is walked: everything below a ``.memzoi`` directory (records,
    proposals and reserved files), and elsewhere only Markdown files that start with frontmatter. Hidden entries
    other than ``.memzoi`` are skipped; symlinks inside ``.memzoi`` give a ``canonical_path`` finding. Returns
    the files, the skipped entries with reasons, and path-level findings. Raises :class:`UsageError`.
    """
    p = Path(arg)
    if not os.path.lexists(p):
        raise UsageError(f"{arg}: no such file or directory; pass a .memzoi file, a directory or a project root")
    if not p.is_dir():
        if p.is_symlink():
            return [], [], [(arg, _symlink_finding())]
        return [(p, arg)], [], []
    files: list[tuple[Path, str]] = []
    skipped: list[tuple[str, str]] = []
    path_findings: list[tuple[str, Finding]] = []
    inside = MEMZOI_DIR in p.resolve().parts

    def display(q: Path) -> str:
        # Shown and printed as JSON: a name that is not UTF-8 is shown with replacement characters.
        return os.fsencode(os.path.join(arg, os.path.relpath(q, p))).decode("utf-8", "replace")

    def visit(d: Path, managed: bool) -> None:
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as err:
            skipped.append((display(d), f"unreadable directory: {err.strerror}"))
            return
        for e in entries:
            q = Path(e.path)
            sub_managed = managed or e.name == MEMZOI_DIR
            if e.name.startswith(".") and e.name != MEMZOI_DIR:
                skipped.append((display(q), "hidden"))
                continue
            if not utf8_name(e.name):
                if managed:
                    path_findings.append((display(q), finding(
                        "canonical_path", "this file name is not valid UTF-8, so Memzoi cannot read it as a record "
                        "or proposal; rename it to its id (lower-case letters, digits and `-`)", 0, 0)))
                else:
                    skipped.append((display(q), "name is not UTF-8"))
                continue
            if e.is_symlink():
                if managed and (e.name.endswith(".md") or e.is_dir()):
                    path_findings.append((display(q), _symlink_finding(folder=e.is_dir())))
                else:
                    skipped.append((display(q), "symlink"))
                continue
            if e.is_dir(follow_symlinks=False):
                visit(q, sub_managed)
            elif e.is_file(follow_symlinks=False) and e.name.endswith(".md"):
                if managed:
                    if place(q).role.value != "other" or e.name in RESERVED_NAMES:
                        files.append((q, display(q)))
                    else:
                        skipped.append((display(q), "outside records/ and proposals/"))
                elif _looks_like_memzoi(q):
                    files.append((q, display(q)))
                else:
                    skipped.append((display(q), "no frontmatter (not a Memzoi file)"))

    visit(p, inside)
    return files, skipped, path_findings


def _looks_like_memzoi(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return True  # let the analysis report the read error
    return head.decode("utf-8", errors="ignore").startswith(_SNIFF)


def _symlink_finding(folder: bool = False) -> Finding:
    if folder:
        message = ("this folder is a symlink: Memzoi never reads through symlinks, so nothing below it is checked, "
                   "indexed or admitted; replace the link with the folder itself")
    else:
        message = "symlinks are never read as Memzoi files (Memzoi skips them); replace the link with the file itself"
    return finding("canonical_path", message, 0, 0)


def check_paths(args: list[str]) -> CheckReport:
    """Check every file under ``args`` (see :func:`expand`). Raises :class:`UsageError` for a missing path."""
    report = CheckReport()
    seen: set[Path] = set()
    checked: dict[str, tuple[Path, Analysis]] = {}
    for arg in args:
        files, skipped, path_findings = expand(arg)
        report.skipped.extend(skipped)
        for display, f in path_findings:
            report.findings.append(Located(display, f, (0, 0), (0, 0)))
        for path, display in files:
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            analysis = refine_stale(path, analyze_path(path))  # names the fields a stale edit changed
            report.files_checked += 1
            report.analyses[display] = analysis
            if analysis.findings:  # most files are clean: index lines only where a position is needed
                index = LineIndex(analysis.text)
                for f in analysis.findings:
                    report.findings.append(Located(display, f, index.position(f.start), index.position(f.end)))
            checked[display] = (path, analysis)
    # Admission (canonical path, git review visibility; one batch of git calls per .memzoi) and cross-file
    # findings (lineage, duplicates, identities) of the checked files, the latter over their whole workspace.
    extra = check_admission(checked)
    for display, found in check_cross_file(checked).items():
        extra.setdefault(display, []).extend(found)
    for display, found in extra.items():
        index = LineIndex(report.analyses[display].text)
        report.findings.extend(Located(display, f, index.position(f.start), index.position(f.end)) for f in found)
    report.findings.sort(key=lambda l: (l.path, l.start, l.end, l.finding.code))
    return report
