"""The workspace index: a disposable SQLite (WAL) database of records and proposal packets with FTS5 search.

Location: ``${MEMZOI_HOME:-~/.memzoi}/projects/<repository-key>/worktrees/<worktree-key>/memzoi-lsp-index.db``
(Memzoi's key derivation and layout, reference §7.1/§7.3; the file name is ours, so Memzoi's own ``index.db`` and
``shared.db`` are never touched). It is derived from the git plane only and can always be rebuilt
(:meth:`Index.rebuild`, ``memzoi rebuild``). :meth:`Index.update_paths` / :meth:`Index.remove_paths` keep it
current per file; :meth:`Index.refresh` re-indexes exactly the files whose size, mtime or presence changed;
:meth:`Index.drift` compares it with the files (``memzoi doctor``), like Memzoi's ``derived_index/drift.rs``
(``missing_from_index``, ``stale_in_index``, ``changed_in_index``, ``fts_out_of_sync``).

Tables: ``files`` (every indexed path with its byte hash, admission and findings), ``records``, ``proposals``, and
external-content FTS5 tables ``records_fts`` / ``proposals_fts`` over ``title`` and ``body`` kept in sync by
triggers (as Memzoi's ``memory_fts``). Every batch of writes is one transaction.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import blake3

from .admission import Admission, GitVisibility, admit, git_visibility
from .analysis import Analysis, analyze_bytes
from .barrier import failed_analysis
from .crossfile import FileFacts, Workspace, facts_from_analysis
from .crossfile import git_plane_files as _plane_files
from .parallel import ChunkPool, cpu_count
from .pathsafety import REDACTED_PREFIX, shown_id, shown_path
from .runtime import INDEX_DB, derive_keys, memzoi_home, private_dir, private_file
from .safety.redact import MARK, redact, secret_spans
from .text import LineIndex
from .workspace import MEMZOI_DIR

SCHEMA_VERSION = 4  # bump when the stored facts or columns change: old indexes are rebuilt
#: From this many files on, (re)indexing analyses files in worker processes.
PARALLEL_THRESHOLD = 400
#: Progress callback: ``(files done, files total)``.
Progress = Callable[[int, int], None]

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  role TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  sha TEXT NOT NULL,
  visibility TEXT NOT NULL,
  admitted INTEGER NOT NULL,
  refusals TEXT NOT NULL,
  findings TEXT NOT NULL,
  facts TEXT NOT NULL
);
CREATE TABLE records(
  rowid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  id TEXT,
  type TEXT, lane TEXT, scope_kind TEXT, scope_id TEXT, visibility TEXT,
  title TEXT NOT NULL, body TEXT NOT NULL,
  status TEXT, confidence REAL, source_kind TEXT, source_ref TEXT, proposal_id TEXT, supersedes_id TEXT,
  created_at TEXT, updated_at TEXT, tags TEXT, applies_to TEXT,
  retention_json TEXT, origin_json TEXT, lineage_json TEXT,
  content_hash TEXT, revision TEXT, attestation TEXT, attested_projection TEXT,
  admitted INTEGER NOT NULL
);
CREATE INDEX records_by_id ON records(id);
CREATE TABLE proposals(
  rowid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  id TEXT, file_id TEXT, role TEXT NOT NULL, status TEXT, action TEXT,
  targets TEXT, scope_kind TEXT, scope_id TEXT, proposed_at TEXT, sensitivity TEXT, content_class TEXT,
  title TEXT NOT NULL, body TEXT NOT NULL, content_hash TEXT
);
CREATE INDEX proposals_by_id ON proposals(id);
CREATE VIRTUAL TABLE records_fts USING fts5(title, body, content='records', content_rowid='rowid');
CREATE VIRTUAL TABLE proposals_fts USING fts5(title, body, content='proposals', content_rowid='rowid');
"""
_TRIGGERS = """
CREATE TRIGGER {t}_ai AFTER INSERT ON {t} BEGIN
  INSERT INTO {t}_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;
CREATE TRIGGER {t}_ad AFTER DELETE ON {t} BEGIN
  INSERT INTO {t}_fts({t}_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body);
END;
CREATE TRIGGER {t}_au AFTER UPDATE ON {t} BEGIN
  INSERT INTO {t}_fts({t}_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body);
  INSERT INTO {t}_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body);
END;
"""
_TABLES = ("files", "records", "proposals", "records_fts", "proposals_fts", "meta")


class IndexUnavailable(Exception):
    """The index cannot be opened or written (message says where and what to do)."""


def index_path(project_root: str | os.PathLike[str]) -> Path:
    """Where the index of ``project_root`` lives (see the module docstring). Does not create anything."""
    keys = derive_keys(project_root)
    return memzoi_home() / "projects" / keys.repository_key / "worktrees" / keys.worktree_key / INDEX_DB


def git_plane_files(project_root: Path) -> list[Path]:
    """Records and packets below ``<root>/.memzoi`` as Memzoi walks them, sorted."""
    return _plane_files(project_root / MEMZOI_DIR)


@dataclass
class RebuildResult:
    """Outcome of :meth:`Index.rebuild` / :meth:`Index.refresh`: ids indexed, refused files, timing."""

    record_ids: list[str] = field(default_factory=list)
    proposal_ids: list[str] = field(default_factory=list)
    files: int = 0
    refused: list[dict[str, Any]] = field(default_factory=list)  # {path, refusals}
    seconds: float = 0.0


@dataclass
class Drift:
    """Differences between the index and the git plane (paths relative to the project root)."""

    missing_from_index: list[str] = field(default_factory=list)
    stale_in_index: list[str] = field(default_factory=list)
    changed_in_index: list[str] = field(default_factory=list)
    fts_out_of_sync: bool = False
    schema: str | None = None  # a message when the database has another schema version

    @property
    def clean(self) -> bool:
        """True when the index matches the files exactly."""
        return not (self.missing_from_index or self.stale_in_index or self.changed_in_index
                    or self.fts_out_of_sync or self.schema)

    def to_json(self) -> dict[str, Any]:
        """Plain dict form for ``memzoi doctor --json``."""
        return {"missing_from_index": self.missing_from_index, "stale_in_index": self.stale_in_index,
                "changed_in_index": self.changed_in_index, "fts_out_of_sync": self.fts_out_of_sync,
                "schema": self.schema}


@dataclass
class SearchHit:
    """One search result: ``kind`` is ``record`` or ``proposal``; ``score`` is BM25 (lower is better, as SQLite
    reports it); ``snippet`` marks matches with ``[`` ``]``; ``row`` holds the stored columns."""

    kind: str
    path: str
    id: str | None
    title: str
    score: float
    snippet: str
    row: dict[str, Any]


def fts_query(text: str, *, any_word: bool = False) -> str | None:
    """A safe FTS5 query for user text: each word quoted and prefix-matched, all required (or, with
    ``any_word``, at least one); ``None`` when the text has no word characters. FTS5 syntax in the input is never
    interpreted."""
    words = re.findall(r"\w+", text, flags=re.UNICODE)
    if not words:
        return None
    return (" OR " if any_word else " ").join('"' + w.replace('"', '""') + '"*' for w in words[:32])


class Index:
    """An open index database for one project root. Use as a context manager or call :meth:`close`.

    ``path`` overrides the database location (tests, or an explicit ``--index``); ``workers`` the number of
    analysis processes for large batches (default: CPUs, at most 8). One ``Index`` is not for concurrent use
    from several threads (give each thread its own; SQLite WAL lets them read while one writes). Opening never
    scans files;
    call :meth:`rebuild` or :meth:`refresh`. Raises :class:`IndexUnavailable` when the database cannot be opened.
    """

    def __init__(self, project_root: str | os.PathLike[str], *, path: str | os.PathLike[str] | None = None,
                 workers: int | None = None):
        self.root = Path(project_root).resolve()
        self.workers = workers  # analysis processes; None = one per CPU (at most 8), 1 = in-process
        self.path = Path(path) if path is not None else index_path(self.root)
        try:
            private_dir(self.path.parent)
            private_file(self.path)
            self.db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=5000")
        except (OSError, sqlite3.Error) as err:
            raise IndexUnavailable(f"cannot open the index at {self.path}: {err}; check MEMZOI_HOME and its permissions, "
                              "or remove the file and run `memzoi rebuild`") from err
        self.schema_problem = self._check_schema()

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def _check_schema(self) -> str | None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            self._create()
            return None
        if version != SCHEMA_VERSION or not set(_TABLES) <= tables:
            return (f"index schema version {version} is not {SCHEMA_VERSION}; run `memzoi rebuild` to recreate it")
        return None

    def _create(self) -> None:
        script = _SCHEMA + _TRIGGERS.format(t="records") + _TRIGGERS.format(t="proposals")
        self.db.executescript("BEGIN IMMEDIATE;" + script + f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")

    @property
    def exists(self) -> bool:
        """True when the index has been built at least once."""
        if self.schema_problem:
            return False
        return self.db.execute("SELECT 1 FROM meta WHERE key='built_at'").fetchone() is not None

    # -- building ------------------------------------------------------------------------------------------------

    def rebuild(self, progress: Progress | None = None) -> RebuildResult:
        """Recreate the whole index from the git plane in one transaction (readers keep the old state until
        commit). Returns what was indexed."""
        started = time.perf_counter()
        files = git_plane_files(self.root)
        rows = self._analyse(files, progress)
        with self._transaction():
            for name in ("records", "proposals", "files", "records_fts", "proposals_fts", "meta"):
                self.db.execute(f"DROP TABLE IF EXISTS {name}")
            for trig in ("records_ai", "records_ad", "records_au", "proposals_ai", "proposals_ad", "proposals_au"):
                self.db.execute(f"DROP TRIGGER IF EXISTS {trig}")
            for stmt in _split_sql(_SCHEMA + _TRIGGERS.format(t="records") + _TRIGGERS.format(t="proposals")):
                self.db.execute(stmt)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._insert(rows)
            self.db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
                ("built_at", _now()), ("project_root", str(self.root)), ("schema", str(SCHEMA_VERSION))])
        self.schema_problem = None
        return self._result(rows, started)

    def update_paths(self, paths: Iterable[str | os.PathLike[str]], progress: Progress | None = None) -> RebuildResult:
        """Re-index the given files (absolute or relative to the project root); missing ones are removed.
        One batch of git calls and one transaction for all of them."""
        self._require()
        started = time.perf_counter()
        present, gone = [], []
        for p in paths:
            q = Path(p) if Path(p).is_absolute() else self.root / p
            (present if q.is_file() and not q.is_symlink() else gone).append(q)
        rows = self._analyse(present, progress)
        self._keep_verified(rows)
        with self._transaction():
            self._delete([self._rel(q) for q in present + gone])
            self._insert(rows)
        return self._result(rows, started)

    def _keep_verified(self, rows: list[dict[str, Any]]) -> None:
        """For records that turned stale, keep the projection stored when they last verified and use it to name
        the changed fields in the stored ``stale_attestation`` finding."""
        from .attestation import check_attestation
        from .document import frame

        for row in rows:
            rec = row.get("record")
            if not rec or rec["attestation"] != "stale" or not rec["id"]:
                continue
            old = self.db.execute("SELECT attested_projection FROM records WHERE path = ?", (rec["path"],)).fetchone()
            if old is None or not old[0]:
                continue
            rec["attested_projection"] = old[0]
            try:
                text = (self.root / rec["path"]).read_text(encoding="utf-8")
                known = json.loads(old[0])
            except (OSError, UnicodeDecodeError, ValueError):
                continue
            doc = frame(text)
            refined = check_attestation(doc, rec["id"], valid=True, known=known)
            if refined.state.value != "stale" or not refined.findings:
                continue
            f = refined.findings[0]
            findings = [x for x in json.loads(row["file"]["findings"]) if x["code"] != "stale_attestation"]
            findings.append({"code": f.code, "severity": int(f.severity), "message": f.message, "start": f.start,
                             "end": f.end, "range": [list(doc.lines.position(f.start)), list(doc.lines.position(f.end))]})
            row["file"]["findings"] = json.dumps(findings, ensure_ascii=False)

    def remove_paths(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Drop files from the index (deleted, renamed away, or now ignored)."""
        self._require()
        with self._transaction():
            self._delete([self._rel(Path(p) if Path(p).is_absolute() else self.root / p) for p in paths])

    def refresh(self, progress: Progress | None = None) -> RebuildResult:
        """Bring the index up to date cheaply: re-index files whose size or mtime changed or that are new, and
        drop rows whose file is gone (a full rebuild when the index was never built)."""
        if not self.exists:
            return self.rebuild(progress)
        on_disk = {self._rel(p): p for p in git_plane_files(self.root)}
        known = {r["path"]: (r["size"], r["mtime_ns"]) for r in self.db.execute("SELECT path, size, mtime_ns FROM files")}
        changed = []
        for rel, p in on_disk.items():
            try:
                st = p.stat()
            except OSError:
                continue
            if known.get(rel) != (st.st_size, st.st_mtime_ns):
                changed.append(p)
        gone = [rel for rel in known if rel not in on_disk]
        if not changed and not gone:
            return RebuildResult()
        return self.update_paths(changed + [self.root / g for g in gone], progress)

    def _require(self) -> None:
        if self.schema_problem:
            raise IndexUnavailable(self.schema_problem)

    def _rel(self, p: Path) -> str:
        """The key of ``p`` in the index: its path relative to the project root, redacted when it bears a secret
        (:func:`memzoi.pathsafety.shown_path`: the index never stores a secret, and the key stays stable)."""
        try:
            rel = Path(os.path.abspath(p)).relative_to(self.root).as_posix()
        except ValueError:
            rel = Path(os.path.abspath(p)).as_posix()
        return shown_path(rel)

    def _transaction(self):
        return _Tx(self.db)

    def _analyse(self, files: list[Path], progress: Progress | None) -> list[dict[str, Any]]:
        """Rows for ``files``: git visibility in one batch first, then read + analyse + admit per file, in worker
        processes when there are many files (analysis is pure and CPU-bound; rows are small to pickle)."""
        total = len(files)
        if progress:
            progress(0, total)
        if not files:
            return []
        vis = git_visibility(self.root, files)
        jobs = [(str(p), self._rel(p), vis.get(os.path.abspath(p), GitVisibility.UNKNOWN).value) for p in files]
        step = max(1, total // 100)
        workers = self.workers if self.workers is not None else min(cpu_count(), 8)
        pool: ChunkPool[tuple[str, str, str], dict[str, Any] | None] = ChunkPool(
            _index_rows, workers=workers, chunksize=max(16, total // (workers * 8)), start_at=PARALLEL_THRESHOLD)
        for job in jobs:
            pool.add(job)
        rows: list[dict[str, Any]] = []
        for i, row in enumerate(pool.iter_results(), 1):
            if row is not None:
                rows.append(row)
            if progress and (i % step == 0 or i == total):
                progress(i, total)
        return rows

    def _delete(self, rels: list[str]) -> None:
        for table in ("records", "proposals", "files"):
            self.db.executemany(f"DELETE FROM {table} WHERE path = ?", [(r,) for r in rels])

    def _insert(self, rows: list[dict[str, Any]]) -> None:
        self.db.executemany(
            "INSERT INTO files VALUES (:path, :kind, :role, :size, :mtime_ns, :sha, :visibility, :admitted, "
            ":refusals, :findings, :facts)", [r["file"] for r in rows])
        recs = [r["record"] for r in rows if r.get("record")]
        if recs:
            cols = list(recs[0])
            self.db.executemany(f"INSERT INTO records({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)})",
                                recs)
        props = [r["proposal"] for r in rows if r.get("proposal")]
        if props:
            cols = list(props[0])
            self.db.executemany(
                f"INSERT INTO proposals({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)})", props)

    def _result(self, rows: list[dict[str, Any]], started: float) -> RebuildResult:
        res = RebuildResult(files=len(rows), seconds=time.perf_counter() - started)
        for r in rows:
            if r.get("record") and r["record"]["id"]:
                res.record_ids.append(r["record"]["id"])
            if r.get("proposal") and r["proposal"]["id"]:
                res.proposal_ids.append(r["proposal"]["id"])
            refusals = json.loads(r["file"]["refusals"])
            if refusals:
                res.refused.append({"path": r["file"]["path"], "refusals": refusals})
        res.record_ids.sort()
        res.proposal_ids.sort()
        return res

    # -- reading -------------------------------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ("record", "proposal")) -> list[SearchHit]:
        """Full-text search over titles and bodies (BM25, title weighted 10:1), best first, at most ``limit``
        hits per kind merged by score. Returns ``[]`` for a query without words."""
        self._require()
        q = fts_query(query)
        if q is None:
            return []
        hits: list[SearchHit] = []
        for kind in kinds:
            table = {"record": "records", "proposal": "proposals"}[kind]
            sql = (f"SELECT t.*, bm25({table}_fts, 10.0, 1.0) AS score, "
                   f"snippet({table}_fts, -1, '[', ']', '…', 12) AS snip "
                   f"FROM {table}_fts JOIN {table} t ON t.rowid = {table}_fts.rowid "
                   f"WHERE {table}_fts MATCH ? ORDER BY score LIMIT ?")
            try:
                rows = self.db.execute(sql, (q, limit)).fetchall()
            except sqlite3.OperationalError:
                continue
            for r in rows:
                d = dict(r)
                hits.append(SearchHit(kind, d["path"], d.get("id"), d["title"], d.pop("score"), d.pop("snip"), d))
        hits.sort(key=lambda h: h.score)
        return hits[:limit]

    def records(self) -> Iterator[dict[str, Any]]:
        """Every indexed record row, ordered by id."""
        self._require()
        for r in self.db.execute("SELECT * FROM records ORDER BY id, path"):
            yield dict(r)

    def record(self, record_id: str) -> dict[str, Any] | None:
        """The indexed record with id ``record_id`` (first by path when several claim it), or ``None``.
        Used by lifecycle operations and hover; includes ``revision`` and ``attested_projection``."""
        self._require()
        r = self.db.execute("SELECT * FROM records WHERE id = ? ORDER BY path LIMIT 1", (record_id,)).fetchone()
        return dict(r) if r else None

    def proposals(self) -> Iterator[dict[str, Any]]:
        """Every indexed proposal row, ordered by path."""
        self._require()
        for r in self.db.execute("SELECT * FROM proposals ORDER BY path"):
            yield dict(r)

    def file(self, path: str | os.PathLike[str]) -> dict[str, Any] | None:
        """The ``files`` row of one path (with ``findings``, ``refusals`` and ``facts`` decoded)."""
        self._require()
        r = self.db.execute("SELECT * FROM files WHERE path = ?",
                            (self._rel(Path(path) if Path(path).is_absolute() else self.root / path),)).fetchone()
        if r is None:
            return None
        d = dict(r)
        for k in ("findings", "refusals", "facts"):
            d[k] = json.loads(d[k])
        return d

    def workspace(self) -> Workspace:
        """A cross-file :class:`~memzoi.crossfile.Workspace` loaded from stored facts, keyed by absolute path
        (no file is read or analysed). The language server starts from it and then updates open files."""
        self._require()
        ws = Workspace()
        for r in self.db.execute("SELECT path, facts FROM files ORDER BY path"):
            ws.update(str(self.root / r["path"]), FileFacts.from_json(json.loads(r["facts"])))
        return ws

    def counts(self) -> dict[str, int]:
        """Row counts: files, records, proposals, refused files."""
        self._require()
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {"files": one("SELECT count(*) FROM files"), "records": one("SELECT count(*) FROM records"),
                "proposals": one("SELECT count(*) FROM proposals"),
                "refused": one("SELECT count(*) FROM files WHERE admitted = 0 AND kind = 'record'")}

    def drift(self) -> Drift:
        """Compare the index with the git plane: every file's byte hash against the stored one, rows without a
        file, files without a row, and the FTS5 integrity check of both tables. Never writes."""
        d = Drift(schema=self.schema_problem)
        if d.schema:
            return d
        stored = {r["path"]: r["sha"] for r in self.db.execute("SELECT path, sha FROM files")}
        on_disk = {self._rel(p): p for p in git_plane_files(self.root)}
        for rel, p in sorted(on_disk.items()):
            if rel not in stored:
                d.missing_from_index.append(rel)
                continue
            try:
                sha = blake3.blake3(p.read_bytes()).hexdigest()
            except OSError:
                continue
            if sha != stored[rel]:
                d.changed_in_index.append(rel)
        d.stale_in_index = sorted(rel for rel in stored if rel not in on_disk)
        for table in ("records_fts", "proposals_fts"):
            try:
                self.db.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")
            except sqlite3.DatabaseError:
                d.fts_out_of_sync = True
        return d


class _Tx:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _split_sql(script: str) -> list[str]:
    """Split our schema script into statements (trigger bodies contain ``;`` and end with ``END;``)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        if not line.strip():
            continue
        buf.append(line)
        stmt = "\n".join(buf)
        if line.rstrip().endswith(";") and (not stmt.lstrip().upper().startswith("CREATE TRIGGER")
                                            or line.strip().upper() == "END;"):
            out.append(stmt)
            buf = []
    return out


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _s(value: Any) -> str | None:
    return str(value).strip() if isinstance(value, str) and str(value).strip() else None


def _j(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None


def _scrub(rows: dict[str, dict[str, Any]], values: list[str]) -> None:
    """Replace every detected secret value in every text column of ``rows`` (tags, origin, scope, … as plain
    text or JSON) with the redaction mark, so the index never holds text a detector matched."""
    needles = [n for v in values for n in {v, json.dumps(v, ensure_ascii=False)[1:-1]} if n]
    for row in rows.values():
        for key, value in row.items():
            if key != "sha" and isinstance(value, str) and any(n in value for n in needles):
                for n in needles:
                    value = value.replace(n, MARK)
                row[key] = value


def _index_rows(jobs: list[tuple[str, str, str]]) -> list[dict[str, Any] | None]:
    """Worker: :func:`_index_row` for each job of a chunk."""
    return [_index_row(job) for job in jobs]


def _index_row(job: tuple[str, str, str]) -> dict[str, Any] | None:
    """Worker: ``(path, relative path, git visibility)`` → the file's rows, or ``None`` when it cannot be read."""
    path, rel, visibility = job
    p = Path(path)
    try:
        data = p.read_bytes()
        st = p.stat()
    except OSError:
        return None
    try:
        analysis = analyze_bytes(data, p)
        return _row(rel, data, st, analysis, admit(p, analysis, GitVisibility(visibility)))
    except Exception as err:  # the barrier: the file is kept as refused, with the finding, and the run goes on
        failed = failed_analysis(err, p)
        return _row(rel, data, st, failed, admit(p, failed, GitVisibility(visibility)))


def _row(rel: str, data: bytes, st: os.stat_result, analysis: Analysis, adm: Admission) -> dict[str, Any]:
    """The rows one analysed file contributes to ``files`` and ``records`` or ``proposals``."""
    facts = facts_from_analysis(analysis)
    stored_facts = facts.to_json()
    if rel.startswith(REDACTED_PREFIX):  # a secret-bearing path: its id is that secret; keep neither
        stored_facts.update(ident=shown_id(facts.ident), tokens=[], refs=[])
    all_findings = list(analysis.findings) + adm.findings
    lines = LineIndex(analysis.text) if all_findings else None
    findings = [
        {"code": f.code, "severity": int(f.severity), "message": f.message, "start": f.start, "end": f.end,
         "range": [list(lines.position(f.start)), list(lines.position(f.end))]}
        for f in all_findings
    ] if lines else []
    out: dict[str, Any] = {"file": {
        "path": rel, "kind": analysis.kind, "role": analysis.placement.role.value, "size": st.st_size,
        "mtime_ns": st.st_mtime_ns, "sha": blake3.blake3(data).hexdigest(), "visibility": adm.visibility.value,
        "admitted": int(adm.admitted), "refusals": json.dumps(adm.refusals),
        "findings": json.dumps(findings, ensure_ascii=False), "facts": json.dumps(stored_facts),
    }}
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
            "path": rel, "id": shown_id(facts.ident), "type": _s(meta.get("type")), "lane": _s(meta.get("lane")),
            "scope_kind": _s(meta.get("scope")), "scope_id": _s(meta.get("scope_id")),
            "visibility": _s(meta.get("visibility")), "title": title, "body": body,
            "status": _s(meta.get("status")),
            "confidence": float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else None,
            "source_kind": _s(meta.get("source")), "source_ref": _s(meta.get("source_ref")),
            "proposal_id": _s(meta.get("proposal_id")), "supersedes_id": _s(meta.get("supersedes")),
            "created_at": _s(meta.get("timestamp")), "updated_at": _s(meta.get("updated")) or _s(meta.get("timestamp")),
            "tags": _j(meta.get("tags")), "applies_to": _j(meta.get("applies_to")),
            "retention_json": _j(meta.get("retention")), "origin_json": _j(meta.get("origin")),
            "lineage_json": _j(meta.get("lineage")), "content_hash": facts.content,
            "revision": att.revision if att else None, "attestation": att.state.value if att else None,
            "attested_projection": _j(att.projection) if att and att.state.value == "attested" else None,
            "admitted": int(adm.admitted),
        }
    elif analysis.kind == "proposal":
        block = meta.get("proposal") if isinstance(meta.get("proposal"), dict) else {}
        out["proposal"] = {
            "path": rel, "id": shown_id(facts.ident), "file_id": shown_id(analysis.placement.identity), "role": analysis.placement.role.value,
            "status": facts.status, "action": facts.action, "targets": json.dumps([r.target for r in facts.refs]),
            "scope_kind": facts.scope_kind, "scope_id": facts.scope_id, "proposed_at": _s(block.get("proposed_at")),
            "sensitivity": _s(meta.get("sensitivity")), "content_class": _s(meta.get("content_class")),
            "title": title, "body": body, "content_hash": facts.content,
        }
    if secrets:
        _scrub(out, sorted({doc.text[a:b] for a, b in secrets}, key=len, reverse=True))
    return out


__all__ = [
    "SCHEMA_VERSION",
    "Drift",
    "Index",
    "IndexUnavailable",
    "RebuildResult",
    "SearchHit",
    "fts_query",
    "git_plane_files",
    "index_path",
]
