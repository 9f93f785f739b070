"""Shared pieces of the lifecycle operations: locating packets and records, reading them under the lock,
refusing on blocking findings, verifying that every rendered file re-parses to the intended data, Memzoi's
concept slug and redacted identity tokens, and the default actor."""

from __future__ import annotations

import getpass
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import blake3

from ..base.findings import Finding
from ..base.utf8 import encodable, utf8_bytes
from ..judge.analysis import Analysis, analyze_bytes, analyze_text

# Re-exported (re-exported: Memzoi's title slug, one implementation).
from ..judge.legacy import concept_slug as concept_slug
from ..ledger import Refusal, now_utc, read_file_state
from ..read.document import Document
from ..read.rewrite import HandEditConflict, rewrite
from ..read.text import line_ending

# Re-exported (also imported from here).
from .layout import (
    APPLIED as APPLIED,
    MEMZOI as MEMZOI,
    PENDING as PENDING,
    RECORDS as RECORDS,
    REJECTED as REJECTED,
)
from .readiness import blocks_write

TOKEN_PREFIX = "redacted-identity-"
_TOKEN = re.compile(r"^redacted-identity-[0-9a-f]{64}$")


def default_actor() -> str:
    """``$MEMZOI_ACTOR``, else the login name, else ``unknown``."""
    env = os.environ.get("MEMZOI_ACTOR")
    if env and env.strip():
        return env.strip()
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError):
        return "unknown"


def resolved_at() -> str:
    """Resolution and update instants written into files: UTC RFC 3339 to the second, like Memzoi."""
    return now_utc(precise=False)


def record_rel(record_id: str) -> str:
    """``.memzoi/records/<id>.md``."""
    return f"{RECORDS}/{record_id}.md"


def rel_to_root(root: Path, ref: str | os.PathLike[str]) -> str:
    """A user-supplied path (absolute or relative to the working directory) as a project-relative posix path.

    Raises :class:`Refusal` (``outside_project``)."""
    p = Path(ref)
    if not p.is_absolute():
        # Relative to the working directory; failing that (e.g. with --root), relative to the project root.
        cwd = Path.cwd()
        if (cwd / p).exists():
            p = cwd / p
        elif (root / p).exists() or not _inside(cwd, root):
            p = root / p
        else:  # e.g. a file a change deleted, named from inside the project
            p = cwd / p
    try:
        rel = Path(os.path.normpath(p)).relative_to(root)
    except ValueError:
        # The working directory may reach the root through a symlink: compare resolved parents.
        try:
            rel = Path(os.path.normpath(p.parent.resolve() / p.name)).relative_to(root)
        except ValueError:
            raise Refusal("outside_project", f"{ref}: not inside the project at {root}") from None
    return PurePosixPath(*rel.parts).as_posix()


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except ValueError:
        return False


def packet_rel(root: Path, ref: str | os.PathLike[str]) -> str:
    """A pending packet given by path or by file id, as a project-relative path under ``proposals/pending``.

    Raises :class:`Refusal` (``not_pending``)."""
    text = str(ref)
    if text.endswith(".md") or Path(text).exists() or (root / text).exists():
        rel = rel_to_root(root, ref)
    else:
        rel = f"{PENDING}/{text}.md"
    if not rel.startswith(PENDING + "/"):
        raise Refusal("not_pending", f"{rel}: only packets under {PENDING}/ can be resolved", rel)
    return rel


def record_ref(root: Path, ref: str, *, what: str = "RECORD") -> str:
    """A record given by id or by path (ending in ``.md``), as its record id; ``what`` names the argument in a
    refusal. Raises :class:`Refusal`: ``outside_project`` (a path outside ``root``), ``not_a_record`` (a path
    that is not below ``.memzoi/records``, or an id with a leading ``/``, a ``\\`` or an empty, ``.`` or ``..``
    segment: a path spelt as an id, which a packet would carry as it is and no record has)."""
    if ref.endswith(".md"):
        rel = rel_to_root(root, ref)
        if not rel.startswith(RECORDS + "/") or not rel.endswith(".md"):
            raise Refusal("not_a_record", f"{rel}: not a record under {RECORDS}/", rel)
        return rel[len(RECORDS) + 1 : -3]
    if ref.startswith("/") or "\\" in ref or {"", ".", ".."} & set(ref.split("/")):
        # the value is not repeated: it is a path, which may be anything
        raise Refusal(
            "not_a_record",
            f"{what} is not a record id: give the id (the path below {RECORDS} without `.md`, no `./` or `..`, "
            "e.g. `facts/build-tool`) or the record file's path; nothing was written",
        )
    return ref


def file_id_of(rel: str, folder: str) -> str:
    """The packet file id: the path below ``folder`` without ``.md``."""
    return rel[len(folder) + 1 : -3]


@dataclass
class Loaded:
    """A file read under the lock: its exact bytes (the before snapshot) and its analysis."""

    rel: str
    raw: bytes
    analysis: Analysis

    @property
    def data(self) -> dict[str, Any]:
        """The validated frontmatter as plain Python (``None`` values dropped)."""
        assert self.analysis.model is not None
        return self.analysis.model.model_dump(mode="python", exclude_none=True)

    @property
    def body(self) -> str:
        """The body after the H1, trimmed."""
        return self.analysis.document.body

    @property
    def newline(self) -> str:
        """The file's line-ending style (kept when the file is rewritten)."""
        return line_ending(self.analysis.text)


def load(root: Path, rel: str, *, missing_code: str, what: str) -> Loaded:
    """Read and analyse ``rel``. Raises :class:`Refusal` (``missing_code``) when it is absent."""
    raw = read_file_state(root, rel)
    if raw is None:
        raise Refusal(missing_code, f"{rel}: {what} does not exist", rel)
    return Loaded(rel, raw, analyze_bytes(raw, root / rel))


def load_pending_packet(root: Path, rel: str) -> Loaded:
    """Read the pending packet ``rel`` (under ``proposals/pending``). Raises :class:`Refusal`: ``proposal_resolved``
    naming where the packet is now when it was already applied or rejected (Memzoi moves a resolved packet to
    ``proposals/resolved/{applied,rejected}``, reference §2.1), ``proposal_not_found`` otherwise."""
    if read_file_state(root, rel) is None:
        file_id = file_id_of(rel, PENDING)
        for folder, how in ((APPLIED, "applied"), (REJECTED, "rejected")):
            moved = f"{folder}/{file_id}.md"
            if read_file_state(root, moved) is not None:
                raise Refusal(
                    "proposal_resolved",
                    f"{rel}: the proposal `{file_id}` was already {how}; the packet is "
                    f"now {moved} (see `memzoi history {moved}`); nothing to do",
                    rel,
                )
    return load(root, rel, missing_code="proposal_not_found", what="the pending proposal")


def errors(analysis: Analysis) -> list[Finding]:
    """Blocking findings: every error-severity finding (schema, attestation, …) and every git-plane gate or
    content-detector finding at any severity (:func:`~memzoi.lifecycle.readiness.blocks_write`)."""
    return [f for f in analysis.findings if blocks_write(f)]


def describe(findings: list[Finding], limit: int = 3) -> str:
    """``code: message; …`` for a refusal message (findings never contain matched secret text)."""
    parts = [f"{f.code}: {f.message}" for f in findings[:limit]]
    more = len(findings) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def refuse_on_errors(loaded: Loaded, what: str, todo: str) -> None:
    """Raise :class:`Refusal` with the first blocking finding's code when ``loaded`` has error findings."""
    errs = errors(loaded.analysis)
    if errs:
        raise Refusal(errs[0].code, f"{loaded.rel}: {what} is blocked by {describe(errs)}; {todo}", loaded.rel)


def edited(
    rel: str,
    doc: Document,
    changes: dict[str, Any],
    order: tuple[str, ...],
    *,
    title: str | None = None,
    body: str | None = None,
) -> str:
    """``doc`` (the file at ``rel``) with only the keys in ``changes`` (and a changed title or body) rewritten,
    every other line kept in place (:func:`memzoi.read.rewrite.rewrite`). Raises :class:`Refusal`
    (``hand_edit_conflict``, naming the line and its kind, never its text) where a hand edit would be lost."""
    try:
        return rewrite(doc, changes, order, title=title, body=body)
    except HandEditConflict as err:
        raise Refusal(
            "hand_edit_conflict",
            f"{rel}: {err.describe()}, which this change must rewrite, so the hand edit would be lost; move that "
            "line out of the field (or remove it) and retry",
            rel,
        ) from None


def verified(root: Path, rel: str, text: str, data: dict[str, Any], body: str) -> bytes:
    """Check that rendered ``text`` re-parses at ``rel`` with no error finding to exactly ``data`` and ``body``;
    returns its UTF-8 bytes. Raises :class:`Refusal` (the first finding's code, or ``not_canonical``)."""
    analysis = analyze_text(text, root / rel)
    errs = errors(analysis)
    if errs:
        raise Refusal(
            errs[0].code,
            f"{rel}: the file this would write is refused by {describe(errs)}; fix the source and retry",
            rel,
        )
    got = analysis.model.model_dump(mode="python", exclude_none=True) if analysis.model is not None else None
    want = {k: v for k, v in data.items() if v is not None}
    norm = body.replace("\r\n", "\n").strip()
    if got != want or analysis.document.body.replace("\r\n", "\n") != norm:
        raise Refusal("not_canonical", f"{rel}: the rendered file would not read back as the same data", rel)
    if not encodable(text):  # a lone surrogate (a YAML `\uD800` escape) carried into the title's H1 or a body
        raise Refusal(
            "invalid_encoding",
            f"{rel}: the file this would write holds a lone surrogate, which cannot "
            "be encoded as UTF-8; remove the `\\u` escape from the source and retry",
            rel,
        )
    return text.encode("utf-8")


def identity_token(value: str) -> str:
    """``redacted-identity-`` + BLAKE3 hex of ``value``; a value that already is a token is returned as is."""
    if _TOKEN.match(value):
        return value
    return TOKEN_PREFIX + blake3.blake3(utf8_bytes(value)).hexdigest()


def preflight_ids(raw: bytes) -> dict[str, str | None]:
    """Memzoi's light preflight parser: unique top-level scalar ``id``, ``sensitivity`` and ``content_class``
    lines of the frontmatter (works on malformed packets). A key that repeats or is not a scalar is ``None``.

    This is deliberately not :mod:`memzoi.read.yaml12`: Memzoi's ``preflight_okf_proposal_markdown`` reads these
    three lines with a line parser so that a rejected packet's redacted receipt is produced even when its YAML
    is malformed (reference §2.6); the receipt's digests must match what Memzoi computes from the same lines."""
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if lines and lines[0].lstrip("\ufeff").strip() == "---":
        lines = lines[1:]
        for i, line in enumerate(lines):
            if line.rstrip() == "---":
                lines = lines[:i]
                break
    found: dict[str, list[str]] = {"id": [], "sensitivity": [], "content_class": []}
    for line in lines:
        m = re.match(r"^(id|sensitivity|content_class):(.*)$", line)
        if m:
            found[m.group(1)].append(m.group(2).strip())
    out: dict[str, str | None] = {}
    for key, values in found.items():
        value = values[0] if len(values) == 1 else None
        if value is not None:
            value = _unquote(value)
        out[key] = value or None
    return out


def _unquote(value: str) -> str | None:
    if value.startswith('"'):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, str) else None
    if value.startswith("'"):
        return value[1:-1].replace("''", "'") if len(value) >= 2 and value.endswith("'") else None
    if value.startswith(("{", "[", "&", "*", "|", ">")) or " #" in value:
        return value.split(" #", 1)[0].strip() if not value.startswith(("{", "[", "&", "*", "|", ">")) else None
    return value


def resolved_identities(root: Path) -> set[str]:
    """File ids and frontmatter ids of every resolved packet (applied and rejected), with their tokens."""
    out: set[str] = set()
    for folder in (APPLIED, REJECTED):
        base = root / folder
        if not base.is_dir() or base.is_symlink():
            continue
        for p in base.rglob("*.md"):
            if p.is_symlink() or not p.is_file():
                continue
            fid = PurePosixPath(*p.relative_to(base).parts).as_posix()[:-3]
            out.add(fid)
            try:
                pid = preflight_ids(p.read_bytes()).get("id")
            except OSError:
                pid = None
            if pid:
                out.add(pid)
    return out | {identity_token(x) for x in out}


def identity_taken(root: Path, *ids: str) -> bool:
    """Memzoi's identity matching: ``X`` is taken when it, or its token, equals a resolved id or file id."""
    taken = resolved_identities(root)
    return any(i in taken or identity_token(i) in taken for i in ids if i)


def reserve_packet_id(root: Path, base: str) -> str:
    """A fresh pending id: ``base``, else ``base-2``, ``base-3`` … never reusing a pending or resolved id."""
    taken = resolved_identities(root)
    n = 1
    while True:
        candidate = base if n == 1 else f"{base}-{n}"
        if candidate not in taken and not (root / PENDING / f"{candidate}.md").exists():
            return candidate
        n += 1
