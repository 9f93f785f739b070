"""Private cache files written whole (:mod:`memzoi.base.privatewrite`): a killed writer's temporary file is removed
by the next write of the same cache family, a live writer's never, and writers in several processes never leave a
torn file."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings, strategies as st

from memzoi.base import privatewrite
from memzoi.base.privatewrite import sweep_temps, temp_path, write_private

#: A writer that stops before its rename (prints its temporary file's path, renames once a line comes in).
WRITER = r"""
import os, sys
from pathlib import Path
from memzoi.base import privatewrite

real = os.replace

def held(src, dst):
    print(src, flush=True)
    sys.stdin.readline()
    real(src, dst)

os.replace = held
print(privatewrite.write_private(Path(sys.argv[1]), b"from the child" * 100, family="fam-"), flush=True)
"""

#: Writes ``argv[2]`` payloads to ``argv[1]``, each its own header, bytes and checksum.
MANY = r"""
import hashlib, os, sys
from pathlib import Path
from memzoi.base.privatewrite import write_private

for i in range(int(sys.argv[2])):
    body = f"{os.getpid()}:{i}:".encode() + bytes([i % 251]) * (20_000 + 997 * i)
    assert write_private(Path(sys.argv[1]), body + hashlib.blake2b(body, digest_size=16).digest(), family="fam-")
"""


def _old(path: Path, seconds: float) -> None:
    """Set ``path``'s modification time ``seconds`` back."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def dead_pid() -> int:
    """A process id no process holds now or later in the run: one past the kernel's largest (a finished child's id
    is given out again once the ids wrap, which a long run of many processes does: 32,768 here)."""
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    except (OSError, ValueError):  # no procfs: a child that has ended (its id may come back only after a wrap)
        proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        return int(proc.stdout)


def _writer(target: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_write_is_private_and_whole_and_leaves_no_temporary_file(tmp_path: Path):
    target = tmp_path / "fam-a.json"
    assert write_private(target, b"one")
    assert write_private(target, b"two")
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["fam-a.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path):
    target = tmp_path / "fam-a.json"
    target.write_bytes(b"old")
    (tmp_path / "fam-b.json").mkdir()  # os.replace of a file over a folder fails
    assert not write_private(tmp_path / "fam-b.json", b"new")
    assert not write_private(tmp_path / "absent" / "fam-c.json", b"new")
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["fam-a.json", "fam-b.json"]


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path: Path):
    target = tmp_path / "fam-a.json"
    proc, tmp = _writer(target)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert tmp.exists()  # nothing could remove it at the kill
    assert write_private(tmp_path / "fam-b.json", b"another cache of the family", family="fam-")
    assert not tmp.exists()
    assert not target.exists()


def test_a_live_writers_temporary_file_is_kept_and_its_write_completes(tmp_path: Path):
    target = tmp_path / "fam-a.json"
    proc, tmp = _writer(target)
    try:
        _old(tmp, 2 * privatewrite.STALE_NS / 1e9)  # however old: its lock is held
        assert write_private(target, b"mine")
        assert sweep_temps(tmp_path, "fam-") == []
        assert tmp.exists()
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "True"
        proc.wait()
    assert target.read_bytes() == b"from the child" * 100
    assert sorted(os.listdir(tmp_path)) == ["fam-a.json"]


def test_unlocked_names_are_judged_by_their_writers_process_and_age(tmp_path: Path):
    dead, me = dead_pid(), os.getpid()
    names = {
        # earlier versions' names (never locked): a dead writer's goes once past the grace, a live one's stays
        f".fam-a.marshal.{dead}.tmp": (60, False),
        f"fam-b.json.{dead}.tmp": (60, False),
        f".fam-c.json.{dead}.tmp": (1, True),  # just written: within the grace
        f".fam-d.json.{me}.tmp": (60, True),
        f".fam-e.json.{me}.tmp": (2 * privatewrite.STALE_NS / 1e9, False),  # a pid used again: the age decides
        # this version's names, lock free: empty ones only within the grace (made, not yet locked)
        f".fam-f.json.{me}.0123abcd.tmp": (0, False),  # holds a byte: its writer would hold its lock
        ".fam-g.json.1.89abcdef.tmp": (60, False),
        # not the family's, or not a temporary name
        f".other-a.json.{dead}.tmp": (60, True),
        f".fam-h.json.{dead}.0123abcd.txt": (60, True),
        f".fam-i.json.x{dead}.tmp": (60, True),
        "fam-j.json": (60, True),
    }
    for name, (age, _) in names.items():
        (tmp_path / name).write_bytes(b"" if name.startswith(".fam-c") else b"partial")
        _old(tmp_path / name, age)
    empty = tmp_path / f".fam-k.json.{me}.01234567.tmp"
    empty.write_bytes(b"")
    assert sorted(sweep_temps(tmp_path, "fam-")) == sorted(n for n, (_, kept) in names.items() if not kept)
    assert empty.exists()
    _old(empty, 2 * privatewrite.GRACE_NS / 1e9)
    assert sweep_temps(tmp_path, "fam-") == [empty.name]


_NAME = st.text(alphabet="abcf-.0123456789xtmp", min_size=1, max_size=24).filter(lambda n: n not in {".", ".."})


@given(names=st.sets(_NAME, max_size=12), targets=st.sets(_NAME.map(lambda n: "fam-" + n), max_size=4))
@settings(max_examples=60, deadline=None)
def test_a_sweep_removes_dead_temporary_files_of_the_family_only(names: set[str], targets: set[str]):
    dead = _DEAD_PID
    with tempfile.TemporaryDirectory() as top:
        folder = Path(top)
        dead_names = {temp_path(folder / t).name for t in targets}
        dead_names |= {f".{t}.{dead}.tmp" for t in targets}
        for name in names | dead_names:
            (folder / name).write_bytes(b"x")
            _old(folder / name, 60)
        removed = set(sweep_temps(folder, "fam-"))
        assert dead_names <= removed
        for name in removed - dead_names:  # any other name removed is a temporary name of the family
            assert name.removeprefix(".").startswith("fam-") and privatewrite._parse(name, "fam-") is not None
        assert set(os.listdir(folder)) == (names | dead_names) - removed


_DEAD_PID = dead_pid()


def test_a_temporary_name_is_the_targets_with_this_process_and_a_fresh_token(tmp_path: Path):
    a, b = temp_path(tmp_path / "fam-a.json"), temp_path(tmp_path / "fam-a.json")
    assert a != b and a.parent == tmp_path
    assert a.name.startswith(f".fam-a.json.{os.getpid()}.") and a.name.endswith(".tmp")


def test_writers_in_several_processes_never_leave_a_torn_file(tmp_path: Path):
    target = tmp_path / "fam-a.marshal"
    writers = [
        subprocess.Popen([sys.executable, "-c", MANY, str(target), "30"], stdout=subprocess.DEVNULL) for _ in range(4)
    ]
    seen = 0
    try:
        while any(w.poll() is None for w in writers):
            try:
                data = target.read_bytes()
            except FileNotFoundError:
                continue
            body, digest = data[:-16], data[-16:]
            assert hashlib.blake2b(body, digest_size=16).digest() == digest, "a torn file"
            seen += 1
    finally:
        codes = [w.wait(timeout=120) for w in writers]
    assert codes == [0, 0, 0, 0]
    assert seen > 0
    data = target.read_bytes()
    assert hashlib.blake2b(data[:-16], digest_size=16).digest() == data[-16:]
    assert sorted(os.listdir(tmp_path)) == ["fam-a.marshal"]  # every writer renamed its own temporary file


def _plant(folder: Path, name: str) -> Path:
    """A dead writer's temporary file ``name`` (an earlier version's name: never locked), a minute old."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"partial")
    _old(path, 60)
    return path


def test_each_cache_writer_removes_its_familys_dead_temporary_files(tmp_path: Path):
    from memzoi.base import answercache, codecache, regexcache
    from memzoi.base.runtime import HOME_FILE_PREFIX
    from memzoi.stores import toolstamp

    dead = _DEAD_PID
    code = tmp_path / "pkg"
    code.mkdir()
    (code / "a.py").write_text("x = 1\n")
    home = tmp_path / "home"
    stamp = _plant(home, f"{HOME_FILE_PREFIX}toolstamp-0123.json.{dead}.tmp")
    toolstamp.source_digest(str(code), home / f"{HOME_FILE_PREFIX}toolstamp-4567.json")
    answer = _plant(tmp_path / "answers", f".initialize-0123.{dead}.tmp")
    assert answercache.write_answer(tmp_path / "answers", "4567", {"capabilities": {}})
    attrs = _plant(tmp_path / "codes", f".attrs-code-0123.marshal.{dead}.tmp")
    with codecache.attrs_code_cache(tmp_path / "codes", ["attr"]):
        import attr

        attr.make_class("Planted", ["x"])
    regex = _plant(tmp_path / "codes", f".regex-code-0123.marshal.{dead}.tmp")
    with regexcache.regex_code_cache(tmp_path / "codes"):
        re_compiled = __import__("re")._compiler.compile(r"planted-(\d+)", 0)
    assert re_compiled.match("planted-1")
    assert [p.exists() for p in (stamp, answer, attrs, regex)] == [False] * 4
    for folder in (home, tmp_path / "answers", tmp_path / "codes"):
        assert not [n for n in os.listdir(folder) if n.endswith(".tmp")]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())


def test_a_writer_whose_lock_a_sweep_holds_for_a_moment_asks_again(tmp_path: Path, monkeypatch):
    import fcntl

    from memzoi.base import lock

    real, asked = lock.try_lock, []

    def busy_once(fd: int) -> bool:
        asked.append(fd)
        return len(asked) > 1 and real(fd)  # the first ask meets a sweep holding the lock

    monkeypatch.setattr(lock, "try_lock", busy_once)
    replace, held = os.replace, []

    def check_then_replace(src, dst):
        probe = os.open(src, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(False)
        except BlockingIOError:
            held.append(True)
        finally:
            os.close(probe)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", check_then_replace)
    assert write_private(tmp_path / "fam-a.json", b"data")
    assert len(asked) == 2 and held == [True]  # locked at the rename, so no sweep could take it
