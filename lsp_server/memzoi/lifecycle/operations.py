"""Caller-controlled operation ids of the runtime commands (``checkpoint add|continue|close``, ``session-end``).

Memzoi's lifecycle document: "Machine-oriented JSON calls require caller-controlled ``--operation-id`` and
observed ``--expected-version``; an identical retry replays its recorded outcome before version checks, while
changed parameters with the same operation ID fail." Memzoi keeps such outcomes in ``origin_outcome`` with an
``input_fingerprint`` (reference §7.4); this project keeps them in the ledger database's ``runtime_operation``
table:

* the **input fingerprint** is BLAKE3 (hex) over the command name and its parameters as canonical JSON (the
  note or file *content*, never a path, and the expected version: an identical retry repeats all of them);
* a recorded operation id with the same fingerprint **replays** the stored outcome (``replayed: true``) before
  any version check and writes nothing;
* the same operation id with another fingerprint is refused with ``operation_id_conflict``, nothing written;
* an outcome whose ledger change ended ``failed`` (nothing of it is visible) is not an outcome: the retry runs
  anew and replaces the row.

Only successful outcomes are recorded; a refusal (a version conflict, a blocked batch) writes nothing, so the same
call can be retried once its cause is fixed.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

import blake3

from ..ledger import Refusal, now_utc
from .local import CREDENTIAL_CODES, content_codes

_OPERATION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


class Replay(Exception):
    """Raised inside a change's plan when the operation id was already recorded with the same input: carries the
    recorded ``outcome`` (nothing is written)."""

    def __init__(self, outcome: dict[str, Any]) -> None:
        super().__init__("replay")
        self.outcome = outcome


def check_operation_id(operation_id: str | None) -> None:
    """Refuse an operation id that is not 1–128 characters of ``A-Z a-z 0-9 . _ : -`` (starting with a letter or
    digit), or that a credential detector flags (it is stored). Raises :class:`Refusal` (``invalid_value``)."""
    if operation_id is None:
        return
    if not _OPERATION_ID.match(operation_id):
        raise Refusal(
            "invalid_value",
            "--operation-id must be 1 to 128 characters of letters, digits, `.`, `_`, "
            "`:` or `-`, starting with a letter or digit",
        )

    if content_codes("operation id", operation_id, among=CREDENTIAL_CODES):
        raise Refusal("invalid_value", "--operation-id looks like a secret; choose an opaque id of your own")


def fingerprint(command: str, params: dict[str, Any]) -> str:
    """BLAKE3 hex of ``command`` and ``params`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps({"command": command, "params": params}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return blake3.blake3(text.encode("utf-8", "surrogatepass")).hexdigest()


def recorded(conn: sqlite3.Connection, operation_id: str | None, command: str, fp: str) -> dict[str, Any] | None:
    """The recorded outcome of ``operation_id`` marked ``replayed: true`` when its fingerprint is ``fp``;
    ``None`` when the id is new (or its change failed). Raises :class:`Refusal` (``operation_id_conflict``) when
    the id was used for another command or other parameters."""
    if operation_id is None:
        return None
    row = conn.execute(
        "SELECT o.command, o.input_fingerprint, o.outcome_json, c.status AS change_status FROM runtime_operation o "
        "LEFT JOIN change c ON c.id = o.change_id WHERE o.operation_id = ?",
        (operation_id,),
    ).fetchone()
    if row is None or row["change_status"] == "failed":
        return None
    if row["command"] != command or row["input_fingerprint"] != fp:
        raise Refusal(
            "operation_id_conflict",
            f"operation id `{operation_id}` was already used by "
            f"`{row['command']}` with other parameters; nothing was written. Use a new operation id for "
            "a new operation, or repeat the original call exactly to read its outcome",
        )
    return {**json.loads(row["outcome_json"]), "replayed": True}


def record(
    conn: sqlite3.Connection,
    operation_id: str | None,
    command: str,
    fp: str,
    outcome: dict[str, Any],
    change_id: str | None = None,
) -> None:
    """Store ``outcome`` for ``operation_id`` (inside the caller's transaction; nothing when the id is ``None``)."""
    if operation_id is None:
        return
    conn.execute(
        "INSERT OR REPLACE INTO runtime_operation (operation_id, command, input_fingerprint, change_id, "
        "outcome_json, created_at) VALUES (?,?,?,?,?,?)",
        (operation_id, command, fp, change_id, json.dumps(outcome, sort_keys=True), now_utc()),
    )


def check_version(expected: int | None, current: int, what: str) -> None:
    """Refuse when ``expected`` is given and differs from ``current`` (``version_conflict``, naming both)."""
    if expected is not None and expected != current:
        raise Refusal(
            "version_conflict",
            f"{what} is at version {current}, not the expected {expected}; nothing "
            "was written. Read it again (`memzoi checkpoint list --json`) and retry with the current "
            "version",
        )
