"""Secrets are never stored: after a packet with planted secrets is indexed and rejected, no byte sequence of
them is anywhere under MEMZOI_HOME (ledger, index, their WAL files); undo of that purge is refused; runtime
directories are 0700 and files 0600 whichever command runs first; doctor reports loose modes; a ledger of
schema 2 loses its stored secrets on first open. Assertions name secrets by label, never print them."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base.runtime import LEDGER_DB, project_runtime_dir
from memzoi.cli.main import main

from .conftest import PENDING

PLANTED = {
    "postgres password": "postgres://memzoi_admin:Vq8rT2nL5xK9wZ3p@db.internal.example:5432/app",
    "private key line": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "bearer token": "sk9Fq2Lr7Xv4Tn8Wm3Zp6Yc1Hb5Jd0Gk",
}
BODY = f"""
Connect with {PLANTED["postgres password"]} for the nightly job.

-----BEGIN OPENSSH PRIVATE KEY-----
{PLANTED["private key line"]}
-----END OPENSSH PRIVATE KEY-----

Authorization: Bearer {PLANTED["bearer token"]}
"""


def leaks(home: Path) -> list[str]:
    """Labels of planted secrets (or their distinctive 12-byte middle parts) found in any file under ``home``."""
    blobs = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    found = []
    for label, value in PLANTED.items():
        raw = value.encode()
        parts = [raw] + [raw[i : i + 12] for i in range(0, len(raw) - 12, 6)]
        if any(part in blob for blob in blobs for part in parts if part.strip(b"/:@.") == part):
            found.append(label)
    return found


def plant(repo: Path) -> str:
    src = repo / PENDING / "mem_2026_07_06_auth_001.md"
    (repo / PENDING / "planted.md").write_bytes(
        src.read_bytes().replace(b"mem_2026_07_06_auth_001", b"planted") + BODY.encode()
    )
    return "planted"


def run(capsys, *argv: str) -> int:
    code = main(list(argv))
    capsys.readouterr()
    return code


def test_reject_of_planted_secrets_leaves_none_under_memzoi_home(repo, cli, capsys):
    home = Path(os.environ["MEMZOI_HOME"])
    plant(repo)
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    code, out = cli("proposals", "reject", "planted", "--reason", "holds credentials")
    assert code == 0, out
    assert out["details"]["receipt"] is True
    pending = next(f for f in out["files"] if f["path"].endswith("/planted.md"))
    assert pending["purged"] == ["before"]
    run(capsys, "search", "nightly", "--root", str(repo))
    run(capsys, "history", "--root", str(repo))
    assert leaks(home) == []
    # Undo says why it cannot restore the packet, and writes nothing.
    code, err = cli("undo", out["change_id"])
    assert code == 1 and err["error"]["code"] == "purged_secret"
    assert "on purpose" in err["error"]["message"] and "hash and size" in err["error"]["message"]
    assert not (repo / PENDING / "planted.md").exists()


def test_the_harness_finds_a_planted_secret(tmp_path):
    (tmp_path / "x.db").write_bytes(b"\0\0" + PLANTED["bearer token"].encode()[3:20] + b"\0")
    assert leaks(tmp_path) == ["bearer token"]


def test_secret_in_a_reason_is_refused_and_not_stored(repo):
    home = Path(os.environ["MEMZOI_HOME"])
    with pytest.raises(L.Refusal) as err:
        L.run_change(repo, lambda r: L.ChangePlan("note", [], reason=f"see {PLANTED['postgres password']}"), actor="r")
    assert err.value.code == "secret_in_text"
    assert leaks(home) == []


def modes(home: Path) -> dict[str, int]:
    return {str(p.relative_to(home.parent)): stat.S_IMODE(os.lstat(p).st_mode) for p in [home, *home.rglob("*")]}


def assert_private(home: Path) -> None:
    got = modes(home)
    assert got, "nothing created"
    for name, mode in got.items():
        is_dir = (home.parent / name).is_dir()
        assert mode == (0o700 if is_dir else 0o600), (name, oct(mode))


@pytest.mark.parametrize("first", ["lifecycle", "rebuild", "doctor"])
def test_runtime_paths_are_private_whichever_command_runs_first(repo, cli, capsys, tmp_path, monkeypatch, first):
    home = tmp_path / "fresh-home" / "memzoi"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    old = os.umask(0o022)
    try:
        if first == "lifecycle":
            assert cli("tombstone", "rust-msrv-is-1-96-1", "--reason", "gone")[0] == 0
        elif first == "rebuild":
            assert run(capsys, "rebuild", "--root", str(repo)) == 0
        else:
            run(capsys, "doctor", "--root", str(repo))
        assert cli("proposals", "reject", "mem_2026_07_06_auth_001", "--reason", "no")[0] == 0
        assert run(capsys, "rebuild", "--root", str(repo)) == 0
    finally:
        os.umask(old)
    assert_private(home)
    # SQLite removes the WAL and shared-memory files when the last connection closes: look while one is open.
    with L.Ledger.for_project(repo).connect() as conn:
        conn.execute("SELECT count(*) FROM change").fetchone()
        names = set(modes(home))
        assert {LEDGER_DB, LEDGER_DB + "-wal", LEDGER_DB + "-shm"} <= {n.rsplit("/", 1)[-1] for n in names}
        assert any(n.endswith("-store.db") for n in names)
        assert_private(home)
    assert stat.S_IMODE(os.stat(home.parent).st_mode) != 0o700  # not ours: outside the memzoi home


def test_loose_modes_are_reported_by_doctor_and_tightened(repo, cli, capsys):
    home = Path(os.environ["MEMZOI_HOME"])
    assert cli("tombstone", "rust-msrv-is-1-96-1", "--reason", "gone")[0] == 0
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    rdir = project_runtime_dir(repo)
    for p in [home, home / "projects", rdir]:
        os.chmod(p, 0o755)
    for p in rdir.iterdir():
        if p.is_file():
            os.chmod(p, 0o644)
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    check = next(c for c in report["checks"] if c["name"] == "runtime_modes")
    assert check["status"] == "warning" and LEDGER_DB in check["message"] and "(0644)" in check["message"]
    assert cli("history")[0] == 0  # any command that opens the ledger tightens
    assert cli("proposals", "reject", "mem_2026_07_06_auth_001", "--reason", "no")[0] == 0
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    assert_private(home)
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert next(c for c in report["checks"] if c["name"] == "runtime_modes")["status"] == "ok"


def test_loose_resident_state_is_reported_by_doctor_and_tightened(repo, cli, capsys):
    """The home's own state (resident candidate database, resident-file locks) is runtime state too."""
    home = Path(os.environ["MEMZOI_HOME"])
    assert cli("resident", "list")[0] == 0
    db, locks = home / "memzoi-lsp-resident.db", home / "resident-locks"
    assert db.is_file() and any(locks.iterdir())
    os.chmod(db, 0o666)
    for p in [locks, *locks.rglob("*")]:
        os.chmod(p, 0o777)
    main(["doctor", "--root", str(repo), "--json"])
    check = next(c for c in json.loads(capsys.readouterr().out)["checks"] if c["name"] == "runtime_modes")
    assert check["status"] == "warning", check
    assert "memzoi-lsp-resident.db (0666)" in check["message"] and "resident-locks (0777)" in check["message"]
    assert cli("resident", "list")[0] == 0  # any resident command tightens the database and every lock folder
    assert {name: oct(mode) for name, mode in modes(home).items() if mode & 0o077} == {}
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert next(c for c in report["checks"] if c["name"] == "runtime_modes")["status"] == "ok"


def test_schema_2_ledger_loses_stored_secrets_on_first_open(tmp_path):
    db = tmp_path / "rt" / LEDGER_DB
    db.parent.mkdir()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(
        L.store._SCHEMA.replace(
            "    before_digest TEXT,\n    before_size INTEGER,\n    after_digest TEXT,\n    after_size INTEGER,\n", ""
        )
    )
    conn.execute("PRAGMA user_version=2")  # the schema before digests
    secret = f"---\ntitle: x\n---\n\n# x\n\n{BODY}".encode()
    conn.execute(
        "INSERT INTO change (id, operation, actor, source, status, created_at, updated_at) VALUES "
        "('chg_1', 'reject', 'r', 'cli', 'applied', 't', 't')"
    )
    conn.execute(
        "INSERT INTO change_file (change_id, idx, path, before, after) VALUES ('chg_1', 0, 'p.md', ?, NULL)", (secret,)
    )
    conn.execute(
        "INSERT INTO change_file (change_id, idx, path, before, after) VALUES ('chg_1', 1, 'q.md', NULL, ?)",
        (b"plain text\n",),
    )
    conn.close()
    ledger = L.Ledger(db)
    with ledger.connect() as c:
        files = ledger.get(c, "chg_1").files
    assert files[0].before == secret and isinstance(files[0].before, L.Purged)
    assert files[1].after == b"plain text\n" and not isinstance(files[1].after, L.Purged)
    assert leaks(tmp_path) == []
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600


def test_index_masks_a_secret_in_any_field(repo, capsys):
    """Not only title and body: tags, origin and every other text column lose the detected value."""
    home = Path(os.environ["MEMZOI_HOME"])
    rec = repo / ".memzoi" / "records" / "rust-msrv-is-1-96-1.md"
    text = rec.read_text(encoding="utf-8")
    token = PLANTED["bearer token"]
    text = (
        text.replace("origin:\n", f'tags:\n  - "{PLANTED["postgres password"]}"\norigin:\n', 1)
        if "tags:" not in text
        else text.replace("tags:\n", f'tags:\n  - "{PLANTED["postgres password"]}"\n', 1)
    )
    assert "  origin_key: " in text
    text = re.sub(r"  origin_key: .*", f'  origin_key: "Bearer {token}"', text, count=1)
    rec.write_text(text, encoding="utf-8")
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    assert leaks(home) == []
    from memzoi.stores.index import Index

    with Index(repo) as index:
        row = index.record("rust-msrv-is-1-96-1")
    assert row is not None and "[redacted]" in (row["tags"] or "") and "[redacted]" in (row["origin_json"] or "")


@pytest.mark.parametrize("how", ["anchored", "escaped"])
def test_index_masks_a_value_found_only_as_its_own_text(repo, capsys, how):
    """A value Memzoi's rule matches only as its own text (a name=value at its start, or written with escapes) is
    reported over its scalar; the index still never holds its decoded text."""
    home = Path(os.environ["MEMZOI_HOME"])
    rec = repo / ".memzoi" / "records" / "rust-msrv-is-1-96-1.md"
    value = "SERVICE_TOK" + "EN=" + PLANTED["bearer token"]
    scalar = json.dumps(value) if how == "anchored" else '"\\u0053' + value[1:] + '"'
    text = re.sub(
        r"^source_ref: .*$", lambda _: f"source_ref: {scalar}", rec.read_text(encoding="utf-8"), count=1, flags=re.M
    )
    assert scalar in text
    rec.write_text(text, encoding="utf-8")
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    assert leaks(home) == []
    from memzoi.stores.index import Index

    with Index(repo) as index:
        row = index.record("rust-msrv-is-1-96-1")
    assert row is not None and row["source_ref"] == "[redacted]"


def test_exports_are_private_and_rebuild_makes_loose_ones_private(repo, capsys):
    """`memzoi export` writes its projections 0600 whatever the umask, so doctor's runtime_modes stays ok; an
    export an earlier version left readable is made private by `memzoi rebuild`, as doctor's next step says."""
    old = os.umask(0o022)
    try:
        assert run(capsys, "export", "--root", str(repo)) == 0
    finally:
        os.umask(old)
    exports = project_runtime_dir(repo).rglob("exports/*.memory.md")
    files = sorted(exports)
    assert len(files) == 2 and {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert next(c for c in report["checks"] if c["name"] == "runtime_modes")["status"] == "ok"
    for p in files:
        os.chmod(p, 0o644)
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    check = next(c for c in report["checks"] if c["name"] == "runtime_modes")
    assert check["status"] == "warning" and "(0644)" in check["message"]
    assert any("memzoi rebuild" in step for step in report["next_steps"])
    assert run(capsys, "rebuild", "--root", str(repo)) == 0
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert next(c for c in report["checks"] if c["name"] == "runtime_modes")["status"] == "ok"
