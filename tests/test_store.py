"""The one project store (:mod:`memzoi.stores.store`): one database per worktree holds the store entries (verdicts and facts),
the search index and the stored reports; the databases of earlier builds are deleted; a store of another version
is made anew and never served; ``memzoi rebuild`` drops the whole store and re-fills it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import blake3
import pytest

from memzoi.base.runtime import STORE_DB
from memzoi.cli.main import main
from memzoi.stores.store import OLD_DATABASES, STORE_VERSION, path_key
from tests import builders

from .test_admission import git, rec


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    for rid in ("alpha", "beta"):
        (records / f"{rid}.md").write_text(rec(rid), encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "records")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def store() -> Path:
    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    return db


def count(table: str) -> int:
    with sqlite3.connect(store()) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_check_and_search_share_one_database(repo, capsys):
    run(capsys, "check", ".memzoi")
    code, out = run(capsys, "search", "Body", "--json")
    assert code == 0 and json.loads(out)["records"]
    assert count("entries") == 2 and count("reports") == 1 and count("files") == 2
    assert [
        p.name for p in Path(os.environ["MEMZOI_HOME"]).rglob("*.db") if "store" in p.name or p.name in OLD_DATABASES
    ] == [STORE_DB]
    with sqlite3.connect(store()) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STORE_VERSION


def test_the_databases_of_earlier_builds_are_removed(repo, capsys):
    run(capsys, "check", ".memzoi")
    folder = store().parent
    for name in OLD_DATABASES:
        for suffix in ("", "-wal"):
            (folder / (name + suffix)).write_bytes(b"an earlier build's database")
    run(capsys, "check", ".memzoi", "--format", "json")  # replayed: opens the store, and the old files go
    assert not [p for p in folder.iterdir() if p.name.startswith(OLD_DATABASES)]


def test_a_store_of_another_version_is_made_anew_and_never_served(repo, capsys):
    base = run(capsys, "check", ".memzoi", "--format", "json", "--no-cache")
    run(capsys, "check", ".memzoi", "--format", "json")
    run(capsys, "search", "Body", "--json")
    with sqlite3.connect(store()) as conn:
        conn.execute(f"PRAGMA user_version={STORE_VERSION + 1}")
    assert run(capsys, "check", ".memzoi", "--format", "json") == base
    with sqlite3.connect(store()) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STORE_VERSION
    assert count("entries") == 2  # made again by this run, under the current version
    code, out = run(capsys, "search", "Body", "--json")
    assert code == 0 and len(json.loads(out)["records"]) == 2


def _damage_table(db: Path, table: str) -> None:
    """Overwrite the root page of ``table`` in ``db`` with noise (a page lost with a WAL that another process
    deleted under a writer reads so), the file's header and schema left whole."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    assert root > 1
    with open(db, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(blake3.blake3(b"noise").digest(length=page))


@pytest.mark.parametrize("first", ["search", "check"])
def test_a_damaged_store_of_an_earlier_generation_is_made_anew_by_whoever_opens_it(repo, capsys, first):
    """A store written before the runtime plane kept SQLite's locks may be damaged (STORE_GENERATION): the first
    opening after the upgrade checks it; the index's (``memzoi search``) names the damage and serves nothing, the
    verdict cache's (``memzoi check``, the server) removes it and makes it anew, and both then answer as on a sound
    one."""
    from memzoi.stores.store import STORE_GENERATION

    base = run(capsys, "check", ".memzoi", "--format", "json", "--no-cache")
    run(capsys, "check", ".memzoi", "--format", "json")
    run(capsys, "search", "Body", "--json")
    db = store()
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version={STORE_VERSION - 10_000_000}")  # the earlier generation's
    assert STORE_VERSION // 10_000_000 == STORE_GENERATION
    _damage_table(db, "records" if first == "search" else "entries")
    assert not _sound(db)
    if first == "search":  # the index names the damage, as for any damaged store; it serves nothing from it
        code, out = run(capsys, "search", "Body", "--json")
        assert code == 1 and json.loads(out)["error"]["code"] == "corrupt_database"
    assert run(capsys, "check", ".memzoi", "--format", "json") == base  # the verdict cache's opening replaces it
    with sqlite3.connect(store()) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STORE_VERSION
    assert _sound(store())
    code, out = run(capsys, "search", "Body", "--json")
    assert code == 0 and len(json.loads(out)["records"]) == 2


def _sound(db: Path) -> bool:
    try:
        with sqlite3.connect(db) as conn:
            return bool(conn.execute("PRAGMA quick_check").fetchone()[0] == "ok")
    except sqlite3.DatabaseError:
        return False


def test_rebuild_drops_the_whole_store_and_refills_it(repo, capsys, monkeypatch):
    """``memzoi rebuild`` drops every table and fills the entries and the search rows from one analysis of each
    file: the next check analyses nothing and prints what ``--no-cache`` prints."""
    import memzoi.stores.firststage

    base = run(capsys, "check", ".memzoi", "--format", "json", "--no-cache")
    run(capsys, "check", ".memzoi", "--format", "json")
    assert count("entries") == 2 and count("reports") == 1
    with sqlite3.connect(store()) as conn:
        conn.execute("UPDATE entries SET payload = 'left by an earlier run'")  # dropped, never served
    code, out = run(capsys, "rebuild", "--json")
    assert code == 0 and sorted(json.loads(out)["record_ids"]) == ["alpha", "beta"]
    assert count("entries") == 2 and count("reports") == 0 and count("files") == 2

    def analysed(*args, **kwargs):
        raise AssertionError("check analysed a file rebuild had made the entry of")

    monkeypatch.setattr(memzoi.stores.firststage, "analyze_bytes", analysed)
    monkeypatch.setattr(memzoi.stores.firststage, "analyze_path", analysed)
    assert run(capsys, "check", ".memzoi", "--format", "json") == base
    assert count("entries") == 2


def test_a_refresh_writes_the_entry_with_the_row(repo, capsys, monkeypatch):
    """A file the index re-reads (here through ``memzoi search``'s refresh) gets its store entry in the same
    transaction as its search rows, from the same analysis: the next check analyses nothing."""
    import memzoi.stores.firststage

    run(capsys, "check", ".memzoi", "--format", "json")
    run(capsys, "search", "Body", "--json")
    target = repo / ".memzoi/records/alpha.md"
    target.write_text(builders.edit(rec("alpha"), "Body text of alpha", "Edited body of alpha"), encoding="utf-8")
    base = run(capsys, "check", ".memzoi", "--format", "json", "--no-cache")
    code, out = run(capsys, "search", "Edited", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)["records"]] == ["alpha"]
    assert count("entries") == 2
    with sqlite3.connect(store()) as conn:  # no stored report: the check takes every file's entry
        (digest,) = conn.execute("SELECT digest FROM entries WHERE key = ?", (path_key(str(target)),)).fetchone()
        conn.execute("DELETE FROM reports")
    assert digest == blake3.blake3(target.read_bytes()).digest()

    def analysed(*args, **kwargs):
        raise AssertionError("check analysed a file the index's refresh had made the entry of")

    monkeypatch.setattr(memzoi.stores.firststage, "analyze_bytes", analysed)
    monkeypatch.setattr(memzoi.stores.firststage, "analyze_path", analysed)
    assert run(capsys, "check", ".memzoi", "--format", "json") == base


# --- one stored form of a file's facts --------------------------------------------------------------------------


@pytest.mark.parametrize("failed", [False, True])
def test_facts_have_one_stored_form_in_entries_blob_and_index(repo, failed):
    from memzoi.project.filefacts import FileFacts, Ref
    from memzoi.stores.index import Index
    from memzoi.stores.verdictpayload import facts_out, facts_text, stored_facts

    facts = FileFacts(
        "record", "record", "alpha", "active", "project", "demo", "2026-07-01", None, "k", ("t",),
        (Ref("supersedes", "beta", (3, 8)),), (1, 2), (3, 4), False, failed,
    )  # fmt: skip
    assert stored_facts(json.loads(facts_text(facts))) == facts
    assert len(facts_out(facts)) == 14 + failed  # a payload (never of failed facts) keeps the fourteen values
    with Index(repo) as ix:
        ix.rebuild()
        row = ix.db.execute("SELECT facts FROM files WHERE path = ?", (".memzoi/records/alpha.md",)).fetchone()
        kept = stored_facts(json.loads(row[0]))
        assert facts_text(kept) == row[0]  # the index keeps exactly that form
        assert kept.ident == "alpha"


def test_entries_are_written_in_key_order_and_the_last_of_a_key_stands(tmp_path):
    """``write_rows`` puts rows in the order of their keys (hashes: they come in random order), so the table's pages
    are filled in turn, as dense as rows inserted sorted; a key given twice keeps its last row."""
    import random

    from memzoi.stores.store import ENTRIES_SCHEMA, Entry as StoreEntry, entry_row, path_key, write_rows

    rows = [
        entry_row("ctx", StoreEntry(path_key(f"/p/{i}"), i, i, i, i, i, b"d" * 32, "payload " * 20))
        for i in range(3000)
    ]
    random.Random(7).shuffle(rows)
    again = entry_row("ctx", StoreEntry(rows[5][0], 1, 2, 3, 4, 5, b"e" * 32, "the last one"))
    pages = []
    for given in (rows + [again], sorted(rows)):
        db = sqlite3.connect(tmp_path / f"s{len(pages)}.db")
        db.execute(ENTRIES_SCHEMA)
        write_rows(db, given)
        db.commit()
        pages.append(db.execute("PRAGMA page_count").fetchone()[0])
        if len(pages) == 1:
            assert (
                db.execute("SELECT payload FROM entries WHERE key = ?", (rows[5][0],)).fetchone()[0] == "the last one"
            )
            assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 3000
        db.close()
    assert pages[0] == pages[1]
