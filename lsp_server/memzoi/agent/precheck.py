"""Memzoi's precheck: the risks, warnings and failed attempts an agent should read before it edits a path, takes an
action or runs a command (``memzoi precheck [--path] [--action] [--command]``; MCP ``precheck_path``,
``precheck_action``, ``precheck_command``).

The rule is Memzoi's ``precheck.rs@81b0f5f``:

* a **path** collects the active, current governance records (types ``risk``, ``warning``, ``failed_attempt``)
  whose ``applies_to`` matches it, scored by :func:`memzoi.agent.recall.path_match_score` (5 exact, 4 trailing
  ``/**``, 3 ancestor folder, 2 descendant);
* the **action** and **command** (joined with a space) are a text query over the same records
  (:meth:`memzoi.agent.recall.Reader.text_scores`); with a path, a text hit must also match the path ("the same
  action text must not bypass path applicability");
* a record found both ways is listed once; the order is path score, then having a text match, then its text score,
  then risk > warning > failed_attempt, confidence, newest ``updated``, id; at most 25.

Each warning has Memzoi's shape ``{id: "warn_<record>", record_id, message: "<title>: <body>", severity,
citations, suggested_next_step}``; each citation names its plane (``provenance: git``, ``destination: repo``):
precheck reads repository records only, so a runtime row is never cited here as repo truth. Records whose text
carries instruction-like or invisible characters are withheld (listed by id and reason only). A secret in the
action or command (a token on a command line) is searched for but echoed redacted. A message is cut at
:data:`memzoi.agent.bounds.BODY_CAP`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .bounds import cut
from .recall import GOVERNANCE, NEXT_STEP, PRECHECK_MAX, Reader, applies_of, best_binding, normalize_path


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def precheck(
    root: Path,
    *,
    path: str | None = None,
    action: str | None = None,
    command: str | None = None,
    scope_kind: str | None = None,
) -> dict[str, Any]:
    """Memzoi's precheck over the project at ``root``. ``path`` is repository-relative (an absolute path inside
    the project is accepted; :func:`normalize_path` raises :class:`~memzoi.ledger.Refusal` ``invalid_value`` for
    one outside it), ``action``/``command`` free text, ``scope_kind`` an optional ``scope`` filter. Returns
    ``{path, action, command, warnings: [...], withheld: [{id, reasons}]}``; every warning also carries
    ``path_score`` (0 for a text-only hit) and ``lexical`` (whether the text matched). Reads only."""
    where = normalize_path(path, root) if path is not None and _clean(path) else None
    query = " ".join(v for v in (_clean(action), _clean(command)) if v)
    found: dict[str, tuple[dict[str, Any], int, str | None, float | None]] = {}
    withheld: list[dict[str, Any]] = []
    with Reader(root) as r:
        text = r.text_scores(query) if query else {}
        for rec in r.active():
            if rec["type"] not in GOVERNANCE or (scope_kind and rec["scope_kind"] != scope_kind):
                continue
            score, binding = best_binding(applies_of(rec), [where]) if where else (0, None)
            lexical = text.get(rec["rowid"])
            if score == 0 and (lexical is None or where is not None):
                continue
            if not r.usable(rec, withheld):
                continue
            found[rec["id"]] = (rec, score, binding, lexical)
    ranked = sorted(found.values(), key=_order)
    from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up - a secret typed into the action or command is never echoed

    def shown(value: str | None) -> str | None:
        return scrub(value) if value else value

    return {
        "path": where,
        "action": shown(_clean(action)),
        "command": shown(_clean(command)),
        "warnings": [_warning(*t) for t in ranked[:PRECHECK_MAX]],
        "withheld": withheld,
    }


def _order(t: tuple[dict[str, Any], int, str | None, float | None]) -> tuple[Any, ...]:
    rec, score, _, lexical = t
    newest = tuple(-ord(c) for c in (rec["updated_at"] or ""))  # descending string order, ties by id below
    return (
        -score,
        lexical is None,
        -(lexical or 0.0),
        -GOVERNANCE[rec["type"]][1],
        -(rec["confidence"] or 0.0),
        newest,
        rec["id"],
    )


def _warning(rec: dict[str, Any], score: int, binding: str | None, lexical: float | None) -> dict[str, Any]:
    applies = applies_of(rec)
    return {
        "id": f"warn_{rec['id']}",
        "record_id": rec["id"],
        "message": cut(f"{rec['title']}: {rec['body']}")[0],  # at most BODY_CAP: 25 of them bound the answer
        "severity": GOVERNANCE[rec["type"]][0],
        "path_score": score,
        "lexical": lexical is not None,
        "suggested_next_step": NEXT_STEP[rec["type"]],
        "citations": [
            {
                "record_id": rec["id"],
                "type": rec["type"],
                "scope_kind": rec["scope_kind"],
                "provenance": "git",
                "destination": "repo",
                "visibility": rec["visibility"],
                "source_kind": rec["source_kind"],
                "source_ref": rec["source_ref"],
                "path": binding if binding is not None else (applies[0] if applies else None),
                "file": rec["path"],
            }
        ],
    }


def precheck_path(root: Path, path: str) -> dict[str, Any]:
    """Memzoi's path precheck (:func:`precheck` with a path only): ``{path, warnings: [{id: "warn_<record>",
    record_id, message, severity, citations, suggested_next_step, path_score}], withheld}``."""
    return precheck(root, path=path)
