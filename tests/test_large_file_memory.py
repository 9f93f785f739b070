"""A record far over Memzoi's size limit costs memory bounded by a small multiple of its size, not the ~16 times a
whole scan of it took (a 30 MB record: ``memzoi check --no-cache`` and ``memzoi rebuild`` peaked at ~510 MB), and
still gets every finding Memzoi's rules require: ``file_too_large``, ``candidate_too_large`` and a secret's
finding, the secret never printed. The bound is on memory (a child's peak RSS), never on time.

The pieces that made it: the scan context computes its gate words (a split of the whole text) and the lower-cased
bytes only when a detector asks (Memzoi's rules alone, for a text over the limit, never ask for the words) and finds
a long text's runs a piece at a time; the duplicate key and the index's row checksum hash a long text piece by
piece. Each gives what the whole text gave (properties below)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import blake3
import pytest
from hypothesis import given, settings, strategies as st

from memzoi.judge import revision
from memzoi.read.text import rust_trim
from memzoi.safety import context
from memzoi.stores import index_schema
from tests import builders

#: a generous bound for a 30 MB record (main peaked at ~500 MB; now check ~155 MB, rebuild ~190 MB, ~40 MB of it the
#: interpreter)
PEAK_BOUND_KB = 250 * 1024
_LINE = "Another line of notes about the build, with some words.\n"

# The child runs the command and reports the peak RSS of its own children (the command and any workers it
# started), so what other tests' processes took never counts.
_PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, stdin=subprocess.DEVNULL)
sys.stdout.write(done.stdout + done.stderr)
sys.stdout.write("\\n@@ %d %d\\n" % (done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"""


def _key() -> str:
    """An AWS-access-key-shaped value, built at run time (no credential is in the repository's files)."""
    return "AKIA" + "QWERTYUIOP" + "ASDFGH"


def _huge_project(root: Path, size: int) -> Path:
    """A git repository with a Memzoi project whose one record is ``size`` bytes, a secret in its middle."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, stdin=subprocess.DEVNULL)
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "config.toml").write_text("")
    body = _LINE * (size // len(_LINE) // 2) + f"aws key {_key()} here\n" + _LINE * (size // len(_LINE) // 2)
    path = builders.write(root, builders.record_path("huge-notes"), builders.record("huge-notes") + body)
    return Path(path)


def _run_measured(root: Path, *args: str) -> tuple[str, int, int]:
    """``(output, exit status, peak RSS in KiB)`` of ``memzoi ARGS`` run in ``root``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MEMZOI_HOME": str(root / "home")}
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, "-m", "memzoi", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    out, _, tail = done.stdout.rpartition("\n@@ ")
    rc, peak = map(int, tail.split())
    return out, rc, peak


@pytest.fixture(scope="module")
def huge(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("huge")
    _huge_project(root, 30_000_000)
    return root


def _no_secret(out: str) -> None:
    if _key() in out:
        pytest.fail("the secret was printed")  # never quote the output: it would hold the secret


def test_check_of_a_30_mb_record_reports_every_memzoi_finding_in_bounded_memory(huge: Path):
    out, rc, peak = _run_measured(huge, "check", "--no-cache", "--format", "json")
    _no_secret(out)
    found = sorted((f["code"], f["range"]["start"]["line"]) for f in json.loads(out)["findings"])
    secret_line = builders.record("huge-notes").count("\n") + 30_000_000 // len(_LINE) // 2
    assert found == [
        ("candidate_too_large", 0),
        ("candidate_too_large", builders.record("huge-notes").split("\n").index("Body of huge-notes.")),
        ("credential_token", secret_line),
        ("file_too_large", 0),
    ]
    assert rc == 1
    assert peak < PEAK_BOUND_KB, f"check peaked at {peak // 1024} MB"


def test_rebuild_of_a_30_mb_record_refuses_it_in_bounded_memory(huge: Path):
    out, rc, peak = _run_measured(huge, "rebuild")
    _no_secret(out)
    assert rc == 0
    assert "refused .memzoi/records/huge-notes.md: safety-scan[candidate_too_large,credential_token]" in out
    assert peak < PEAK_BOUND_KB, f"rebuild peaked at {peak // 1024} MB"


_BODY_CHARS = st.sampled_from(["a", "b", " ", "\t", "\r", "\n", "\r\n", "\x1c", "\u2028", "\xa0", "é", "\ud800"])


def _whole_key(body: str) -> str:
    """The duplicate key as it was taken of the whole body at once (the reference for the pieces)."""
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return blake3.blake3(rust_trim("\n".join(lines)).encode("utf-8", "surrogatepass")).hexdigest()


@settings(max_examples=300, deadline=None)
@given(st.lists(_BODY_CHARS, max_size=40).map("".join), st.integers(1, 7), st.data())
def test_a_long_body_keyed_in_pieces_gets_the_whole_bodys_key(body: str, piece: int, data):
    start = data.draw(st.integers(0, len(body)))
    end = data.draw(st.integers(start, len(body)))
    want = _whole_key(body[start:end])
    assert revision.duplicate_key(body[start:end]) == want  # short: keyed whole
    saved = revision.DUPLICATE_PIECE
    revision.DUPLICATE_PIECE = piece
    try:
        assert revision.duplicate_key("#" + body + "#", start + 1, end + 1) == want
    finally:
        revision.DUPLICATE_PIECE = saved


_VALUES = st.one_of(
    st.none(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True),
    st.binary(max_size=4),
    st.lists(st.sampled_from(["a", "é", "\ud800", "\x1f", "\U0001f600", "s1:"]), max_size=9).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=6), st.integers(1, 5))
def test_a_row_checksum_with_long_texts_is_the_same_hashed_in_pieces(values: list[object], piece: int):
    want = index_schema.row_checksum(*values)
    saved = index_schema._LONG_TEXT
    index_schema._LONG_TEXT = piece
    try:
        assert index_schema.row_checksum(*values) == want
    finally:
        index_schema._LONG_TEXT = saved


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "B", "-", " ", "\n", "\t", "\x1c", "x" * 16]), max_size=60).map("".join))
def test_the_long_runs_of_a_long_ascii_text_marked_in_pieces_are_its_runs(text: str):
    want = [(i, w) for i, w in _split_runs(text)]
    saved = context.MARK_PIECE
    for piece in (1, 3, 17):
        context.MARK_PIECE = piece
        try:
            assert context.Ctx(text).longs == want
        finally:
            context.MARK_PIECE = saved


def _split_runs(text: str) -> list[tuple[int, str]]:
    """``str.split()``'s parts of 16+ characters with their offsets: what a long run is."""
    out, cursor = [], 0
    for w in text.split():
        pos = text.find(w, cursor)
        cursor = pos + len(w)
        if len(w) >= 16:
            out.append((pos, w))
    return out
