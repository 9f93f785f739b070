"""The index's SQLite schema (DDL): tables, FTS5 tables and the triggers that keep them in sync.

:class:`memzoi.stores.index.Index` creates it in a new database and recreates it on :meth:`~memzoi.stores.index.Index.rebuild`;
a database with another :data:`SCHEMA_VERSION` (``PRAGMA user_version``) or missing tables is reported as needing a
rebuild.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

import blake3

SCHEMA_VERSION = 9  # bump when the stored facts or columns change: old stores are rebuilt (8: entries and rows
# written together by the one routine, memzoi.stores.fileentry; 9: each file's rows carry a checksum)

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  role TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  checked_ns INTEGER NOT NULL,
  sha TEXT NOT NULL,
  visibility TEXT NOT NULL,
  admitted INTEGER NOT NULL,
  refusals TEXT NOT NULL,
  findings TEXT NOT NULL,
  facts TEXT NOT NULL,
  checksum TEXT NOT NULL DEFAULT ''
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
CREATE INDEX records_by_supersedes ON records(supersedes_id);
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


def _split_sql(script: str) -> list[str]:
    """Split our schema script into statements (trigger bodies contain ``;`` and end with ``END;``)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        if not line.strip():
            continue
        buf.append(line)
        stmt = "\n".join(buf)
        if line.rstrip().endswith(";") and (
            not stmt.lstrip().upper().startswith("CREATE TRIGGER") or line.strip().upper() == "END;"
        ):
            out.append(stmt)
            buf = []
    return out


def fts_triggers() -> str:
    """The triggers that keep ``records_fts`` and ``proposals_fts`` in sync with their tables."""
    return _TRIGGERS.format(t="records") + _TRIGGERS.format(t="proposals")


def schema_script() -> str:
    """The whole schema as one script: tables, then the FTS5 triggers of ``records`` and ``proposals``."""
    return _SCHEMA + fts_triggers()


#: The columns a file's checksum leaves out: the stat stamp a refresh restamps (its file's bytes confirmed
#: unchanged), the checksum itself and the FTS5 tables' ``rowid``.
_UNCHECKED = frozenset({"size", "mtime_ns", "ino", "ctime_ns", "checked_ns", "checksum", "rowid"})


def row_checksum(text: str) -> str:
    """The checksum of a file's stored values (:func:`checksum_sql`): hex BLAKE3, 128 bits. Registered on every
    connection of the index under this name (:class:`memzoi.stores.index.Index`)."""
    return blake3.blake3(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def checksum_sql(db: sqlite3.Connection, prefix: str = "") -> str:
    """An SQL expression, over a row of ``files``, of the checksum of every value the index stores for that file:
    its ``files`` row and its ``records`` or ``proposals`` row, each value ``quote()``-d (so ``NULL``, numbers and
    text stay apart), but the columns of :data:`_UNCHECKED`. Written with the rows (:func:`memzoi.stores.index_build.insert_rows`)
    and compared where rows are served (:func:`sound_sql`): a row whose values no longer match is a miss, withheld,
    never served (issue 29: "a corrupt payload is a miss, never a verdict"). A refresh does not compare them: that
    reads every stored byte (0.2 s of CPU at 10,000 files, more than the rest of a search). ``prefix``: the same
    over the staged tables of a rebuild (:func:`staging_script`, ``"staged_"``), the outer row named ``files``."""

    def values(table: str) -> str:
        cols = [c[1] for c in db.execute(f"PRAGMA table_info({prefix}{table})") if c[1] not in _UNCHECKED]
        return "||".join(f"quote({table}.{c})" for c in cols)

    texts = [
        f"ifnull((SELECT {values(t)} FROM {prefix}{t} AS {t} WHERE {t}.path = files.path), '')"
        for t in ("records", "proposals")
    ]
    return f"row_checksum({values('files')}||{'||'.join(texts)})"


#: The tables a rebuild stages its rows in (:func:`staging_script`).
STAGED = ("files", "records", "proposals")


def staging_script(prefix: str = "staged_") -> list[str]:
    """The statements that create, on one connection only (``TEMP``: SQLite's temporary database, spilled to a
    temporary file beyond its page cache, never seen by readers), empty copies of the index's :data:`STAGED`
    tables named ``prefix`` + table, with the same columns in the same order (so ``INSERT INTO files SELECT * FROM
    staged_files`` copies them), without their indexes. ``memzoi rebuild`` streams its rows into them while files
    are analysed, outside any write lock (issue 29, "Lean memory": the rows are not held in memory until the
    end), and copies them into the index in its one transaction."""
    out = []
    for stmt in _split_sql(_SCHEMA):
        for table in STAGED:
            head = f"CREATE TABLE {table}("
            if stmt.startswith(head):
                out.append(f"CREATE TEMP TABLE {prefix}{table}(" + stmt[len(head) :])
    return out


def sound_sql(db: sqlite3.Connection, alias: str) -> str:
    """An SQL condition, over a row of ``records`` or ``proposals`` named ``alias`` in the query, that holds when
    its file's stored values still match their checksum (:func:`checksum_sql`): a read that serves rows adds it, so
    a damaged row is withheld (the doctor reports it; ``memzoi rebuild`` or a change of the file writes it anew).
    Computed only for the rows the query reaches."""
    return f"EXISTS (SELECT 1 FROM files WHERE files.path = {alias}.path AND files.checksum = {checksum_sql(db)})"


__all__ = [
    "SCHEMA_VERSION",
    "STAGED",
    "checksum_sql",
    "sound_sql",
    "fts_triggers",
    "row_checksum",
    "schema_script",
    "staging_script",
]


def _opening(db: sqlite3.Connection, check: Callable[[], str | None], patience: float = 30.0) -> str | None:
    """Set the connection up (WAL, busy timeout) and ``check`` the schema, retried while another process holds the
    database while it opens or creates it (a WAL switch can be refused at once, without the busy timeout): many
    processes opening a new index at once all succeed. Raises the last ``sqlite3.Error`` otherwise."""
    deadline = time.monotonic() + patience
    while True:
        try:
            db.execute("PRAGMA busy_timeout=5000")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            return check()
        except sqlite3.OperationalError as err:
            if not any(w in str(err) for w in ("locked", "busy")) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # another process is creating the schema: it takes milliseconds


class _Tx:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error): a write transaction of the project's store."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        try:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            if self.db.in_transaction:  # a COMMIT that failed (busy, disk full) leaves no transaction open
                self.db.execute("ROLLBACK")
