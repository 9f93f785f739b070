"""The one builder of record and proposal-packet text for tests.

Every text is written by the core's canonical writer (:func:`memzoi.read.render.render_record` /
:func:`memzoi.read.render.render_packet`), so its key order, quoting and layout are the ones the core writes
(reference ``memzoi-format.md`` §1.5, §2.2), and an attested record's ``materialization`` block carries the
revision the core computes (:func:`memzoi.judge.attestation.attest`).

* Any frontmatter field is a keyword: ``record("use-pnpm", lane="procedural", tags=["a"])``; ``None`` leaves a
  field out (``record("r", lane=None)`` has no ``lane``: a ``missing_key``; ``description=None`` writes a
  record without the ``description`` the core's writer would add). Nested blocks are dicts
  (``proposal={"action": "tombstone", ...}``) and replace the default block whole; :func:`packet` takes
  ``action``, ``target`` and ``reason`` for the common case.
* Deliberately broken variants: ``extra=`` appends raw frontmatter lines (an unknown key, a duplicate, a tab,
  bad YAML) before the closing ``---``; :func:`edit` replaces text that must be present (a missing match is an
  error, so a test never silently checks an unchanged file); :func:`crlf` gives CRLF line endings.
* :func:`write` puts a text at its path below ``.memzoi`` of a project.

A test whose point is an exact byte layout (a fix that must reproduce a file, an offset in a literal) keeps that
text literal in the test itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memzoi.judge.attestation import attest
from memzoi.read.document import frame
from memzoi.read.render import render_packet, render_record

#: The default timestamp of a record and of a packet.
RECORD_TIME = "2026-07-05T20:16:46Z"
PACKET_TIME = "2026-07-06T00:45:00Z"
#: Fixed identities of a test attestation (any ``blake3:`` + 64 hex digits is valid).
PLAN_ID = "blake3:" + "1" * 64
CANDIDATE_ID = "blake3:" + "2" * 64
DECISION_ID = "blake3:" + "3" * 64
_NO_DESCRIPTION = "no-description-written"


def record_fields(rid: str = "rec", **fields: Any) -> dict[str, Any]:
    """The frontmatter of a valid current-profile record ``rid`` (a ``dict`` for :func:`render_record`), with
    ``fields`` overriding or adding keys (``None`` removes one). Defaults: an active repo decision in the
    semantic lane, titled ``Record <rid>``, with Memzoi's materialization origin."""
    data: dict[str, Any] = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": f"Record {rid}",
        "timestamp": RECORD_TIME,
        "status": "active",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 1,
        "retention": {},
        "origin": {"origin_key": f"repository-record:{rid.replace('/', '-')}", "route": "repository_materialization"},
    }
    data.update(fields)
    return {k: v for k, v in data.items() if v is not None}


def record(
    rid: str = "rec",
    *,
    body: str | None = None,
    extra: str = "",
    newline: str = "\n",
    attested: bool | dict[str, Any] = False,
    **fields: Any,
) -> str:
    """A record file's text: :func:`record_fields` rendered by the core, body ``Body of <rid>.`` by default.

    ``attested=True`` adds a valid ``materialization`` block (a create attestation with this module's fixed
    identities); a dict passes :func:`memzoi.judge.attestation.attest`'s keywords (``action``, ``target``, ...). The
    block is computed before ``extra`` is added, so an ``extra`` that changes a semantic field makes it stale.
    ``extra`` lines go before the closing ``---``; ``newline`` is the line ending of the whole file.
    """
    # The core's writer always writes a `description` (the first body line); `description=None` asks for none.
    bare = "description" in fields and fields["description"] is None
    data = record_fields(rid, **fields)
    if bare:
        data["description"] = _NO_DESCRIPTION
    text_body = f"Body of {rid}." if body is None else body
    if attested:
        params = {
            "action": "create",
            "plan_id": PLAN_ID,
            "candidate_id": CANDIDATE_ID,
            "decision_id": DECISION_ID,
            "decision_at": "2026-07-06T00:00:00Z",
        }
        params.update(attested if isinstance(attested, dict) else {})
        doc = frame(render_record(data, text_body))
        data["materialization"] = attest(rid, doc.data or {}, doc.body, **params)
    text = render_record(data, text_body)
    return _finish(text.replace(f"description: {_NO_DESCRIPTION}\n", "") if bare else text, extra, newline)


def packet_fields(
    pid: str = "prop", *, action: str = "create", target: str | None = None, reason: str | None = None, **fields: Any
) -> dict[str, Any]:
    """The frontmatter of a valid pending proposal packet ``pid``, with ``fields`` overriding or adding keys
    (``None`` removes one). ``action`` names the proposal's action; a supersede or tombstone gets
    ``reason`` ``Because.`` unless one is given, and ``target`` goes to ``proposal.target``. A ``status`` of
    ``applied`` or ``rejected`` adds a matching ``resolution`` (override it with ``resolution=``)."""
    if reason is None and action != "create":
        reason = "Because."
    data: dict[str, Any] = {
        "id": pid,
        "kind": "proposal",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": f"Proposal {pid}",
        "description": f"Proposal {pid}.",
        "status": "proposed",
        "proposal": {
            "action": action,
            "proposed_by": "agent",
            "proposed_at": PACKET_TIME,
            "reason": reason,
            "target": target,
        },
        "scope": {"kind": "repo"},
        "timestamp": PACKET_TIME,
        "supersedes": [],
        "sensitivity": "repo-safe",
        "content_class": "general_repo_knowledge",
        "retention": {},
        "origin": {"origin_key": f"repository-proposal:{pid}", "route": "repository_proposal"},
    }
    status = fields.get("status", "proposed")
    if status in ("applied", "rejected") and "resolution" not in fields:
        data["resolution"] = resolution(status)
    data.update(fields)
    data["proposal"] = (
        {k: v for k, v in data["proposal"].items() if v is not None} if data.get("proposal") else data.get("proposal")
    )
    return {k: v for k, v in data.items() if v is not None or k == "supersedes"}


def resolution(outcome: str, **fields: Any) -> dict[str, Any]:
    """A valid ``resolution`` block: ``applied`` names a ``record_id``, ``rejected`` gives a ``reason``."""
    data: dict[str, Any] = {"outcome": outcome, "resolved_by": "me", "resolved_at": "2026-07-07T00:00:00Z"}
    data.update({"record_id": "some-record"} if outcome == "applied" else {"reason": "No."})
    data.update(fields)
    return {k: v for k, v in data.items() if v is not None}


def packet(pid: str = "prop", *, body: str | None = None, extra: str = "", newline: str = "\n", **fields: Any) -> str:
    """A proposal packet file's text: :func:`packet_fields` rendered by the core (keywords as there), body
    ``Body of <pid>.`` by default; ``extra`` and ``newline`` as for :func:`record`."""
    data = packet_fields(pid, **fields)
    return _finish(render_packet(data, f"Body of {pid}." if body is None else body), extra, newline)


def edit(text: str, old: str, new: str, count: int = -1) -> str:
    """``text`` with ``old`` replaced by ``new``; raises ``AssertionError`` when ``old`` is absent, so a
    deliberately broken variant is never the unchanged text."""
    assert old in text, f"{old!r} is not in the text"
    return text.replace(old, new, count)


def crlf(text: str) -> str:
    """``text`` with CRLF line endings."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write ``text`` at ``root/rel`` (parents created, bytes kept exactly); returns the path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def record_path(rid: str) -> str:
    """The project-relative path of record ``rid``."""
    return f".memzoi/records/{rid}.md"


def packet_path(pid: str, folder: str = "pending") -> str:
    """The project-relative path of packet ``pid`` in ``pending``, ``resolved/applied`` or ``resolved/rejected``."""
    return f".memzoi/proposals/{folder}/{pid}.md"


def _finish(text: str, extra: str, newline: str) -> str:
    if extra:
        close = text.index("\n---\n") + 1
        text = text[:close] + extra + ("" if extra.endswith("\n") else "\n") + text[close:]
    return text if newline == "\n" else crlf(text)
