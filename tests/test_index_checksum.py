"""Each file's rows in the index carry a checksum of their values (issue 29: "a corrupt payload is a miss, never a
verdict"), taken in Python of the values as they are inserted (`index_schema.file_checksum`) and compared in SQL
of the values SQLite hands back (`index_schema.checksum_sql`). Both must agree for every value a row can hold, or
a sound row would be withheld forever; and every change of a checked value must show."""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from hypothesis import given, settings, strategies as st

from memzoi.stores import index_schema
from memzoi.stores.index_build import insert_rows
from memzoi.stores.index_schema import CHECKED, checksum_sql, file_checksum, row_checksum


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.create_function("row_checksum", -1, row_checksum, deterministic=True)
    for stmt in index_schema._split_sql(index_schema.schema_script()):
        db.execute(stmt)
    return db


def test_the_checked_columns_are_the_tables_columns_in_order():
    db = _db()
    for table, cols in CHECKED.items():
        info = [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
        assert cols == tuple(
            c for c in info if c not in {"size", "mtime_ns", "ino", "ctime_ns", "checked_ns", "checksum", "rowid"}
        )
        assert "path" in cols


_text = st.one_of(st.none(), st.text(max_size=12))
_number = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 2.0**62, 2.0**63, 1e300, 2**62 + 1, 2**63 - 1, -(2**63)]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
)


def _row(path: str, kind: str, values: dict[str, Any]) -> dict[str, Any]:
    file = {
        "path": path,
        "kind": kind,
        "role": "record" if kind == "record" else "pending",
        "size": 1,
        "mtime_ns": 2,
        "ino": 3,
        "ctime_ns": 4,
        "checked_ns": 5,
        "sha": values.get("sha") or "00",
        "visibility": "tracked",
        "admitted": values.get("admitted", 1),
        "refusals": "[]",
        "findings": "[]",
        "facts": values.get("facts") or "",
    }
    out: dict[str, Any] = {"file": file}
    if kind == "record":
        out["record"] = {
            "path": path,
            "id": values.get("id"),
            "title": values.get("title") or "",
            "body": "b",
            "confidence": values.get("confidence"),
            "tags": values.get("tags"),
            "admitted": 1,
        }
    elif kind == "proposal":
        out["proposal"] = {
            "path": path,
            "id": values.get("id"),
            "role": "pending",
            "title": "t",
            "body": values.get("title") or "",
            "status": values.get("tags"),
        }
    return out


def _unsound(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute(f"SELECT path FROM files WHERE checksum IS NOT {checksum_sql()}")]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["record", "proposal", "other"])},
            optional={
                "id": _text,
                "title": _text,
                "tags": _text,
                "facts": _text,
                "sha": _text,
                "confidence": _number,
                "admitted": st.integers(0, 1),
            },
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_checksum_taken_on_insert_is_the_one_read_back(rows):
    db = _db()
    made = [_row(f"p{i}", v.pop("kind"), v) for i, v in enumerate(rows)]
    with db:
        insert_rows(db, made)
    assert _unsound(db) == []
    stored = dict(db.execute("SELECT path, checksum FROM files").fetchall())
    assert stored == {r["file"]["path"]: file_checksum(r["file"], r.get("record"), r.get("proposal")) for r in made}


def test_every_changed_value_is_a_mismatch():
    db = _db()
    with db:
        insert_rows(
            db,
            [
                _row("a", "record", {"id": "a", "title": "T", "confidence": 0.5}),
                _row("b", "proposal", {"id": "b", "title": "U"}),
            ],
        )
    damages = [
        "UPDATE records SET title = 'T2'",
        "UPDATE records SET confidence = 0.25",
        "UPDATE records SET id = NULL",
        "UPDATE records SET lane = 'x'",
        "UPDATE records SET body = 'b' || char(0)",
        "UPDATE files SET facts = 1",
        "UPDATE files SET admitted = 0 WHERE path = 'b'",
        "UPDATE proposals SET body = ''",
        "UPDATE records SET path = 'a2'",
        "DELETE FROM proposals",
    ]
    for damage in damages:
        db.execute("BEGIN")
        db.execute(damage)
        assert _unsound(db), damage
        db.execute("ROLLBACK")
    assert _unsound(db) == []
    db.execute("UPDATE files SET size = 9, mtime_ns = 9, ino = 9, ctime_ns = 9, checked_ns = 9")  # a restamp
    assert _unsound(db) == []


def test_values_are_spelt_apart():
    assert row_checksum("1") != row_checksum(1)
    assert row_checksum(None) != row_checksum("")
    assert row_checksum("a", "b") != row_checksum("ab") != row_checksum("a\x1fb")
    assert row_checksum(1) == row_checksum(1.0) and row_checksum(0) == row_checksum(-0.0)
    assert row_checksum(math.nan) == row_checksum(None)  # SQLite stores a NaN as NULL
    assert row_checksum() is None


def test_a_made_row_carries_its_checksum_and_is_inserted_with_it(tmp_path):
    """The rows of a file carry their checksum from where they are made (`index_rows.seal`, in the worker that
    analysed it): the process inserting them stores it as it is, taking none of its own (issue 29: the server's
    scan), so it must be the checksum of the values."""
    from memzoi.stores.fileentry import entry_chunk

    md = tmp_path / ".memzoi" / "records"
    md.mkdir(parents=True)
    rec = md / "a-note.md"
    rec.write_text(
        "---\nid: a-note\ntype: fact\ntitle: A note\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nBody text.\n",
        encoding="utf-8",
    )
    [made] = entry_chunk([(str(rec), "unknown")], now=None, root=str(tmp_path.resolve()))
    assert made is not None and made.row is not None
    row = made.row
    assert row["file"]["checksum"] == file_checksum(row["file"], row.get("record"), row.get("proposal"))
    db = _db()
    with db:
        insert_rows(db, [row])
    assert _unsound(db) == []
    # the carried checksum is what is stored: a row sealed wrongly is stored so, and then never served as sound
    wrong = {
        "file": {**row["file"], "path": "other", "checksum": "0" * 32},
        "record": {**row["record"], "path": "other"},
    }
    with db:
        insert_rows(db, [wrong])
    assert _unsound(db) == ["other"]
