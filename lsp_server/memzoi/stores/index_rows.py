"""The search rows of one file in the index: its judged verdict turned into the values of its ``files`` row and its
``records`` or ``proposals`` row (:func:`index_row`), made from the file's one analysis by
:func:`memzoi.stores.fileentry.make_entry` (in worker processes for large batches).

Detected secrets never enter a row: titles, bodies and every other text column are redacted, and a path that
bears a secret is stored redacted with its id and references dropped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3

from ..base.findings import Finding
from ..base.freshness import Stamp
from ..base.pathnorm import absolute
from ..base.utf8 import encodable, storable
from ..judge import pathsafety
from ..judge.attestation import check_attestation
from ..judge.pathsafety import REDACTED_PREFIX, redacted, shown_id
from ..project.filefacts import FileFacts, facts_from_analysis
from ..project.verdict import FileVerdict
from ..read.document import Document, frame
from ..read.text import LineIndex
from ..safety.redact import MARK, redact, secret_spans
from ..safety.values import scalars
from .index_schema import file_checksum
from .verdictpayload import facts_text


def _s(value: Any) -> str | None:
    if isinstance(value, str):
        return str(value).strip() or None
    return None


#: ``json.dumps(…, ensure_ascii=False, sort_keys=True, default=str)`` made once: ``json.dumps`` with any argument
#: makes a new encoder at every call, five to seven times per row.
_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
#: ``json.dumps(…, ensure_ascii=False)`` made once (a row's findings).
_FINDINGS = json.JSONEncoder(ensure_ascii=False)


def _j(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return _JSON.encode(value)
    except (TypeError, ValueError):
        return None


#: The text columns of a ``records`` row, each the stripped string of a frontmatter key: ``(column, key)``.
_RECORD_TEXT = (
    ("type", "type"),
    ("lane", "lane"),
    ("scope_kind", "scope"),
    ("scope_id", "scope_id"),
    ("visibility", "visibility"),
    ("status", "status"),
    ("source_kind", "source"),
    ("source_ref", "source_ref"),
    ("proposal_id", "proposal_id"),
    ("supersedes_id", "supersedes"),
    ("created_at", "timestamp"),
)
#: The JSON columns of a ``records`` row, each a frontmatter value as JSON: ``(column, key)``.
_RECORD_JSON = (
    ("tags", "tags"),
    ("applies_to", "applies_to"),
    ("retention_json", "retention"),
    ("origin_json", "origin"),
    ("lineage_json", "lineage"),
)


def _finding(f: Finding, lines: LineIndex) -> dict[str, Any]:
    """A finding as the index stores it: code, severity, message, code-point span and its ``[line, character]``
    range in ``lines``."""
    span = [list(lines.position(f.start)), list(lines.position(f.end))]
    return {
        "code": f.code,
        "severity": int(f.severity),
        "message": f.message,
        "start": f.start,
        "end": f.end,
        "range": span,
    }


def _scrub(rows: dict[str, dict[str, Any]], values: list[str]) -> None:
    """Replace every detected secret value in every text column of ``rows`` (tags, origin, scope, … as plain
    text or JSON) with the redaction mark, so the index never holds text a detector matched."""
    needles = [n for v in values for n in {v, json.dumps(v, ensure_ascii=False)[1:-1]} if n]
    for row in rows.values():
        for key, value in row.items():
            if key == "path" and isinstance(value, str) and any(n in value for n in needles):
                # The key of the file's rows: marking the value inside it made several files one key (a run of
                # 50,000 files failed on it); the whole path becomes its hash marker, one per file.
                row[key] = redacted(value)
            elif key != "sha" and isinstance(value, str) and any(n in value for n in needles):
                for n in needles:
                    value = value.replace(n, MARK)
                row[key] = value


def index_key(root: Path, path: str | os.PathLike[str]) -> str:
    """The key of the file ``path`` in the index of the project ``root`` (resolved): its path relative to the
    root, ``/``-separated (absolute when outside it), redacted when it bears a secret
    (:func:`memzoi.judge.pathsafety.shown_path`: the index never stores a secret, and the key stays stable)."""
    full = absolute(path) if isinstance(path, str) else os.path.abspath(path)
    base = str(root)
    if os.sep == "/" and full.startswith(base.rstrip("/") + "/"):  # the common case, without pathlib
        return pathsafety.shown_path(full[len(base.rstrip("/")) + 1 :])
    try:
        rel = Path(full).relative_to(root).as_posix()
    except ValueError:
        rel = Path(full).as_posix()
    return pathsafety.shown_path(rel)


#: A caller's supply of rows it already made (see :class:`memzoi.stores.index.Index`): for the given paths, the rows of
#: those it holds as they are on disk (:func:`index_row`), and the paths it does not hold (the index analyses them).
Premade = Callable[[list[Path]], tuple[list[dict[str, Any]], list[Path]]]


def _path_id(identity: str | None, hidden: bool) -> str | None:
    """The id a file's path gives it (``placement.identity``: the path below ``records/`` or a proposals folder, no
    ``.md``), as the row keeps it: redacted exactly when its path is (``hidden``). The id is bytes of the path, which
    the row keeps in clear beside it when Memzoi's path scan finds nothing (:func:`.pathsafety.shown_path`), so
    scanning it again on its own would protect nothing: a rule anchored at a line start matches ``SECRET=abc``
    alone and not ``.memzoi/records/SECRET=abc.md``, and redacting only the id would still leave those bytes in the
    row's path. An id a file declares in its frontmatter is a field, scanned with the document, and is shown
    through :func:`.pathsafety.shown_id`."""
    return redacted(identity) if hidden and identity else identity


def index_row(
    rel: str,
    data: bytes,
    stamp: Stamp,
    verdict: FileVerdict,
    *,
    facts: FileFacts | None = None,
    digest: bytes | None = None,
    checked_ns: int = 0,
    facts_json: str | None = None,
) -> dict[str, Any]:
    """The rows one judged file contributes to ``files`` and ``records`` or ``proposals``: ``rel`` is its key
    (relative to the project root, redacted when it bears a secret), ``data`` and ``stamp`` its bytes and stat stamp
    on disk (:data:`memzoi.base.freshness.Stamp`: size, mtime, inode, ctime), ``verdict`` its verdict without ledger or cross-file findings (:func:`memzoi.project.verdict.judge`). A caller that has them passes the analysis's ``facts`` and the
    BLAKE3 ``digest`` of ``data`` (else they are computed here), and ``checked_ns``, the wall clock just before
    ``data`` was read (:func:`memzoi.base.freshness.read_stable`); without it (0) the row's stat is never trusted alone
    and the next refresh confirms the row by hash (:meth:`memzoi.stores.index.Index.refresh`). ``facts_json``:
    :func:`memzoi.stores.verdictpayload.facts_text` of ``facts`` when the caller made it for the file's store entry
    (the row keeps the same text: it is not encoded again)."""
    analysis = verdict.analysis
    facts = facts_from_analysis(analysis) if facts is None else facts
    kept = facts
    hidden = rel.startswith(REDACTED_PREFIX)
    if hidden:  # a secret-bearing path: its id is that secret; keep neither
        kept = dataclasses.replace(facts, ident=shown_id(facts.ident), tokens=(), refs=())
    place_id = _path_id(analysis.placement.identity, hidden)
    lines = analysis.document.lines if verdict.findings else None  # the analysis's own (its text's)
    findings = [_finding(f, lines) for f in verdict.findings] if lines else []
    size, mtime_ns, ino, ctime_ns = stamp
    out: dict[str, Any] = {
        "file": {
            "path": rel,
            "kind": analysis.kind,
            "role": analysis.placement.role.value,
            "size": size,
            "mtime_ns": mtime_ns,
            "ino": ino,
            "ctime_ns": ctime_ns,
            "checked_ns": checked_ns,
            "sha": (digest or blake3.blake3(data).digest()).hex(),
            "visibility": verdict.visibility.value,
            "admitted": int(verdict.admitted),
            "refusals": json.dumps(list(verdict.refusals)),
            "findings": _FINDINGS.encode(findings) if findings else "[]",
            # the one stored form of facts (memzoi.stores.verdictpayload), the entry's own text where it is the same
            "facts": facts_json if facts_json is not None and kept is facts else facts_text(kept),
        }
    }
    doc = analysis.document
    meta = doc.data if isinstance(doc.data, dict) else {}
    title = _s(meta.get("title")) or ""
    # The index is searchable and printed by `memzoi search`: detected secrets never enter it.
    secrets = secret_spans(analysis.findings)
    body = redact(doc.text, secrets, *doc.body_span) if secrets else doc.body
    if secrets and doc.mapping is not None and "title" in doc.mapping.entries:
        node = doc.mapping.entries["title"][1]
        if any(s < node.end and e > node.start for s, e in secrets):
            title = MARK
    if analysis.kind == "record":
        att = analysis.attestation
        conf = meta.get("confidence")
        conf = getattr(conf, "resolved", conf)
        out["record"] = {
            "path": rel,
            # a record below records/ is known by its path's id (record_id_of): judged with its path
            "id": place_id if facts.ident == analysis.placement.identity else shown_id(facts.ident),
            **{column: _s(meta.get(key)) for column, key in _RECORD_TEXT},
            "title": title,
            "body": body,
            "confidence": float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else None,
            "updated_at": _s(meta.get("updated")) or _s(meta.get("timestamp")),
            **{column: _j(meta.get(key)) for column, key in _RECORD_JSON},
            "content_hash": facts.content,
            "revision": att.revision if att else None,
            "attestation": att.state.value if att else None,
            "attested_projection": _j(att.projection) if att and att.state.value == "attested" else None,
            "admitted": int(verdict.admitted),
        }
    elif analysis.kind == "proposal":
        found = meta.get("proposal")
        block: dict[str, Any] = found if isinstance(found, dict) else {}
        out["proposal"] = {
            "path": rel,
            "id": shown_id(facts.ident),
            "file_id": place_id,
            "role": analysis.placement.role.value,
            "status": facts.status,
            "action": facts.action,
            "targets": json.dumps([r.target for r in facts.refs if r.to != "created"]),
            "scope_kind": facts.scope_kind,
            "scope_id": facts.scope_id,
            "proposed_at": _s(block.get("proposed_at")),
            "sensitivity": _s(meta.get("sensitivity")),
            "content_class": _s(meta.get("content_class")),
            "title": title,
            "body": body,
            "content_hash": facts.content,
        }
    if secrets:
        _scrub(out, sorted(_secret_texts(doc, secrets), key=len, reverse=True))
    for row in out.values():  # SQLite stores strict UTF-8: a lone surrogate (a YAML escape) is stored escaped
        for key, value in row.items():
            if isinstance(value, str) and not value.isascii() and not encodable(value):  # ASCII: no call
                row[key] = storable(value)
    seal(out)
    return out


def seal(row: dict[str, Any]) -> None:
    """Set the checksum of one file's rows (``row["file"]["checksum"]``, :func:`memzoi.stores.index_schema.file_checksum`
    of the values as they are now): taken where the rows are made, in the worker that analysed the file, so the
    process that inserts them takes no checksum of its own (issue 29: cold server scan, the server process's CPU).
    Whoever changes a value of ``row`` afterwards seals it again (:func:`keep_verified`); a checksum that does not
    match the stored values makes the rows unsound, never served (:func:`memzoi.stores.index_schema.sound_sql`)."""
    row["file"]["checksum"] = file_checksum(row["file"], row.get("record"), row.get("proposal"))


def _secret_texts(doc: Document, secrets: list[tuple[int, int]]) -> set[str]:
    """The texts to keep out of the rows: each secret span's text, and the decoded value of every frontmatter
    string (key or value) that a secret span covers whole. A match in a decoded value is reported over its whole
    scalar (its escapes, its quotes), whose text is not what the rows hold (:mod:`memzoi.safety.values`)."""
    out = {doc.text[a:b] for a, b in secrets}
    if doc.yaml_root is not None and doc.fm_end is not None and secrets[0][0] < doc.fm_end:
        for node, _ in scalars(doc.yaml_root):
            if isinstance(node.value, str) and any(a <= node.start and node.end <= b for a, b in secrets):
                out.add(str(node.value))
    return out


def keep_verified(db: sqlite3.Connection, root: Path, rows: list[dict[str, Any]]) -> None:
    """For records of ``rows`` (about to replace theirs in the index ``db`` of the project ``root``) that turned
    stale, keep the projection stored when they last verified and use it to name the changed fields in the stored
    ``stale_attestation`` finding. Raises ``sqlite3.Error``."""
    for row in rows:
        rec = row.get("record")
        if not rec or rec["attestation"] != "stale" or not rec["id"]:
            continue
        old = db.execute("SELECT attested_projection FROM records WHERE path = ?", (rec["path"],)).fetchone()
        if old is None or not old[0]:
            continue
        rec["attested_projection"] = old[0]
        seal(row)  # a value changed: its checksum follows
        try:
            text = (root / rec["path"]).read_text(encoding="utf-8")
            known = json.loads(old[0])
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        doc = frame(text)
        refined = check_attestation(doc, rec["id"], valid=True, known=known)
        if refined.state.value != "stale" or not refined.findings:
            continue
        findings = [x for x in json.loads(row["file"]["findings"]) if x["code"] != "stale_attestation"]
        findings.append(_finding(refined.findings[0], doc.lines))
        row["file"]["findings"] = json.dumps(findings, ensure_ascii=False)
        seal(row)
