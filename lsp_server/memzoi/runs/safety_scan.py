"""``memzoi safety scan (--staged | --range BASE...HEAD | --file PATH)``: Memzoi's later-edit scanner over
``.memzoi/{records,proposals,memory}`` (``memzoi-cli/src/commands.rs`` ``safety_scan``; reference §3.3, §8).

Which blobs: the staged version of every added, copied, modified or type-changed managed file (``git diff --raw
-z --no-renames --cached --diff-filter=ACMT -- .memzoi/records .memzoi/proposals .memzoi/memory``), the head side
of ``BASE...HEAD`` likewise, or one working-tree file (relative to the project, no ``..``, under a managed folder,
read without following symlinks: a symlink or non-file scans as Memzoi's ``../unsupported-git-entry`` probe).
A gitlink or symlink entry in git is scanned as that probe too.

Each blob gets Memzoi's ``RepositoryWriteSafetyReport`` ``{schema: memzoi/repository-write-safety-v1, route:
maintenance, allowed, candidate_fingerprint, findings: [{code, field, detector, fingerprint}]}``: Memzoi's
write-safety detectors (:mod:`memzoi.safety.memzoi_rules`, the floor of ``memzoi check``) over the bytes
(``projection[0].bytes``) and the path (``projection[0].path``), ``invalid_encoding`` for bytes that are not UTF-8,
and the content-class gate of the blob's frontmatter (``provenance.content_class``; an absent class is
``unknown_content_class``). Matched text is never included: a finding carries the fingerprint of its value
(:func:`memzoi.safety.fingerprint.fingerprint`). The output is ``{schema: memzoi/repository-safety-scan-v1, allowed,
files: [{path, report}]}``, a blocked file's path shown as ``<redacted-path:HEX>``.

Operational failures (not a git repository, a bad range, an unreadable blob) raise :class:`ScanError`: the CLI
exits 1 for them, 2 when a blob is blocked, 0 when all are allowed (Memzoi's exit codes).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import blake3

from ..base.runtime import git_env

SCHEMA = "memzoi/repository-safety-scan-v1"
REPORT_SCHEMA = "memzoi/repository-write-safety-v1"
MANAGED = (".memzoi/records/", ".memzoi/proposals/", ".memzoi/memory/")
UNSUPPORTED = "../unsupported-git-entry"
#: Memzoi's ``REPOSITORY_WRITE_MAX_BLOB_BYTES`` is not in the reference; this project's bound (also its
#: ``[safety]`` scan limit's order of size).
MAX_BLOB_BYTES = 2 * 1024 * 1024


class ScanError(Exception):
    """An operational failure of the scan (exit 1): the message says what and what to do."""


def _git(root: Path, *args: str) -> bytes:
    try:
        res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=git_env(), timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ScanError(f"git could not be run for the safety scan ({type(err).__name__})") from None
    if res.returncode != 0:
        raise ScanError(f"git {args[0]} failed in {root}; is it a git repository with that revision?")
    return res.stdout


def _diff_blobs(root: Path, spec: list[str]) -> list[tuple[str, bytes | None]]:
    raw = _git(
        root,
        "diff",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--no-ext-diff",
        *spec,
        "--diff-filter=ACMT",
        "--",
        ".memzoi/records",
        ".memzoi/proposals",
        ".memzoi/memory",
    )
    fields = raw.split(b"\0")
    out: list[tuple[str, bytes | None]] = []
    for header, path in zip(fields[0::2], fields[1::2]):
        if not header:
            break
        parts = header.decode("ascii", "replace").split()
        if len(parts) != 5 or not path.startswith(tuple(m.encode() for m in MANAGED)):
            continue
        new_mode, new_oid = parts[1], parts[3]
        name = path.decode("utf-8", "surrogateescape")
        out.append((name, _git(root, "cat-file", "blob", new_oid) if new_mode in ("100644", "100755") else None))
    return sorted(out)


def staged_blobs(root: Path) -> list[tuple[str, bytes | None]]:
    """The staged managed blobs of the project's repository, by path (``None``: an unsupported entry)."""
    return _diff_blobs(root, ["--cached"])


def range_blobs(root: Path, spec: str) -> list[tuple[str, bytes | None]]:
    """The managed blobs changed in ``BASE...HEAD`` (head side). Raises :class:`ScanError` for a malformed range
    or an unsafe revision token (one starting with ``-``, holding whitespace or NUL)."""
    base, sep, head = spec.partition("...")
    if not sep or not base or not head or "..." in head:
        raise ScanError("--range must use BASE...HEAD syntax")
    for rev in (base, head):
        if rev.startswith("-") or "\0" in rev or any(c.isspace() for c in rev):
            raise ScanError("--range contains an unsafe Git revision token")
    return _diff_blobs(root, [f"{base}...{head}"])


def file_blob(root: Path, path: str) -> tuple[str, bytes | None]:
    """One working-tree file, relative to ``root`` (an absolute path must be inside it). Raises :class:`ScanError`
    for a path outside the project, with ``..``, or not under ``.memzoi/{records,proposals,memory}/``."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(root)
        except ValueError:
            raise ScanError("safety scan file must be inside the current repository") from None
    rel = PurePosixPath(p.as_posix())
    if any(part in ("..", ".", "") for part in rel.parts) or not str(rel).startswith(MANAGED):
        raise ScanError("safety scan path must name a file under .memzoi/records, .memzoi/proposals or .memzoi/memory")
    target = root
    for part in rel.parts:
        target = target / part
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            raise ScanError(f"{rel}: no such file") from None
        if stat.S_ISLNK(st.st_mode):
            return str(rel), None
    if not stat.S_ISREG(st.st_mode):
        return str(rel), None
    with open(target, "rb") as fh:  # at most one byte past the limit: enough to know it is too large
        return str(rel), fh.read(MAX_BLOB_BYTES + 1)


def _finding(code: str, field: str, detector: str, value: str) -> dict[str, str]:
    from ..safety.fingerprint import fingerprint  # noqa: PLC0415 lazy: start-up

    return {"code": code, "field": field, "detector": detector, "fingerprint": fingerprint(code, field, value)}


def _content_class(text: str) -> str:
    from ..read.document import frame  # noqa: PLC0415 lazy: start-up

    data = frame(text).data
    value = data.get("content_class") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else "unknown"


def scan_blob(path: str, data: bytes | None) -> dict[str, Any]:
    """Memzoi's ``RepositoryWriteSafetyReport`` of one blob (``data`` ``None``: an unsupported entry, scanned as
    the ``../unsupported-git-entry`` probe with no bytes)."""
    from ..judge.gate_codes import CONTENT_CLASS_CODES  # noqa: PLC0415 lazy: start-up
    from ..safety.scan import collect_hits  # noqa: PLC0415 lazy: start-up

    if data is None:
        path, data = UNSUPPORTED, b""
    findings = []
    if len(data) > MAX_BLOB_BYTES:  # Memzoi scans an oversized blob as a too-large probe, never its bytes
        findings.append(_finding("candidate_too_large", "projection[0].bytes", "size", str(len(data))))
        data = b""
    for h in collect_hits(path, floor_only=True):
        findings.append(_finding(h.code, "projection[0].path", h.memzoi or h.code, h.value))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        findings.append(_finding("invalid_encoding", "projection[0].bytes", "utf8", ""))
        text = None
    if text is not None:
        for h in collect_hits(text, floor_only=True):
            findings.append(_finding(h.code, "projection[0].bytes", h.memzoi or h.code, h.value))
        if path != UNSUPPORTED:
            cls = _content_class(text)
            if cls != "general_repo_knowledge":
                code = CONTENT_CLASS_CODES.get(cls, ("unknown_content_class",))[0]
                findings.append(_finding(code, "provenance.content_class", "content_class", cls))
    if path == UNSUPPORTED:
        findings.append(_finding("unsafe_output_path", "projection[0].path", "path", path))
    unique = {tuple(sorted(f.items())): f for f in findings}
    ordered = sorted(unique.values(), key=lambda f: (f["field"], f["code"], f["detector"], f["fingerprint"]))
    digest = blake3.blake3(
        b"memzoi.repository-write.candidate.v1\0" + path.encode("utf-8", "surrogateescape") + b"\0" + data
    ).hexdigest()
    return {
        "schema": REPORT_SCHEMA,
        "route": "maintenance",
        "allowed": not ordered,
        "candidate_fingerprint": digest,
        "findings": ordered,
    }


def shown(path: str, report: dict[str, Any]) -> str:
    """The path as the scan prints it: itself when allowed, else ``<redacted-path:HEX>`` (BLAKE3 of its bytes)."""
    if report["allowed"]:
        return path
    return f"<redacted-path:{blake3.blake3(path.encode('utf-8', 'surrogateescape')).hexdigest()}>"


def safety_scan(
    root: Path, *, staged: bool = False, range_spec: str | None = None, file: str | None = None
) -> dict[str, Any]:
    """Scan exactly one source (``staged``, ``range_spec`` or ``file``) of the project at ``root`` and return
    ``{schema, allowed, files: [{path, report}]}``. Raises :class:`ScanError` for an operational failure or when
    not exactly one source is given."""
    if sum(bool(x) for x in (staged, range_spec, file)) != 1:
        raise ScanError("safety scan requires exactly one of --staged, --range, or --file")
    if staged:
        blobs = staged_blobs(root)
    elif range_spec:
        blobs = range_blobs(root, range_spec)
    else:
        blobs = [file_blob(root, file or "")]
    files: list[dict[str, Any]] = []
    for path, data in blobs:
        report = scan_blob(path, data)
        files.append({"path": shown(path, report), "report": report})
    return {"schema": SCHEMA, "allowed": all(f["report"]["allowed"] for f in files), "files": files}
