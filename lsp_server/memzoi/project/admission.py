"""Admission of git-plane files: canonical path and git review visibility (Memzoi's refusal order of the findings:
:mod:`memzoi.project.refusals`).

Memzoi admits a canonical record into its index only after these checks, in order (reference §4.3,
``service/derived_index/admission.rs@164dcd6b``): safe records root, the file parses (``typed-record``), a safe
regular file at ``records/<concept_id>.md`` (``canonical-path``, ``canonical-path-id``), ``scope == repo``,
``visibility == repo``, the attestation verifies, the safety scan allows it, and git review visibility
(tracked, or untracked and not ignored; ignored-untracked is refused; outside a worktree only unattested records
are tolerated). Memzoi fails the whole read on the first refusal; we decide **per file** and report each refusal
as a finding, so one bad file never hides the others.

Git is asked once per scan, not once per file: one ``rev-parse``, one ``ls-files -z`` over the ``.memzoi``
directories and one ``check-ignore --stdin -z --no-index`` for the untracked files, with inherited ``GIT_*``
variables cleared and output bounded.
"""

from __future__ import annotations

import enum
import os
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.findings import Finding, finding
from ..base.gitowner import git_refusal, outside_review
from ..base.pathnorm import absolute
from ..base.runtime import git_env
from ..judge.workspace import Role
from .refusals import refusals

if TYPE_CHECKING:  # a check served from the verdict cache loads no analysis
    from ..judge.analysis import Analysis
    from ..judge.attestation import AttestationState

GIT_TIMEOUT = 10  # seconds per git process
#: ``ls-files`` output caps: asked for the files themselves (up to :data:`_FILE_SPECS` files and
#: :data:`_FILE_SPEC_BYTES` of pathspecs, far below the argument limit), generous per path; asked by folders, a
#: folder's whole listing (50,000 records are about 3.4 MB). Never unbounded.
_LS_FILES_BASE, _LS_FILES_PER_PATH, _LS_FOLDERS_CAP = 1 << 20, 1024, 256 << 20
_FILE_SPECS, _FILE_SPEC_BYTES = 256, 128 << 10


class GitVisibility(enum.Enum):
    """How a reviewer would see the file in git (Memzoi's ``RepositoryGitVisibility`` plus our unknowns)."""

    TRACKED = "tracked"
    UNTRACKED = "untracked_and_not_ignored"
    IGNORED = "ignored_untracked"
    NO_WORKTREE = "not_in_worktree"
    REFUSED = "refused_by_git"  # git refuses the repository: another user owns it (memzoi.base.gitowner)
    UNKNOWN = "unknown"  # git is missing, timed out or failed: no finding is derived from it


# Members read once: an enum member read through its class costs some 0.3 µs on CPython 3.11, and these functions
# run for every file of a scan (issue 29, warm start).
_RECORD = Role.RECORD
#: the roles that git visibility and the canonical path apply to: records and proposal packets
_PLANE_ROLES = (Role.RECORD, Role.PENDING, Role.APPLIED, Role.REJECTED)
_IGNORED = GitVisibility.IGNORED
_NO_WORKTREE = GitVisibility.NO_WORKTREE


@dataclass
class Admission:
    """Per-file admission result. ``refusals`` are Memzoi's admission codes in check order (e.g.
    ``typed-record``, ``canonical-path``, ``safety-scan[credential_token]``, ``ignored-untracked``); the file is
    admitted when there are none. ``findings`` are the admission findings this module adds (not the analysis')."""

    visibility: GitVisibility
    refusals: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        """True when Memzoi would admit the record into its index."""
        return not self.refusals


def _run(args: list[str], cwd: Path, *, data: bytes | None = None, cap: int = 8192) -> tuple[int, bytes] | None:
    """Run git with a cleared environment; ``None`` when git cannot run or exceeds ``cap`` bytes of output."""
    try:
        proc = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    try:
        out, _ = proc.communicate(data, timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if len(out) > cap:
        return None
    return proc.returncode, out


def worktree_root(start: Path) -> Path | None:
    """The git worktree containing ``start`` (a directory), or ``None`` outside git."""
    res = _run(["rev-parse", "--show-toplevel"], start)
    if res is None or res[0] != 0:
        return None
    text = res[1].decode("utf-8", "surrogateescape").strip()
    return Path(text).resolve() if text else None


def git_visibility(root: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]]) -> dict[str, GitVisibility]:
    """Git review visibility of ``paths`` (files under ``root``), with at most three git processes.

    Keys are the given paths made absolute (``os.path.abspath`` strings, symlinks not resolved). Tracked wins
    even when an ignore rule matches (as in Memzoi); untracked files are checked with ``check-ignore
    --no-index``. Outside a worktree every path is ``NO_WORKTREE`` (``REFUSED`` when git refuses the repository of
    another user); when git cannot answer, ``UNKNOWN``.
    Plain strings: it runs over every file of a workspace. A path given as its ``abspath`` string is its own key
    (the same object, :func:`memzoi.base.pathnorm.absolute`: the server holds one string per file; issue 29)."""
    files = [absolute(p) if isinstance(p, str) else os.path.abspath(p) for p in paths]
    if not files:
        return {}
    top = _worktree_top(root)
    if isinstance(top, GitVisibility):
        return dict.fromkeys(files, top)
    rel, result = _in_worktree(files, top)
    if rel:
        result.update(_review_visibility(top, rel))
    return result


def _worktree_top(root: str | os.PathLike[str]) -> str | GitVisibility:
    """The real path of the top of the worktree holding ``root``; ``NO_WORKTREE`` outside one, ``REFUSED`` when git
    refuses it (:func:`memzoi.base.gitowner.git_refusal`), ``UNKNOWN`` when git cannot answer."""
    base = os.path.realpath(root)
    if not os.path.isdir(base):
        base = os.path.dirname(base)
    probe = _run(["rev-parse", "--show-toplevel"], Path(base))
    if probe is None:
        return GitVisibility.UNKNOWN
    if probe[0] != 0:  # outside git, or git refuses a repository of another user: asked only then
        return GitVisibility.REFUSED if git_refusal(base) is not None else GitVisibility.NO_WORKTREE
    return os.path.realpath(probe[1].decode("utf-8", "surrogateescape").strip())


def _in_worktree(files: list[str], top: str) -> tuple[dict[str, str], dict[str, GitVisibility]]:
    """``files`` inside ``top`` with their worktree-relative ``/`` paths, and the others as ``NO_WORKTREE``."""
    prefix = top.rstrip(os.sep) + os.sep
    outside: dict[str, GitVisibility] = {}
    rel: dict[str, str] = {}
    real_dirs: dict[str, str] = {}  # resolve each directory once, not each file
    for f in files:
        d, name = os.path.split(f)
        real = real_dirs.get(d)
        if real is None:
            real = real_dirs[d] = os.path.realpath(d)
        full = os.path.join(real, name)
        if full.startswith(prefix):
            rel[f] = full[len(prefix) :].replace(os.sep, "/")
        else:
            outside[f] = GitVisibility.NO_WORKTREE
    return rel, outside


def _review_visibility(top: str, rel: dict[str, str]) -> dict[str, GitVisibility]:
    """Tracked, untracked or ignored for each file of ``rel`` (file → worktree-relative path), with one ``ls-files``
    and one ``check-ignore``; ``UNKNOWN`` for the files git could not answer for."""
    # One ls-files (literal pathspecs) over the files themselves when few, so its output is theirs whatever their
    # folders hold (one record of a folder of 50,000), else over their distinct parent directories.
    specs = [f":(literal){r}" for r in rel.values()]
    if len(specs) <= _FILE_SPECS and sum(map(len, specs)) <= _FILE_SPEC_BYTES:
        cap = _LS_FILES_BASE + _LS_FILES_PER_PATH * len(rel)
    else:
        specs = [f":(literal){d}" if d else "." for d in sorted({r.rpartition("/")[0] for r in rel.values()})]
        cap = _LS_FOLDERS_CAP
    listed = _run(["ls-files", "--cached", "-z", "--", *specs], Path(top), cap=cap)
    if listed is None or listed[0] != 0:
        return dict.fromkeys(rel, GitVisibility.UNKNOWN)
    tracked = {p.decode("utf-8", "surrogateescape") for p in listed[1].split(b"\0") if p}
    result = {f: GitVisibility.TRACKED for f, r in rel.items() if r in tracked}
    untracked = [f for f, r in rel.items() if r not in tracked]
    if not untracked:
        return result
    data = b"".join(rel[f].encode("utf-8", "surrogateescape") + b"\0" for f in untracked)
    ignored_out = _run(["check-ignore", "--stdin", "-z", "--no-index"], Path(top), data=data, cap=len(data) + 4096)
    if ignored_out is None or ignored_out[0] not in (0, 1):
        result.update(dict.fromkeys(untracked, GitVisibility.UNKNOWN))
        return result
    ignored = {p.decode("utf-8", "surrogateescape") for p in ignored_out[1].split(b"\0") if p}
    for f in untracked:
        result[f] = GitVisibility.IGNORED if rel[f] in ignored else GitVisibility.UNTRACKED
    return result


def opening_span(analysis: Analysis) -> tuple[int, int]:
    """Span of the file's opening ``---`` (after a BOM), where file-level admission findings sit."""
    start = 1 if analysis.document.bom else 0
    return start, min(start + 3, len(analysis.text))


def canonical_path_findings(
    path: str | os.PathLike[str],
    analysis: Analysis,
    dir_links: dict[Any, bool] | None = None,
    *,
    mode: int | None = None,
) -> list[Finding]:
    """``canonical_path`` for a git-plane file that is a symlink, not a regular file, or whose real location is
    not ``<.memzoi>/records/<concept_id>.md`` (a symlinked parent directory, a symlinked ``.memzoi``).

    ``dir_links`` caches "is this directory a symlink" and "is this folder reached through one" across calls of
    one scan (one ``lstat`` per directory); start a new dict for each scan. ``mode``: the ``st_mode`` of an
    ``lstat`` the caller made of ``path`` for the analysed bytes (else it is asked here).
    """
    return canonical_findings(
        path, analysis.placement.role, analysis.placement.memzoi_dir, opening_span(analysis), dir_links, mode=mode
    )


def canonical_findings(
    path: str | os.PathLike[str],
    role: Role,
    memzoi_dir: str | os.PathLike[str] | None,
    opening: tuple[int, int],
    dir_links: dict[Any, bool] | None = None,
    *,
    mode: int | None = None,
) -> list[Finding]:
    """:func:`canonical_path_findings` from plain facts: the file's role, its ``.memzoi`` directory and the span
    of its opening ``---`` (so a cached verdict asks the file system again without the analysis). ``mode``: the
    ``st_mode`` of an ``lstat`` the caller just made of ``path`` (else it is asked here)."""
    if role not in _PLANE_ROLES:
        return []
    start, end = opening
    if mode is None:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = None
    if mode is not None and stat.S_ISLNK(mode):
        return linked_findings(
            "this file is a symlink; Memzoi never reads symlinked records or packets: "
            "replace the link with the file itself",
            start,
            end,
        )
    if mode is not None and not stat.S_ISREG(mode):
        return [finding("canonical_path", "not a regular file; records and packets must be regular files", start, end)]
    if memzoi_dir is None:
        return []
    cache = dir_links if dir_links is not None else {}
    # The folder decides the chain up to `.memzoi` (its nearest one), so one verdict per folder suffices; it is
    # looked up by the folder as spelled, which is one string operation per file.
    spelled = ("folder", os.path.dirname(path), memzoi_dir)
    verdict = cache.get(spelled)
    if verdict is None:
        folder = os.path.dirname(os.path.abspath(path))
        verdict = cache[spelled] = _linked_chain(folder, os.path.abspath(memzoi_dir), cache)
    if verdict:
        return linked_findings(
            "this file is reached through a symlinked directory, so its real path is outside "
            "the `.memzoi` tree; Memzoi refuses it (canonical-path): move the file into the real "
            "`.memzoi/records/` or `.memzoi/proposals/` folder",
            start,
            end,
        )
    return []


def linked_findings(message: str, start: int, end: int) -> list[Finding]:
    """The findings of a git-plane file or folder reached through a symlink: ours, ``canonical_path`` with
    ``message``, and beside it Memzoi's write-safety code for the same path, ``unsafe_output_path`` (Memzoi's walk
    skips symlinks and refuses symlinked roots, and its gate accepts only a projection path made of plain relative
    components: reference §1.1, §2.1, §3.2)."""
    return [
        finding("canonical_path", message, start, end),
        finding(
            "unsafe_output_path",
            "Memzoi's write-safety gate refuses this path (unsafe_output_path): a record "
            "or packet is written only to a plain relative path inside `.memzoi`, never through a symlink; "
            "replace the link with the file or folder itself",
            start,
            end,
        ),
    ]


def _linked_chain(cur: str, root: str, cache: dict[str, Any]) -> bool:
    """True when ``cur`` or a directory above it, up to and including ``root``, is a symlink."""
    while True:
        linked = cache.get(cur)
        if linked is None:
            linked = cache[cur] = os.path.islink(cur)
        if linked:
            return True
        parent = os.path.dirname(cur)
        if cur == root or parent == cur:
            return False
        cur = parent


def git_findings(analysis: Analysis, visibility: GitVisibility) -> list[Finding]:
    """``ignored_untracked`` and ``review_visibility`` for a record or packet with the given git visibility."""
    return visibility_findings(analysis.placement.role, opening_span(analysis), is_attested(analysis), visibility)


@cache
def attestation_states() -> type[AttestationState]:
    """:class:`memzoi.judge.attestation.AttestationState`, imported at the first analysis it is asked of (a check
    served from the store loads no attestation) and kept: an import statement costs 1.5–2 µs at every call."""
    from ..judge.attestation import AttestationState  # noqa: PLC0415 lazy: start-up

    return AttestationState


def is_attested(analysis: Analysis) -> bool:
    """True when the record carries a materialization attestation (valid or stale)."""
    states = attestation_states()
    return analysis.attestation is not None and analysis.attestation.state not in (states.UNATTESTED, states.UNKNOWN)


def visibility_findings(
    role: Role, opening: tuple[int, int], attested: bool, visibility: GitVisibility
) -> list[Finding]:
    """:func:`git_findings` from plain facts: the file's role, the span of its opening ``---`` and whether it
    is an attested record (so a caller can keep these three values instead of the analysis)."""
    if role not in _PLANE_ROLES:
        return []
    what = "record" if role is _RECORD else "proposal packet"
    start, end = opening
    if visibility is _IGNORED:
        return [
            finding(
                "ignored_untracked",
                f"git ignores this untracked {what}, so no reviewer would see it and "
                "Memzoi refuses it (ignored-untracked): remove the ignore rule that matches it, or "
                "`git add -f` it",
                start,
                end,
            )
        ]
    if (visibility is _NO_WORKTREE or visibility is GitVisibility.REFUSED) and role is _RECORD and attested:
        return [finding("review_visibility", outside_review(visibility is GitVisibility.REFUSED), start, end)]
    return []


def admit(
    path: str | os.PathLike[str],
    analysis: Analysis,
    visibility: GitVisibility,
    dir_links: dict[Any, bool] | None = None,
) -> Admission:
    """Admission of one file: its canonical-path and git findings plus the refusals implied by all findings.
    ``dir_links`` is an optional per-scan cache (see :func:`canonical_path_findings`)."""
    extra = canonical_path_findings(path, analysis, dir_links) + git_findings(analysis, visibility)
    result = Admission(visibility, findings=extra)
    if analysis.placement.role is Role.RECORD:
        result.refusals = refusals(list(analysis.findings) + extra)
    else:
        result.refusals = refusals(extra)
    return result


def admit_all(root: str | os.PathLike[str], analyses: Mapping[Path, Analysis]) -> dict[Path, Admission]:
    """Admission of many files under one project ``root`` with one batch of git calls (:func:`git_visibility`).

    Keys are the given paths (as passed). Never raises for a single bad file.
    """
    keys = list(analyses)
    vis = git_visibility(root, keys)
    return {k: admit(k, analyses[k], vis.get(os.path.abspath(k), GitVisibility.UNKNOWN)) for k in keys}


__all__ = [
    "Admission",
    "GitVisibility",
    "admit",
    "admit_all",
    "canonical_findings",
    "linked_findings",
    "canonical_path_findings",
    "git_findings",
    "is_attested",
    "opening_span",
    "visibility_findings",
    "git_visibility",
    "worktree_root",
]
