"""A runtime directory that is full, read-only, not ours to write, or holds a damaged database: every command that
uses it answers with one line naming the database or folder and what to do (``{"error": {"code", "message"}}`` on
stdout with ``--json``), exit 1: never "internal error", never a bare stderr line under ``--json``.

Faults are simulated without root or mounts: SQLite's own errors (with their result codes) from a patched
``sqlite3.connect``, the OS's from ``os.open``/``os.mkdir`` for paths under the memzoi home, and the file system's
state from ``os.statvfs``/``os.access``; a damaged database is a real file of garbage.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import urllib.parse
from pathlib import Path

import pytest

from memzoi.base.runtime_errors import CAUSES, classify, file_system_problem, runtime_error
from memzoi.cli.main import main

from .conftest import PENDING

TARGET = "semantic/decisions/auth-client-validation"
PROPOSAL = "mem_2026_07_06_auth_001"
#: fault → the code every command reports
CODES = {
    "enospc": "disk_full",
    "erofs": "read_only_file_system",
    "eacces": "permission_denied",
    "corrupt": "corrupt_database",
}
# SQLite's result codes and texts, as a real failure carries them.
_SQLITE = {
    "enospc": (13, "database or disk is full"),
    "erofs": (14, "unable to open database file"),
    "eacces": (14, "unable to open database file"),
}
_ERRNO = {"enospc": errno.ENOSPC, "erofs": errno.EROFS, "eacces": errno.EACCES}


def sqlite_error(kind: str) -> sqlite3.OperationalError:
    code, text = _SQLITE[kind]
    err = sqlite3.OperationalError(text)
    err.sqlite_errorcode = code
    return err


class Fault:
    """Patches that make the memzoi home ``home`` behave as full, read-only or unwritable."""

    def __init__(self, kind: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kind, self.home = kind, str(home)
        real_connect, real_open, real_mkdir = sqlite3.connect, os.open, os.mkdir
        real_statvfs, real_access = os.statvfs, os.access
        writing = os.O_CREAT | os.O_WRONLY | os.O_RDWR

        def under(path) -> bool:
            return os.path.abspath(os.fsdecode(path)).startswith(self.home)

        def connect(path, *a, **k):
            if k.get("uri") and os.fspath(path).startswith("file:"):
                return read_only_open(path, *a, **k)
            if under(path):
                if kind == "enospc":  # opens, then every statement fails, as on a full disk
                    return _Failing(real_connect(path, *a, **k), lambda: sqlite_error(kind))
                raise sqlite_error(kind)
            return real_connect(path, *a, **k)

        def read_only_open(target, *a, **k):
            """SQLite's rule for a read-only open (https://sqlite.org/wal.html, "Read-Only Databases"): where the
            folder cannot be written, ``mode=ro`` opens only while the ``-shm`` exists; ``immutable=1`` always."""
            file, _, query = os.fspath(target).removeprefix("file://").partition("?")
            path = urllib.parse.unquote(file)
            if under(path) and kind in ("erofs", "eacces") and "immutable=1" not in query:
                if not os.path.exists(path + "-shm"):
                    raise sqlite_error(kind)
            return real_connect(target, *a, **k)

        def open_(path, flags, *a, **k):
            if under(path) and flags & writing and (kind != "enospc" or not os.path.exists(path)):
                raise OSError(_ERRNO[kind], os.strerror(_ERRNO[kind]), os.fsdecode(path))
            return real_open(path, flags, *a, **k)

        def mkdir(path, *a, **k):
            if under(path) and not os.path.isdir(path):
                raise OSError(_ERRNO[kind], os.strerror(_ERRNO[kind]), os.fsdecode(path))
            return real_mkdir(path, *a, **k)

        def statvfs(path):
            st = real_statvfs(path)
            if not under(path):
                return st
            fields = list(st)
            if kind == "erofs":
                fields[8] |= os.ST_RDONLY  # f_flag
            if kind == "enospc":
                fields[4] = 0  # f_bavail
            return os.statvfs_result(fields)

        def access(path, mode, *a, **k):
            if kind == "eacces" and under(path) and mode & os.W_OK:
                return False
            return real_access(path, mode, *a, **k)

        for obj, name, fn in [
            (sqlite3, "connect", connect),
            (os, "open", open_),
            (os, "mkdir", mkdir),
            (os, "statvfs", statvfs),
            (os, "access", access),
        ]:
            monkeypatch.setattr(obj, name, fn)


class _Failing:
    """A connection whose statements all fail with ``make()``."""

    def __init__(self, conn: sqlite3.Connection, make) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_make", make)

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def __setattr__(self, name, value):
        setattr(self._conn, name, value)

    def _fail(self, *args, **kwargs):
        raise self._make()

    execute = executemany = executescript = _fail


def corrupt(home: Path) -> None:
    for db in home.rglob("*.db"):
        for companion in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            companion.unlink(missing_ok=True)
        db.write_bytes(b"this is not an SQLite database\n" * 200)


@pytest.fixture
def used(repo, capsys):
    """The seeded repository after a change, a rebuild and a resident listing: ledger, index and resident
    database exist. Returns ``(root, home, change id)``."""

    def run(*argv):
        capsys.readouterr()
        code = main([*argv, "--root", str(repo), "--json"])
        return code, capsys.readouterr().out

    code, out = run("tombstone", TARGET, "--reason", "obsolete")
    assert code == 0, out
    assert run("rebuild")[0] == 0
    assert run("resident", "list")[0] == 0
    home = Path(os.environ["MEMZOI_HOME"])
    assert {p.name for p in home.rglob("*.db")} >= {
        "memzoi-lsp-ledger.db",
        "memzoi-lsp-store.db",
        "memzoi-lsp-resident.db",
    }
    return repo, home, json.loads(out)["change_id"]


COMMANDS = [
    ("rebuild",),
    ("search", "auth"),
    ("history",),
    ("reconcile",),
    ("undo", "{cid}"),
    ("proposals", "apply", PROPOSAL),
    ("proposals", "reject", PROPOSAL, "--reason", "no"),
    ("supersede", TARGET, "--title", "New", "--body", "Newer guidance.", "--reason", "newer"),
    ("local", "list"),
    ("resident", "list"),
]


def _apply(kind: str, home: Path, monkeypatch) -> None:
    if kind == "corrupt":
        corrupt(home)
    else:
        Fault(kind, home, monkeypatch)


#: Reads that answer from a home they cannot write (tests/lifecycle/test_readonly_home.py,
#: tests/resident/test_readonly_home.py): command → the failures it answers under. The ledger's and the resident
#: candidates' reads need no write access; a search makes a private index where the home cannot be written (not
#: on a full disk, where the temporary folder may be full too).
UNWRITABLE = {"erofs", "eacces"}
ANSWERS = {
    ("history",): {"enospc", *UNWRITABLE},
    ("local", "list"): {"enospc", *UNWRITABLE},
    ("resident", "list"): {"enospc", *UNWRITABLE},
    ("search", "auth"): UNWRITABLE,
}


def _cases(commands):
    """(argv, kind) pairs: every command under every failure, except rebuild of a damaged index, which replaces it
    (test_rebuild_replaces_a_damaged_index), and the reads of :data:`ANSWERS` under the failures they answer."""
    return [
        pytest.param(argv, kind, id=f"{' '.join(argv[:2])}-{kind}")
        for argv in commands
        for kind in CODES
        if not (argv == ("rebuild",) and kind == "corrupt") and kind not in ANSWERS.get(argv, set())
    ]


@pytest.mark.parametrize(("argv", "kind"), _cases(COMMANDS))
def test_every_command_names_the_runtime_failure_as_json(used, kind, argv, monkeypatch, capsys):
    root, home, cid = used
    _apply(kind, home, monkeypatch)
    capsys.readouterr()
    code = main([*(a.format(cid=cid) for a in argv), "--root", str(root), "--json"])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    error = json.loads(out)["error"]
    assert error["code"] == CODES[kind], error
    assert str(home) in error["message"] and "internal" not in error["message"], error
    assert "internal error" not in err


@pytest.mark.parametrize(("argv", "kind"), _cases(COMMANDS[:4]))
def test_without_json_it_is_one_line_on_stderr(used, kind, argv, monkeypatch, capsys):
    root, home, _ = used
    _apply(kind, home, monkeypatch)
    capsys.readouterr()
    code = main([*argv, "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"memzoi: {CODES[kind]}: ") and str(home) in lines[0], err
    # the code already says the cause the message starts with (runtime_errors.CAUSES): not said twice in a row
    assert not lines[0].startswith(f"memzoi: {CODES[kind]}: {CAUSES[CODES[kind]]}: "), err
    advice = {
        "disk_full": "free some space",
        "read_only_file_system": "read-only file system",
        "permission_denied": "permission denied",
        "corrupt_database": "is damaged",
    }[CODES[kind]]
    assert advice in lines[0]


def test_rebuild_replaces_a_damaged_index(used, capsys):
    """The index is disposable: `memzoi rebuild` removes a damaged one and makes it anew; a damaged ledger
    (which holds the change history) is never removed, and the command that needs it still names it."""
    root, home, _ = used
    corrupt(home)
    index_db, ledger_db = next(home.rglob("memzoi-lsp-store.db")), next(home.rglob("memzoi-lsp-ledger.db"))
    damaged_ledger = ledger_db.read_bytes()
    capsys.readouterr()
    assert main(["search", "auth", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memzoi: corrupt_database: ") and "run `memzoi rebuild`" in err, err
    assert main(["rebuild", "--root", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["record_ids"]
    with sqlite3.connect(index_db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    assert ledger_db.read_bytes() == damaged_ledger
    assert main(["history", "--root", str(root), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "corrupt_database"


def test_rebuild_on_a_fresh_full_home_names_the_folder(repo, monkeypatch, capsys, tmp_path):
    home = tmp_path / "full-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    Fault("enospc", home, monkeypatch)
    for argv in (["rebuild"], ["tombstone", TARGET, "--reason", "r"], ["resident", "list"]):
        capsys.readouterr()
        assert main([*argv, "--root", str(repo), "--json"]) == 1
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "disk_full" and str(home) in error["message"], (argv, error)
    assert not (repo / PENDING / "tombstone-semantic-decisions-auth-client-validation.md").exists()


@pytest.mark.parametrize("kind", list(CODES))
def test_doctor_reports_the_index_failure_as_a_check(used, kind, monkeypatch, capsys):
    root, home, _ = used
    _apply(kind, home, monkeypatch)
    capsys.readouterr()
    main(["doctor", "--root", str(root), "--json"])
    report = json.loads(capsys.readouterr().out)
    check = next(c for c in report["checks"] if c["name"] == "index")
    assert check["status"] == "warning" and "memzoi-lsp-store.db" in check["message"], check
    assert report["next_steps"]


def test_classification_of_sqlite_and_os_errors(tmp_path, monkeypatch):
    db = tmp_path / "x.db"
    assert classify(OSError(errno.ENOSPC, "full"), db) == "disk_full"
    assert classify(OSError(errno.EROFS, "ro"), db) == "read_only_file_system"
    assert classify(OSError(errno.EACCES, "denied"), db) == "permission_denied"
    assert classify(sqlite3.DatabaseError("file is not a database"), db) == "corrupt_database"
    assert classify(sqlite3.DatabaseError("database disk image is malformed"), db) == "corrupt_database"
    assert classify(sqlite3.OperationalError("database is locked"), db) == "database_busy"
    assert classify(sqlite3.OperationalError("no such table: x"), db) == "runtime_unavailable"
    assert file_system_problem(db) is None
    # An ambiguous SQLite error is named from the file system: a disk I/O error on a full disk is a full disk.
    Fault("enospc", tmp_path, monkeypatch)
    assert classify(sqlite3.OperationalError("disk I/O error"), db) == "disk_full"
    state = runtime_error(sqlite3.OperationalError("disk I/O error"), db, "index")
    assert state.code == "disk_full" and str(db) in state.message and "free some space" in state.advice


@pytest.mark.parametrize("kind", list(CODES))
def test_proposals_list_still_lists_when_the_index_cannot_be_used(used, kind, monkeypatch, capsys):
    """What is pending is on disk: a broken runtime directory costs the index, not the listing (its cross-file
    facts are read from the files), and stderr says why; a home that cannot be written gets a private index
    (memzoi.stores.readindex), so nothing is missing and nothing is said."""
    root, home, _ = used
    capsys.readouterr()
    assert main(["proposals", "list", "--root", str(root), "--json"]) == 0
    before = json.loads(capsys.readouterr().out)["proposals"]
    _apply(kind, home, monkeypatch)
    code = main(["proposals", "list", "--root", str(root), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, (out, err)
    # the client a packet came through is a ledger fact: with the runtime directory broken it is unknown
    assert [{**p, "proposed_via": None} for p in json.loads(out)["proposals"]] == [
        {**p, "proposed_via": None} for p in before
    ] and before
    if kind in UNWRITABLE:
        assert "cross-file facts" not in err, err
    else:
        assert "cross-file facts are read from the files" in err and str(home) in err


@pytest.mark.parametrize(
    ("err", "cause"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "disk full: "),
        (OSError(errno.EROFS, "Read-only file system"), "read-only file system: "),
        (OSError(errno.EACCES, "Permission denied"), "permission denied: "),
        (sqlite3.DatabaseError("file is not a database"), "damaged database: "),
        (OSError(errno.EIO, "Input/output error"), "disk I/O error: "),
    ],
)
def test_a_runtime_error_gives_its_cause_before_the_path(tmp_path, err, cause):
    """newuser5 D9: a one-line display (Neovim's command line) cut the message inside the long runtime path, before
    "is full" or "read-only file system" was seen."""
    path = tmp_path / ("deep-folder-" * 6) / "memzoi-lsp-ledger.db"
    message = runtime_error(err, path, "ledger").message
    assert message.startswith(cause), message
    assert message.index(str(path)) > len(cause)
