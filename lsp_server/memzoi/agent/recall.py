"""What an agent may read: search and one memory with its provenance (the pending inbox: :mod:`memzoi.agent.pending_read`; prechecks:
:mod:`memzoi.agent.precheck`; context packs: :mod:`memzoi.agent.context_pack`). Repository memory only (plus private local records in :func:`get_memory`), read through the same
workspace index as ``memzoi search`` (refreshed first: only changed files are re-read).

Text returned to a model is data, not instructions: a record carrying a ``prompt_injection`` or
``invisible_character`` finding, or a detector's error (a secret, personal data), is marked (``unsafe``) in search
results with its title and excerpt withheld, and withheld from context packs and prechecks (listed by id and reason
code only). What is usable memory is one rule, :meth:`Reader.usable`; :func:`get_memory` withholds the rest.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from tempfile import TemporaryDirectory
from typing import Any

from ..base.findings import CODES
from ..judge.retention import current_assertion, evaluate_retention, utc_now
from ..ledger import Refusal
from ..stores import changefeed
from ..stores.findlisting import Ahead
from ..stores.index import Index, IndexUnavailable
from ..stores.readindex import open_for_read
from .bounds import LEGACY, shown_memory, withheld

#: Findings that make a record's text unfit to hand to a model whatever their severity.
UNSAFE_CODES = frozenset({"prompt_injection", "invisible_character"})
#: The detectors' codes (secrets, personal data, transcripts, the two above): at error severity each refuses the
#: record (``safety-scan[…]``), and its text, redacted as the index holds it, is not memory to hand to a model.
DETECTOR_CODES = frozenset(c for c, (_, group) in CODES.items() if group == "detector")

#: Memory types a precheck reports, with Memzoi's severity and priority (``precheck.rs``).
GOVERNANCE = {"risk": ("high", 3), "warning": ("warning", 2), "failed_attempt": ("warning", 1)}
NEXT_STEP = {
    "risk": "Review the cited risk before editing and consider a targeted test.",
    "warning": "Review the cited warning before proceeding.",
    "failed_attempt": "Check the failed-attempt memory and avoid repeating the same approach.",
}
PRECHECK_MAX = 25


def _unsafe_of(found: list[dict[str, Any]]) -> list[str]:
    """The codes of the stored findings ``found`` that make a text unfit for a model (:meth:`Reader.unsafe`)."""
    return sorted(
        {f["code"] for f in found if f["code"] in UNSAFE_CODES or f["code"] in DETECTOR_CODES and f["severity"] == 1}
    )


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base + "/")


def path_match_score(binding: str, path: str) -> int:
    """How well a record's ``applies_to`` entry ``binding`` covers the requested ``path``, exactly as Memzoi's
    precheck scores it (``precheck.rs@81b0f5f`` ``path_match_score``): 5 the same path; 4 a trailing ``/**`` on
    either side whose base is (or contains) the other; 3 the binding is an ancestor folder of the path; 2 the binding
    is below the requested path (a folder was asked about); 0 no match. Both are trimmed of whitespace and trailing
    ``/``."""
    b, p = binding.strip().rstrip("/"), path.strip().rstrip("/")
    if not b or not p:
        return 0
    if b == p:
        return 5
    if b.endswith("/**"):
        return 4 if _under(p, b[:-3]) else 0
    if p.endswith("/**"):
        return 4 if _under(b, p[:-3]) else 0
    if _under(p, b):
        return 3
    if _under(b, p):
        return 2
    return 0


def best_binding(applies_to: list[str], paths: list[str]) -> tuple[int, str | None]:
    """The best ``(score, binding)`` of a record's bindings over ``paths`` (ties: the smaller binding)."""
    best: tuple[int, str | None] = (0, None)
    for b in applies_to:
        for p in paths:
            s = path_match_score(b, p)
            if s > best[0] or (s == best[0] and s and best[1] is not None and b < best[1]):
                best = (s, b)
    return best


def normalize_path(path: str, root: Path | None = None, *, field: str = "path") -> str:
    """A repository-relative posix path from agent input. An absolute path inside ``root`` (the project root, as
    given or resolved: Claude Code and Codex work in absolute paths) is made relative to it. Raises
    :class:`Refusal` (``invalid_value``, naming the argument ``field``, e.g. ``applies_to[0]``, never the value) for
    an empty or traversing path, or an absolute one outside ``root``."""
    p = path.strip().replace("\\", "/")
    if root is not None and PurePosixPath(p).is_absolute():
        p = _inside(p, root) or p
    while p.startswith("./"):
        p = p[2:]
    pure = PurePosixPath(p)
    if not p or pure.is_absolute() or ".." in pure.parts or (len(p) > 1 and p[1] == ":"):
        where = "inside the project or " if root is not None else ""  # the value is not echoed: it may be anything
        raise Refusal("invalid_value", f"`{field}` must be {where}relative to the repository root, without `..`")
    return p


def _inside(path: str, root: Path) -> str | None:
    """``path`` (absolute, posix) relative to ``root``, as given or with symlinks resolved; ``None`` outside."""
    # a path with a NUL byte names no file: it is not resolved (os.path.realpath raises ValueError on it)
    resolved = (os.path.realpath(path),) if "\0" not in path else ()
    for base in {str(root), os.path.realpath(root)}:
        for cand in (os.path.normpath(path), *resolved):
            rel = os.path.relpath(cand, base) if cand.startswith(base.rstrip("/") + "/") or cand == base else None
            if rel is not None:
                return "." if rel == "." else rel.replace(os.sep, "/")
    return None


class Reader:
    """An open, refreshed index of one project for a batch of reads. Use as a context manager.

    Raises :class:`Refusal` (``no_project``, ``index_unavailable``) on entry."""

    def __init__(self, root: Path, meanwhile: Callable[[Index], Any] | None = None) -> None:
        self.root = root
        self.now = utc_now()
        self._meanwhile = meanwhile
        #: What ``meanwhile`` gave of the index as it was while find listed the files (a refresh by find's listing,
        #: :func:`memzoi.stores.changefeed.refreshing`), kept only where the refresh then changed none of the rows it
        #: judged (:meth:`memzoi.stores.index.Index.refresh_querying`, ``memzoi search``'s rule); else ``None``.
        self.early: Any = None
        self._scratch: TemporaryDirectory[str] | None = None  # the private index's folder (stores.readindex)

    def __enter__(self) -> Reader:
        if not (self.root / ".memzoi").is_dir():
            raise Refusal("no_project", f"no .memzoi directory at {self.root}; start the server with --root PROJECT")
        try:
            self.index, self._scratch = open_for_read(self.root)  # a private one where the home cannot be written
            with changefeed.refreshing(self.root) as walked:  # a long-lived process's listing (notifications, find)
                if self.index.schema_problem:
                    self.index.rebuild()
                elif self._meanwhile is not None and isinstance(walked, Ahead):  # find lists meanwhile
                    self.early = self.index.refresh_querying(self._meanwhile, walked=walked)
                else:
                    self.index.refresh(walked=walked)
        except IndexUnavailable as err:
            self._cleanup()
            raise Refusal("index_unavailable", str(err)) from None
        return self

    def _cleanup(self) -> None:
        if getattr(self, "index", None) is not None:
            self.index.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: object) -> None:
        self._cleanup()
        if isinstance(err, DAMAGED_ROW):
            raise damaged_row(self.index.path, err) from None

    @property
    def db(self) -> sqlite3.Connection:
        """The index database."""
        return self.index.db

    def unsafe(self, path: str) -> list[str]:
        """The codes among the stored findings of ``path`` that make its text unfit for a model: those in
        :data:`UNSAFE_CODES`, and those in :data:`DETECTOR_CODES` at error severity (what ``memzoi check`` refuses)."""
        row = self.db.execute("SELECT findings FROM files WHERE path = ?", (path,)).fetchone()
        return _unsafe_of(json.loads(row[0]) if row else [])

    def current(self, rec: dict[str, Any]) -> bool:
        """Whether the record row is a current assertion now (status active and within retention)."""
        try:
            retention = json.loads(rec["retention_json"]) if rec["retention_json"] else {}
            return current_assertion(rec["status"] or "", rec["lane"] or "", retention, self.now).is_current
        except (ValueError, TypeError):
            return False

    def usable(self, rec: dict[str, Any], withheld: list[dict[str, Any]], unsafe: list[str] | None = None) -> bool:
        """Whether the record row may be handed to a model: admitted by the index's current verdict (refreshed on
        entry: ``memzoi check``'s now), without unsafe findings (:meth:`unsafe`) and not legacy (``legacy_profile``,
        a warning in ``memzoi check``: current Memzoi refuses the file until it is upgraded, reference §0). The one
        rule of every reader that hands memory to a model (search, get, context pack, prechecks, exports). One that
        is not is appended to ``withheld`` as ``{"id", "reasons"}`` (never its text). ``unsafe``: :meth:`unsafe` of
        the row when the caller has it (search); else it comes from the same one read of the row."""
        row = self.db.execute("SELECT refusals, findings FROM files WHERE path = ?", (rec["path"],)).fetchone()
        if unsafe is None:
            unsafe = _unsafe_of(json.loads(row[1]) if row and row[1] else [])
        if unsafe:
            withheld.append({"id": rec["id"], "reasons": unsafe})
            return False
        reasons = set(json.loads(row[0])) if row and row[0] and not rec["admitted"] else set()
        if row and LEGACY in row[1]:  # the JSON text names the code only as a finding's code
            reasons |= {f["code"] for f in json.loads(row[1]) if f["code"] == LEGACY}
        if reasons or not rec["admitted"]:
            withheld.append({"id": rec["id"], "reasons": sorted(reasons) or ["not_admitted"]})
            return False
        return True

    def active(self) -> list[dict[str, Any]]:
        """Active, current repository records, admitted or not; active legacy ones, current or not (no rule reads a
        legacy retention block); and every refused record whatever its status or retention say (a schema error such
        as ``status: zzzzzz`` or ``lane: nonsense`` leaves no status or lane to judge, yet the file still claims its
        ``applies_to``). :meth:`usable` withholds all but the first kind's admitted rows, so a pack, precheck or export
        lists them by id and reasons instead of dropping them (docs/mcp.md)."""
        sound = self.index.sound_sql("t")  # a damaged row is withheld (memzoi.stores.index_schema.sound_sql)
        rows = self.db.execute(  # "legacy_profile" in the stored findings' JSON is a finding's code, nothing else
            f"SELECT t.*, instr(f.findings, '\"{LEGACY}\"') > 0 AS legacy FROM records t LEFT JOIN files f "
            f"ON f.path = t.path WHERE (t.status = 'active' OR NOT t.admitted) AND {sound} ORDER BY t.id"
        )
        return [rec for r in rows if (rec := dict(r)).pop("legacy") or not rec["admitted"] or self.current(rec)]

    def text_scores(self, text: str, table: str = "records") -> dict[int, float]:
        """The relevance (0–1, higher is better) of every row of ``table`` that matches ``text`` as a natural
        query (:mod:`memzoi.agent.query`: any term, above the relevance floor), by rowid."""
        from .query import fts_match, matched, relevant, score, terms  # noqa: PLC0415 lazy: start-up

        q = fts_match(text, "natural")
        if q is None:
            return {}
        wanted = terms(text)
        weights = self.weights(wanted, table)
        sql = (
            f"SELECT f.rowid, bm25({table}_fts, 10.0, 1.0), t.title, t.body FROM {table}_fts f "
            f"JOIN {table} t ON t.rowid = f.rowid WHERE {table}_fts MATCH ?"
        )
        try:
            rows = self.db.execute(sql, (q,)).fetchall()
        except sqlite3.OperationalError:
            return {}
        out = {}
        for rowid, bm25, title, body in rows:
            cover = relevant(wanted, matched(wanted, f"{title}\n{body}"), weights)
            if cover is not None:
                out[rowid] = score(bm25, cover)
        return out

    def weights(self, wanted: list[str], table: str = "records") -> dict[str, float]:
        """The BM25 inverse document frequency of each term of ``wanted`` (a prefix) among the rows of ``table``."""
        from .query import fts_match, idf  # noqa: PLC0415 lazy: start-up

        total = self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        out = {}
        for t in wanted:
            try:
                df = self.db.execute(
                    f"SELECT count(*) FROM {table}_fts WHERE {table}_fts MATCH ?", (fts_match(t, "all_words"),)
                ).fetchone()[0]
            except sqlite3.OperationalError:
                df = 0
            out[t] = idf(df, total)
        return out


def applies_of(rec: dict[str, Any]) -> list[str]:
    """A record row's ``applies_to`` paths (stored as JSON; an absent or malformed value is no paths)."""
    value = json.loads(rec["applies_to"]) if rec.get("applies_to") else []
    return [str(v) for v in value] if isinstance(value, list) else []


def _excerpt(snippet: str, limit: int = 240) -> str:
    text = " ".join(snippet.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: What reading a stored column of the index raises when its row was damaged (JSON that does not parse, or of
#: another shape than the index writes).
DAMAGED_ROW = (ValueError, TypeError, KeyError)


def damaged_row(db: Path, err: BaseException) -> Refusal:
    """The refusal (``index_unavailable``) for a read of the index database ``db`` that met a damaged row
    (``err``, one of :data:`DAMAGED_ROW`): the row is withheld, never served as a verdict (issue 29: a corrupt
    payload is a miss), and the message names the database and ``memzoi rebuild``, never the row's content."""
    return Refusal(
        "index_unavailable",
        f"the index database {db} holds a damaged row ({type(err).__name__}); the index is derived from the "
        "memzoi files: run `memzoi rebuild`, which replaces it",
    )


def _loads(value: str | None) -> Any:
    return json.loads(value) if value else None


def get_memory(root: Path, memory_id: str, *, include_unsafe: bool = False) -> dict[str, Any]:
    """One memory by id: a repository record (text and provenance: source, proposal, attestation, retention,
    current assertion, superseded-by, and ``reasons``: why :meth:`Reader.usable` says it is not usable memory), else
    a pending packet (``reasons``: its unsafe codes), else a private local record; as
    :func:`memzoi.agent.bounds.shown_memory` shows it (withheld when it has reasons unless ``include_unsafe``, its
    text cut at :data:`memzoi.agent.bounds.BODY_CAP`). Raises :class:`Refusal` (``not_found``)."""
    return shown_memory(_get_memory(root, memory_id), include_unsafe=include_unsafe)


def _get_memory(root: Path, memory_id: str) -> dict[str, Any]:
    with Reader(root) as r:
        row = r.index.record(memory_id)
        if row is not None:
            retention = _loads(row["retention_json"]) or {}
            try:
                decision = evaluate_retention(row["lane"] or "", retention, r.now)
                ret = {"lane": row["lane"], "boundary": decision.boundary, "reason": decision.reason}
                ret["current"] = decision.is_current
                ca = current_assertion(row["status"] or "", row["lane"] or "", retention, r.now)
                cur = {"is_current": ca.is_current, "exclusions": ca.exclusions}
            except (ValueError, TypeError):
                ret, cur = {"lane": row["lane"], "reason": "invalid_retention"}, {"is_current": False}
            later = "SELECT id FROM records WHERE supersedes_id = ? ORDER BY id"
            by = [x[0] for x in r.db.execute(later, (memory_id,))]
            origin = _origin(root, row["proposal_id"])
            refused: list[dict[str, Any]] = []
            r.usable(row, refused)
            return {
                "kind": "record",
                "id": row["id"],
                "path": row["path"],
                "title": row["title"],
                "type": row["type"],
                "lane": row["lane"],
                "status": row["status"],
                "scope": row["scope_kind"],
                "body": row["body"],
                "tags": _loads(row["tags"]) or [],
                "applies_to": applies_of(row),
                "unsafe": r.unsafe(row["path"]),
                "admitted": bool(row["admitted"]),
                "reasons": refused[0]["reasons"] if refused else [],
                "provenance": {
                    "source": row["source_kind"],
                    "source_ref": row["source_ref"],
                    "proposal_id": row["proposal_id"],
                    "proposal": origin,
                    "attestation": row["attestation"],
                    "revision": row["revision"],
                    "retention": ret,
                    "current_assertion": cur,
                    "supersedes": row["supersedes_id"],
                    "superseded_by": by,
                    "created_at": row["created_at"],
                    "updated_at": row["updated_at"],
                },
            }
        prow = r.db.execute(
            "SELECT * FROM proposals WHERE role = 'pending' AND (file_id = ? OR id = ?) LIMIT 1", (memory_id, memory_id)
        ).fetchone()
        if prow is not None:
            p = dict(prow)
            return {
                "kind": "proposal",
                "id": p["file_id"],
                "path": p["path"],
                "title": p["title"],
                "status": p["status"],
                "action": p["action"],
                "targets": _loads(p["targets"]) or [],
                "body": p["body"],
                "unsafe": r.unsafe(p["path"]),
                "provenance": {
                    "proposed_at": p["proposed_at"],
                    "sensitivity": p["sensitivity"],
                    "content_class": p["content_class"],
                    "proposal": _origin(root, p["file_id"]),
                },
            }
    from ..base.findings import ADMISSION_REFUSALS  # noqa: PLC0415 lazy: start-up
    from ..judge.workspace import linked_record_file  # noqa: PLC0415 lazy: start-up
    from ..ledger.local_records import get_local  # noqa: PLC0415 lazy: start-up

    linked = linked_record_file(root / ".memzoi", memory_id)
    if linked is not None:  # refused by check (canonical_path) and never indexed or read: withheld, not unknown
        reasons = [ADMISSION_REFUSALS["canonical_path"]]
        shut = withheld(reasons)  # no text, include_unsafe or not: none was read
        rel = linked.relative_to(root).as_posix()
        found = {"kind": "record", "id": memory_id.strip(), "path": rel, "title": shut, "body": shut, "unsafe": []}
        return {**found, "admitted": False, "reasons": reasons}
    local = get_local(root, memory_id)
    if local is not None:
        return {"kind": "local", **local.to_json(), "unsafe": []}
    raise Refusal("not_found", f"no record, pending proposal or local record `{memory_id}`; use search_memory")


def _origin(root: Path, proposal_id: str | None) -> dict[str, Any] | None:
    """``{"id", …ledger facts}`` of the proposal a record was applied from (:func:`proposal_origin`)."""
    from ..lifecycle.propose import proposal_origin  # noqa: PLC0415 lazy: start-up

    return {"id": proposal_id, **(proposal_origin(root, proposal_id) or {})} if proposal_id else None
