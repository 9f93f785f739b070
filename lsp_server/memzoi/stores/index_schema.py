"""The index's SQLite schema (DDL): tables, FTS5 tables and the triggers that keep them in sync.

:class:`memzoi.stores.index.Index` creates it in a new database and recreates it on :meth:`~memzoi.stores.index.Index.rebuild`;
a database with another :data:`SCHEMA_VERSION` (``PRAGMA user_version``) or missing tables is reported as needing a
rebuild.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import Any

import blake3

SCHEMA_VERSION = 11  # bump when the stored facts or columns change: old stores are rebuilt (8: entries and rows
# written together by the one routine, memzoi.stores.fileentry; 9: each file's rows carry a checksum; 10: the
# checksum is of the values, taken in Python as they are inserted, no longer of SQLite's quote() of them; 11: the
# writes to `files` are counted, memzoi.stores.currentlisting)

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


#: ``meta`` key of the count of writes to ``files`` (:mod:`memzoi.stores.currentlisting`), kept by :data:`GEN_TRIGGERS`.
GEN_KEY = "files_gen"
GEN_TRIGGERS = "".join(
    f"""
CREATE TRIGGER files_gen_{name} AFTER {event} ON files BEGIN
  UPDATE meta SET value = value + 1 WHERE key = '{GEN_KEY}';
END;
"""
    for name, event in (("ai", "INSERT"), ("ad", "DELETE"), ("au", "UPDATE"))
)


def generation(db: sqlite3.Connection) -> str | None:
    """The count of writes to ``files`` (:data:`GEN_TRIGGERS`; from a random start at each rebuild), ``None`` in
    an index without it (:mod:`memzoi.stores.currentlisting` then makes and holds no mark). Raises
    ``sqlite3.Error``."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (GEN_KEY,)).fetchone()
    return None if row is None else str(row[0])


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
    """The triggers that keep ``records_fts`` and ``proposals_fts`` in sync with their tables, and those that count
    the writes to ``files`` (:data:`GEN_TRIGGERS`)."""
    return _TRIGGERS.format(t="records") + _TRIGGERS.format(t="proposals") + GEN_TRIGGERS


def schema_script() -> str:
    """The whole schema as one script: tables, then the triggers of :func:`fts_triggers`."""
    return _SCHEMA + fts_triggers()


#: The columns a file's checksum leaves out: the stat stamp a refresh restamps (its file's bytes confirmed
#: unchanged), the checksum itself and the FTS5 tables' ``rowid``.
_UNCHECKED = frozenset({"size", "mtime_ns", "ino", "ctime_ns", "checked_ns", "checksum", "rowid"})


def _columns(table: str) -> tuple[str, ...]:
    """The columns of ``table`` in :data:`_SCHEMA`, in their order (``PRAGMA table_info``'s order: a test holds
    them equal)."""
    body = re.search(rf"CREATE TABLE {table}\((.*?)\n\);", _SCHEMA, re.S)
    assert body is not None, table
    return tuple(part.split()[0] for part in body.group(1).replace("\n", " ").split(",") if part.strip())


#: The columns of the tables of a file's rows, in their order (the values of an ``INSERT`` without column names).
COLUMNS = {t: _columns(t) for t in ("files", "records", "proposals")}
#: The columns of each table a file's checksum covers, in the table's order (:func:`file_checksum`).
CHECKED = {t: tuple(c for c in cols if c not in _UNCHECKED) for t, cols in COLUMNS.items()}
_FILES, _RECORDS, _PROPOSALS = CHECKED["files"], CHECKED["records"], CHECKED["proposals"]


def _number(value: float) -> str:
    """One spelling of a number however SQLite hands it back, whatever the column's affinity: as a float (a
    ``REAL`` column turns an integer into one), an integral one as an integer (an ``INTEGER`` column turns ``1.0``
    into ``1``; ``-0.0`` is ``0``), else ``repr``."""
    f = float(value)
    if f.is_integer() and abs(f) < 2**63:
        return str(int(f))
    return repr(f)


def _spelt(v: object) -> str:
    """How :func:`row_checksum` spells a value that is neither plain text nor ``None``."""
    if isinstance(v, float) and v != v:  # SQLite stores a NaN as NULL
        return "N"
    if isinstance(v, (int, float)):
        return f"n{_number(v)}"
    if isinstance(v, str):
        return f"s{len(v)}:{v}"
    if isinstance(v, bytes):
        return f"b{v.hex()}"
    raise TypeError(f"row_checksum: a value of type {type(v).__name__}")


def row_checksum(*values: object) -> str | None:
    """The checksum of one row's ``values`` (:func:`checksum_sql`, :func:`file_checksum`): hex BLAKE3 of each
    value spelt with its type (``NULL``, a number as :func:`_number` spells it, text with its length, a blob in
    hex), 128 bits. A Python function of the values themselves, not of SQLite's text of them, so the index computes
    it of the values it inserts (no second pass over the stored rows: issue 29, ``memzoi rebuild`` ≤ 1.2× a cold
    ``check``) and compares it of the values it reads. Registered on every connection of the index under this name
    (:class:`memzoi.stores.index.Index`), taking any number of arguments; ``None`` for no values (a file without a
    ``records`` or ``proposals`` row, through :func:`checksum_sql`'s sub-queries)."""
    return _digest(values) if values else None


def _digest(values: Iterable[object]) -> str:
    """:func:`row_checksum` of ``values`` (one or more), taken as an iterable: :func:`file_checksum` passes
    ``map(row.get, columns)``, without a generator and a tuple of arguments per row (2 µs of a row's 15)."""
    parts = [
        (f"s{n}:{v}" if (n := len(v)) <= _LONG_TEXT else _Long(v))
        if v.__class__ is str
        else "N"
        if v is None
        else _spelt(v)
        for v in values
    ]
    try:
        joined = "\x1f".join(parts)  # type: ignore[arg-type]
    except TypeError:  # a long text among them: hashed piece by piece, to the same digest
        return _pieces_digest(parts)
    return blake3.blake3(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


#: a text longer than this (code points) is hashed in pieces of this size by :func:`_digest`: the one string of
#: every value it otherwise makes took four copies of a 30 MB record's body at once (``memzoi rebuild``)
_LONG_TEXT = 1 << 20


class _Long:
    """A text value of :func:`_digest` longer than :data:`_LONG_TEXT`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _pieces_digest(parts: list[str | _Long]) -> str:
    """:func:`_digest`'s hash of ``parts`` joined by ``\x1f`` (a :class:`_Long` spelt ``s<length>:<text>``), fed
    to BLAKE3 piece by piece (lone surrogates encode alike whole or cut)."""
    hasher = blake3.blake3()
    for i, part in enumerate(parts):
        if i:
            hasher.update(b"\x1f")
        if isinstance(part, _Long):
            text = part.text
            hasher.update(f"s{len(text)}:".encode())
            for at in range(0, len(text), _LONG_TEXT):
                hasher.update(text[at : at + _LONG_TEXT].encode("utf-8", "surrogatepass"))
        else:
            hasher.update(part.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()[:32]


def file_checksum(file: dict[str, Any], record: dict[str, Any] | None, proposal: dict[str, Any] | None) -> str:
    """The checksum of a file's rows as :func:`memzoi.stores.index_rows.index_row` makes them (its ``files`` row
    and its ``records`` or ``proposals`` row, ``None`` when it has none), as :func:`checksum_sql` computes it of
    the stored values: written with the rows (:func:`memzoi.stores.index_build.insert_rows`, a rebuild's
    :class:`memzoi.stores.index_build.Staging`). A column a row leaves out is stored ``NULL``."""
    values = list(map(file.get, _FILES))
    values.append(_digest(map(record.get, _RECORDS)) if record else None)
    values.append(_digest(map(proposal.get, _PROPOSALS)) if proposal else None)
    return _digest(values)


def checksum_sql(prefix: str = "") -> str:
    """An SQL expression, over a row of ``files``, of the checksum of every value the index stores for that file
    (:func:`row_checksum` of its ``files`` row, with the checksums of its ``records`` and ``proposals`` rows,
    ``NULL`` where it has none), but the columns of :data:`_UNCHECKED`: :func:`file_checksum` of the same values.
    Written with the rows (:func:`memzoi.stores.index_build.insert_rows`) and compared where rows are served
    (:func:`sound_sql`): a row whose values no longer match is a miss, withheld, never served (issue 29: "a corrupt
    payload is a miss, never a verdict"). A refresh does not compare them: that reads every stored byte (0.2 s of
    CPU at 10,000 files, more than the rest of a search). ``prefix``: the same over the staged tables of a rebuild
    (:func:`staging_script`, ``"staged_"``), the outer row named ``files``."""

    def values(table: str) -> str:
        return ", ".join(f"{table}.{c}" for c in CHECKED[table])

    subs = [
        f"(SELECT row_checksum({values(t)}) FROM {prefix}{t} AS {t} WHERE {t}.path = files.path)"
        for t in ("records", "proposals")
    ]
    return f"row_checksum({values('files')}, {', '.join(subs)})"


#: The tables a rebuild stages its rows in (:func:`staging_script`).
STAGED = ("files", "records", "proposals")


def staging_script(prefix: str = "staged_") -> list[str]:
    """The statements that create, on one connection only (``TEMP``: SQLite's temporary database, spilled to a
    temporary file beyond its page cache, never seen by readers), empty copies of the index's :data:`STAGED`
    tables named ``prefix`` + table, with the same columns in the same order (so ``INSERT INTO files SELECT * FROM
    staged_files`` copies them), without their indexes, nor the ``path`` key's (the index's own key refuses a
    path twice when they are copied; 11,000 rows staged in 15 % less CPU). ``memzoi rebuild`` streams its rows
    into them while files are analysed, outside any write lock (issue 29, "Lean memory": the rows are not held in
    memory until the end), and copies them into the index in its one transaction."""
    out = []
    for stmt in _split_sql(_SCHEMA):
        for table in STAGED:
            head = f"CREATE TABLE {table}("
            if stmt.startswith(head):
                body = stmt[len(head) :].replace("path TEXT PRIMARY KEY", "path TEXT")
                out.append(
                    f"CREATE TEMP TABLE {prefix}{table}("
                    + body.replace("path TEXT NOT NULL UNIQUE", "path TEXT NOT NULL")
                )
    return out


def sound_sql(alias: str) -> str:
    """An SQL condition, over a row of ``records`` or ``proposals`` named ``alias`` in the query, that holds when
    its file's stored values still match their checksum (:func:`checksum_sql`): a read that serves rows adds it, so
    a damaged row is withheld (the doctor reports it; ``memzoi rebuild`` or a change of the file writes it anew).
    Computed only for the rows the query reaches."""
    return f"EXISTS (SELECT 1 FROM files WHERE files.path = {alias}.path AND files.checksum = {checksum_sql()})"


__all__ = [
    "CHECKED",
    "GEN_KEY",
    "GEN_TRIGGERS",
    "generation",
    "COLUMNS",
    "SCHEMA_VERSION",
    "STAGED",
    "checksum_sql",
    "file_checksum",
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
