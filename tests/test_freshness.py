"""The one freshness rule (:mod:`memzoi.base.freshness`) as ``memzoi check`` and ``check FILE`` use it through the
verdict cache: each change below invalidates exactly the edited file, the cached report is byte for byte the
``--no-cache`` one, and a credential planted by an edit that keeps the stat is always reported.

The racy window is closed and no entry is drawn for a re-hash unless a test says otherwise, so what decides is the
rule under test. File systems whose ctime follows the mtime (sshfs, FAT) are simulated: the file-system type probe
is replaced and the stat made to lie as such a mount's would.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.base import freshness

from .builders import edit
from .test_admission import git, rec
from .test_verdict_cache import cli, counts  # noqa: F401 - fixture

PAD = "x" * 40


@pytest.fixture(autouse=True)
def entries_only(monkeypatch):
    """These tests are about the store's entries: every run judges (a whole report's replay, which would answer
    before any entry is read, is tested in ``tests/test_replay.py``)."""
    from memzoi.runs import check as _check

    monkeypatch.setattr(_check, "replayed", lambda *a, **k: None)


def token() -> str:
    """A credential-shaped value of 40 characters, assembled at run time (never printed)."""
    return "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"


@pytest.fixture
def closed(monkeypatch):
    """Racy window closed, no sampling, a file system that keeps its ctime (a test may replace the type)."""
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    for rid in ("alpha", "beta", "gamma"):
        (records / f"{rid}.md").write_text(edit(rec(rid), f"Body text of {rid}", f"Body text of {rid} {PAD}"))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def planted(path: Path) -> bytes:
    """``path``'s bytes with the padding replaced by the credential: same size."""
    old = path.read_bytes()
    new = old.replace(PAD.encode(), token().encode())
    assert new != old and len(new) == len(old)
    return new


def keep_stat_edit(path: Path) -> None:
    """Write ``path`` again with the same size and put its mtime back (as ``rsync -t`` and ``cp -p`` do)."""
    st = path.stat()
    path.write_bytes(planted(path))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def lying_stat(monkeypatch, path: Path) -> None:
    """From now on the stat of ``path`` shows the stamp it has now, whatever is written (as a mount whose ctime
    follows the mtime shows it after an edit that puts the mtime back)."""
    real = freshness.lstat
    fixed = real(str(path))
    monkeypatch.setattr(freshness, "lstat", lambda p: fixed if p == str(path) else real(p))


def reported(capsys, target: Path, *extra: str) -> str:
    """The cached report, asserted byte-identical to ``--no-cache``'s."""
    base = cli(capsys, "check", str(target), "--format", "json", "--no-cache", *extra)
    got = cli(capsys, "check", str(target), "--format", "json", *extra)
    assert got == base
    return got[1]


def test_file_system_types():
    assert freshness.lacks_ctime("fuse.sshfs") and freshness.lacks_ctime("fuseblk") and freshness.lacks_ctime("vfat")
    assert freshness.lacks_ctime("nfs4") and freshness.lacks_ctime("exfat") and freshness.lacks_ctime("9p")
    assert not freshness.lacks_ctime("ext4") and not freshness.lacks_ctime("btrfs")


def test_the_type_of_this_test_folder_is_read_from_mountinfo(tmp_path):
    if not os.path.exists("/proc/self/mountinfo"):
        pytest.skip("no /proc/self/mountinfo on this system")
    (tmp_path / "f").write_bytes(b"x")
    st = freshness.lstat(tmp_path / "f")
    assert st is not None and freshness.fs_type(st.dev) != ""


@pytest.mark.parametrize(
    "kind,mtime,ctime,kept",
    [
        ("ext4", 5, 5, True),
        ("xfs", 5, 9, True),  # a known type decides, whatever the file shows
        ("fuse.sshfs", 5, 9, False),
        ("vfat", 5, 5, False),
        ("nfs", 5, 9, False),
        ("somefs", 5, 9, True),
        ("somefs", 5, 5, False),  # unknown: only a ctime apart from the mtime shows one is kept
    ],
)
def test_ctime_kept(monkeypatch, kind, mtime, ctime, kept):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    assert freshness.ctime_kept(freshness.Stat((1, mtime, 1, ctime), 0)) is kept


def test_an_entry_older_than_the_trust_age_is_always_hashed(monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    now = 10 * freshness.MAX_TRUST_NS
    assert not freshness.due(now - freshness.MAX_TRUST_NS + 1, now)
    assert freshness.due(now - freshness.MAX_TRUST_NS - 1, now)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
    assert freshness.due(now, now)


def test_a_read_that_confirms_the_bytes_gains_a_restamp_only_where_the_stat_then_vouches_more():
    """:func:`memzoi.base.freshness.restamp_gains`: a new stamp, a stored stamp that was racy, or one confirmed more
    than half the trust age ago is worth writing again; the same stamp read again (a file drawn for a re-hash, a
    file system that hashes every time) is not."""
    stamp, now = (10, 1_000, 7, 1_000), 10 * freshness.MAX_TRUST_NS
    old = now - freshness.MAX_TRUST_NS // 4
    assert not freshness.restamp_gains(stamp, old, stamp, now)
    assert not freshness.restamp_gains(list(stamp), old, stamp, now)  # as a stored report keeps it
    assert freshness.restamp_gains(stamp, old, (10, 1_000, 8, 1_000), now)  # another inode
    assert freshness.restamp_gains(stamp, old, (10, 1_000, 7, 2_000), now)  # another ctime
    assert freshness.restamp_gains(stamp, 1_000 + freshness.RACY_NS // 2, stamp, now)  # stored racy
    assert freshness.restamp_gains(stamp, now - freshness.MAX_TRUST_NS // 2 - 1, stamp, now)  # getting old


# --- check and check FILE -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("one_file", [False, True], ids=["check", "check-FILE"])
def test_an_edit_keeping_size_and_mtime_on_ext4_is_seen(repo, capsys, counts, closed, one_file):
    path = repo / ".memzoi/records/beta.md"
    target = path if one_file else repo / ".memzoi"
    assert token() not in reported(capsys, target)
    keep_stat_edit(path)  # ext4 sets the ctime to now: the stamp changes
    counts.reset()
    out = reported(capsys, target)
    assert "credential_token" in out and token() not in out
    assert counts["analysed"] == (1 if one_file else 3) + 1  # without the cache every file; with it, beta only


@pytest.mark.parametrize("kind", ["fuse.sshfs", "vfat", "exfat"])
@pytest.mark.parametrize("one_file", [False, True], ids=["check", "check-FILE"])
def test_an_edit_keeping_the_stat_where_ctime_follows_mtime_is_seen(
    repo, capsys, counts, closed, monkeypatch, kind, one_file
):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    path = repo / ".memzoi/records/beta.md"
    target = path if one_file else repo / ".memzoi"
    reported(capsys, target)
    lying_stat(monkeypatch, path)
    keep_stat_edit(path)
    counts.reset()
    out = reported(capsys, target)
    assert "credential_token" in out and token() not in out
    assert counts["analysed"] == (1 if one_file else 3) + 1


def test_a_lying_stat_on_a_file_system_with_ctime_is_caught_by_the_sample(repo, capsys, counts, closed, monkeypatch):
    path = repo / ".memzoi/records/beta.md"
    reported(capsys, repo / ".memzoi")
    lying_stat(monkeypatch, path)
    path.write_bytes(planted(path))
    # Trusted by stat (the test's rule): the cached report misses it ...
    assert (
        cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")[1]
        != cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")[1]
    )
    # ... until the entry is drawn for a re-hash.
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
    assert "credential_token" in reported(capsys, repo / ".memzoi")


def test_an_edit_within_the_racy_window_is_seen(repo, capsys, counts, monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    path = repo / ".memzoi/records/beta.md"
    reported(capsys, repo / ".memzoi")
    lying_stat(monkeypatch, path)  # the same tick: stat shows nothing
    path.write_bytes(planted(path))
    counts.reset()
    assert "credential_token" in reported(capsys, repo / ".memzoi")
    assert counts["analysed"] == 3 + 1


def test_a_rename_over_the_file_is_seen(repo, capsys, counts, closed):
    path = repo / ".memzoi/records/beta.md"
    reported(capsys, repo / ".memzoi")
    st = path.stat()
    other = repo / "beta.tmp"
    other.write_bytes(planted(path))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, path)
    counts.reset()
    assert "credential_token" in reported(capsys, repo / ".memzoi")
    assert counts["analysed"] == 3 + 1


def test_an_edit_through_a_hard_link_is_seen(repo, capsys, counts, closed):
    path = repo / ".memzoi/records/beta.md"
    link = repo / "beta-link"
    os.link(path, link)
    reported(capsys, repo / ".memzoi")
    st = link.stat()
    with open(link, "r+b") as fh:
        fh.write(planted(path))
    os.utime(link, ns=(st.st_atime_ns, st.st_mtime_ns))
    counts.reset()
    assert "credential_token" in reported(capsys, repo / ".memzoi")
    assert counts["analysed"] == 3 + 1


# --- the tool stamp -------------------------------------------------------------------------------------------------


def _package(tmp_path: Path) -> Path:
    top = tmp_path / "pkg"
    (top / "sub").mkdir(parents=True)
    (top / "a.py").write_text("SEVERITY = 'error'\n")
    (top / "sub/b.py").write_text("X = 1\n")
    (top / "notes.txt").write_text("not code")
    return top


@pytest.mark.parametrize("kind", ["ext4", "fuse.sshfs"])
def test_the_tool_stamp_follows_a_code_change_under_the_same_version_and_mtime(tmp_path, closed, monkeypatch, kind):
    from memzoi.stores import toolstamp

    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    top = _package(tmp_path)
    store = tmp_path / "home/stamp.json"
    first = toolstamp.source_digest(str(top), store)
    assert store.is_file() and toolstamp.source_digest(str(top), store) == first
    (top / "notes.txt").write_text("other words")
    assert toolstamp.source_digest(str(top), store) == first  # not code
    path = top / "a.py"
    st = path.stat()
    if kind != "ext4":  # a mount whose ctime follows the mtime: the stat shows nothing of the edit
        fixed = freshness.lstat(path)
        real = freshness.lstat
        monkeypatch.setattr(freshness, "lstat", lambda p: fixed if str(p) == str(path) else real(p))
    path.write_text("SEVERITY = 'note'\n")  # the same size, the mtime put back (a clamped, reproducible install)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = toolstamp.source_digest(str(top), store)
    assert second != first and second == toolstamp.source_digest(str(top), None)


def test_the_tool_stamp_survives_a_damaged_digest_file(tmp_path, closed):
    from memzoi.stores import toolstamp

    top = _package(tmp_path)
    store = tmp_path / "stamp.json"
    first = toolstamp.source_digest(str(top), None)
    for junk in ("{broken", "[1, 2]", json.dumps({"/a.py": [1, 2, 3, 4, 5, "00"]})):
        store.write_text(junk)
        assert toolstamp.source_digest(str(top), store) == first


def test_a_kept_digest_of_the_wrong_types_is_hashed_again(tmp_path, closed):
    """An item of the digest file whose stamp and digest are right but whose clock is not a number is damaged: the
    file is hashed again and the item written anew, never compared as a clock."""
    import blake3

    from memzoi.stores import toolstamp

    top = _package(tmp_path)
    store = tmp_path / "stamp.json"
    first = toolstamp.source_digest(str(top), None)
    path = top / "a.py"
    stat = freshness.lstat(path)
    assert stat is not None
    digest = blake3.blake3(path.read_bytes()).hexdigest()
    store.write_text(json.dumps({"/a.py": [*stat.stamp, "later", digest]}))
    assert toolstamp.source_digest(str(top), store) == first
    kept = json.loads(store.read_text())["/a.py"]
    assert kept[:4] == list(stat.stamp) and isinstance(kept[4], int) and kept[5] == digest


def test_a_code_change_under_the_same_version_invalidates_check_and_the_index(
    repo, capsys, counts, closed, monkeypatch
):
    from memzoi.stores import toolstamp

    reported(capsys, repo / ".memzoi")
    toolstamp.tool_stamp.cache_clear()
    monkeypatch.setattr(toolstamp, "source_digest", lambda top, store=None: "another build of the same version")
    counts.reset()
    reported(capsys, repo / ".memzoi")
    assert counts["analysed"] == 3 + 3
    toolstamp.tool_stamp.cache_clear()


# --- checksums ------------------------------------------------------------------------------------------------------


def _cache_db() -> Path:
    from memzoi.base.runtime import STORE_DB

    return sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))[0]


def test_a_tampered_payload_is_a_miss_never_a_verdict(repo, capsys, counts, closed):
    import sqlite3

    path = repo / ".memzoi/records/beta.md"
    path.write_text(edit(path.read_text(), "status: active", "status: bogus"))
    base = reported(capsys, repo / ".memzoi")
    assert "invalid_value" in base
    with sqlite3.connect(_cache_db()) as conn:  # a well-formed payload with its findings taken out
        for key, payload in conn.execute("SELECT key, payload FROM entries").fetchall():
            value = json.loads(payload)
            value[4] = []
            conn.execute("UPDATE entries SET payload = ? WHERE key = ?", (json.dumps(value), key))
    counts.reset()
    assert reported(capsys, repo / ".memzoi") == base
    assert counts["analysed"] == 3 + 3  # every entry was a miss
    counts.reset()
    assert reported(capsys, repo / ".memzoi") == base and counts["analysed"] == 3  # and was written again


@pytest.mark.parametrize("column", ["digest", "ino", "checked_ns"])
def test_a_damaged_column_is_a_miss(repo, capsys, counts, closed, column):
    import sqlite3

    base = reported(capsys, repo / ".memzoi")
    value = {"digest": "x'00'", "ino": "ino + 1", "checked_ns": "checked_ns + 1"}[column]
    with sqlite3.connect(_cache_db()) as conn:
        conn.execute(f"UPDATE entries SET {column} = {value}")
    counts.reset()
    assert reported(capsys, repo / ".memzoi") == base
    assert counts["analysed"] == 3 + 3


def test_tampered_facts_are_not_used(repo, capsys, closed):
    import sqlite3

    from memzoi.stores.verdictpayload import payload_facts

    reported(capsys, repo / ".memzoi")
    with sqlite3.connect(_cache_db()) as conn:
        for key, payload in conn.execute("SELECT key, payload FROM entries").fetchall():
            facts = payload_facts(payload)
            tampered = payload.replace(json.dumps(facts[2]), '"someone-else"')  # every file's id
            assert tampered != payload
            conn.execute("UPDATE entries SET payload = ? WHERE key = ?", (tampered, key))
    assert reported(capsys, repo / ".memzoi/records/beta.md")  # check FILE: the others' facts not taken from them


# --- the ledger -----------------------------------------------------------------------------------------------------


def pending_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project (the working directory from here on) with one pending create packet, ``mem-apply``, to apply
    as a ledgered change; its root."""
    from .lsp.conftest import git_init, proposal_text

    root = tmp_path / "ws"
    pending = root / ".memzoi/proposals/pending"
    pending.mkdir(parents=True)
    (root / ".memzoi/records").mkdir()
    (pending / "mem-apply.md").write_text(proposal_text("mem-apply", title="Apply me"))
    git_init(root)
    monkeypatch.chdir(root)
    return root


def test_a_ledger_change_is_seen_by_the_cached_check(tmp_path, capsys, counts, closed, monkeypatch):
    root = pending_apply(tmp_path, monkeypatch)
    before = reported(capsys, root / ".memzoi")
    capsys.readouterr()
    assert main_json(capsys, "proposals", "apply", "mem-apply", "--json")[0] == 0  # one ledgered change
    counts.reset()
    after = reported(capsys, root / ".memzoi")
    assert after != before
    created = sorted((root / ".memzoi/records").rglob("*.md"))
    assert created
    created[0].write_text(created[0].read_text() + "\nEdited by hand.\n")  # the ledger now disagrees
    assert "ledger_drift" in reported(capsys, root / ".memzoi")


def main_json(capsys, *argv: str) -> tuple[int, str]:
    from memzoi.cli.main import main

    code = main(list(argv))
    return code, capsys.readouterr().out
