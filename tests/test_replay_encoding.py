"""The stored form of a report's inputs (:mod:`memzoi.stores.replayinputs`) reads back as the inputs that were
stored, whatever their paths hold (what JSON escapes, non-ASCII, lone surrogates of undecodable names), and a row
that is damaged or of another layout is a miss; the walk's digest is hashed a batch at a time (issue 29, "``check``
peak RSS at 50k") and equals the whole-text formula it replaces, so a stored report of an earlier run still
matches its walk."""

from __future__ import annotations

import json
import zlib
from types import SimpleNamespace

import blake3
import pytest
from hypothesis import given, settings, strategies as st

from memzoi.stores import replay, replayinputs
from memzoi.stores.replay import Inputs

#: path-like text with what JSON escapes, non-ASCII and lone surrogates (undecodable file names, ``surrogateescape``)
_TEXT = st.text(st.sampled_from('ab/."\\:[],{}é\u2028\U0001f600\udc80\udcff'), max_size=12)
#: a stamp: size (-1 for unknown bytes), mtime, inode (never negative, up to 64 bits), ctime, checked; a digest
_NS = st.integers(-(2**62), 2**62)
_STAMP = st.tuples(
    st.tuples(st.integers(-1, 2**62), _NS, st.integers(0, 2**64 - 1), _NS, _NS).map(list),
    st.text("0123456789abcdef", max_size=64),
)


def _batched(size: int):
    """Set the batch size of :mod:`memzoi.stores.replay`'s walk digest (small, so that a few items span several
    batches); returns the old value."""
    old = replay._BATCH
    replay._BATCH = size
    return old


@settings(max_examples=200, deadline=None)
@given(
    stamps=st.dictionaries(_TEXT.filter(lambda p: "\0" not in p), _STAMP, max_size=12),
    until=st.none() | st.integers(0, 2**60),
    links=st.none() | st.text("ab |", max_size=20),
    walk=_TEXT,
    size=st.integers(1, 5),
    listed=st.booleans(),
)
def test_inputs_read_back_as_stored(stamps, until, links, walk, size, listed):
    """:func:`replayinputs.encode` (the paths a batch at a time) read back by :func:`replayinputs.decode` gives the
    same inputs, in the same order, for any batch size."""
    as_list = {p: [*n, d] for p, (n, d) in stamps.items()}
    listing = [["/p"], {"/p": [1, 2, 3, 4, 5]}] if listed else None
    inputs = Inputs(walk, "p" * 8, as_list, until, {"/p": ["/p/a"]}, links, ["/p/.memzoi"], listing)
    old = replayinputs._BATCH
    replayinputs._BATCH = size
    try:
        data = replayinputs.encode(inputs)
    finally:
        replayinputs._BATCH = old
    got = replayinputs.decode(data)
    assert got == inputs and list(got.stamps) == list(inputs.stamps)
    assert replayinputs.decode(replayinputs.encode(got)) == inputs


def test_blake3_digests_are_kept_as_their_bytes_and_read_back_as_hex():
    stamps = {f"/p/{i}.md": [i, 2, 3, 4, 5, blake3.blake3(str(i).encode()).hexdigest()] for i in range(50)}
    inputs = Inputs("w", "p", stamps, None, {"/p": ["/p"]}, None, [])
    data = replayinputs.encode(inputs)
    assert replayinputs.decode(data) == inputs
    mixed = {**stamps, "/p/x.md": [1, 2, 3, 4, 5, ""]}  # an unknown digest: the text form, read back the same
    assert replayinputs.decode(replayinputs.encode(Inputs("w", "p", mixed, None, {}, None, []))).stamps == mixed
    assert len(data) < len(replayinputs.encode(Inputs("w", "p", mixed, None, {}, None, []))) - 50 * 30


def test_inputs_that_cannot_be_stored_are_refused_not_mangled():
    def inputs(stamps):
        return Inputs("w", "p", stamps, None, {"/p": ["/p"]}, None, [])

    for bad in (
        {"/p/a\0b": [1, 2, 3, 4, 5, "ab"]},
        {"/p/a": [1, 2, 3, 4, 5, "a\0b"]},
        {"/p/a": [2**64, 2, 3, 4, 5, ""]},
        {"/p/a": [1, 2, 3, 4, 5, "\udcffab"]},  # would read as digests kept as bytes
    ):
        with pytest.raises(ValueError):
            replayinputs.encode(inputs(bad))
    data = replayinputs.encode(inputs({"/p/a": [1, 2, 3, 4, 5, "ab"]}))
    for damaged in (data[:-1], b"x" + data, data[:30] + b"\xff" + data[31:]):
        with pytest.raises((ValueError, TypeError)):
            replayinputs.decode(damaged)


def _old_walk_digest(files, skipped, path_findings, complete, planes):
    h = blake3.blake3()
    parts = (list(files), sorted(skipped), [(d, f.code, f.message) for d, f in path_findings], sorted(complete))
    for part in (*parts, list(planes)):
        h.update(json.dumps(part).encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


@settings(max_examples=200, deadline=None)
@given(
    files=st.lists(_TEXT, max_size=12),
    skipped=st.lists(st.tuples(_TEXT, _TEXT), max_size=4),
    found=st.lists(st.tuples(_TEXT, _TEXT, _TEXT), max_size=4),
    complete=st.lists(_TEXT, max_size=4),
    planes=st.lists(_TEXT, max_size=6),
    size=st.integers(1, 5),
)
def test_the_streamed_walk_digest_equals_the_whole_texts(files, skipped, found, complete, planes, size):
    """:func:`replay.walk_digest` hashes each part a batch of items at a time: the digest is the one of each part's
    whole JSON text (a stored report of an earlier run still matches its walk)."""
    path_findings = [(d, SimpleNamespace(code=c, message=m)) for d, c, m in found]
    old = _batched(size)
    try:
        got = replay.walk_digest(iter(files), skipped, path_findings, complete, iter(planes))
    finally:
        replay._BATCH = old
    assert got == _old_walk_digest(files, skipped, path_findings, complete, planes)


def test_inputs_stored_read_back_as_the_same_inputs_and_a_damaged_row_is_a_miss(tmp_path):
    """:func:`replay.save` stores the inputs' stored form; :func:`replay.load` reads the same inputs and report back,
    with a matching checksum, and a damaged row or one of an earlier layout is a miss."""
    from memzoi.stores.store import connect, store_path

    conn = connect(store_path(tmp_path))
    assert conn is not None
    try:
        stamps = {f"/p/é{i}": [i, 2, 3, 4, 5, "ab"] for i in range(3)}
        inputs = Inputs("w", "p", stamps, None, {"/p": ["/p"]}, "a|b|", [])
        assert replay.save(conn, "k", inputs, b"report")
        (packed,) = conn.execute("SELECT inputs FROM reports WHERE key = 'k'").fetchone()
        assert packed == replayinputs.encode(inputs)
        got = replay.load(conn, "k")
        assert got is not None
        assert got[0] == inputs and got[1] == b"report"
        damaged = packed.replace(b"ab", b"ac")
        conn.execute("UPDATE reports SET inputs = ? WHERE key = 'k'", (damaged,))
        assert replay.load(conn, "k") is None
        old = zlib.compress(json.dumps(["w", "p", stamps, None, {"/p": ["/p"]}, "a|b|", []]).encode(), 1)
        conn.execute("UPDATE reports SET inputs = ? WHERE key = 'k'", (old,))  # an earlier build's row
        assert replay.load(conn, "k") is None
        assert not replay.save(conn, "k", Inputs("w", "p", {"/p/a": [1, 2, 3, 4, 5]}, None, {}, None, []), b"r")
    finally:
        conn.close()


@settings(max_examples=100, deadline=None)
@given(
    stamps=st.dictionaries(
        _TEXT,
        st.tuples(
            st.binary(min_size=32, max_size=32),
            st.tuples(
                st.integers(0, 2**63 - 1), st.integers(0, 2**62), st.integers(0, 2**64 - 1), st.integers(0, 2**62)
            ),
            st.integers(0, 2**62),
        ),
        max_size=8,
    ),
    size=st.integers(1, 5),
)
def test_packed_stamps_are_stored_as_their_lists(stamps, size):
    """A run's inputs may hold each file's stamp as the 72 bytes the parent keeps (:func:`memzoi.base.freshness.pack_stamp`,
    taken as they are by ``memzoi.runs.checkreplay._stamps``): the stored form is byte for byte that of the lists,
    and reads back as the lists."""
    from memzoi.base.freshness import pack_stamp

    packed = {p: pack_stamp(*v) for p, v in stamps.items()}
    assert all(v is not None and len(v) == 72 for v in packed.values())
    as_list = {p: [*s, c, d.hex()] for p, (d, s, c) in stamps.items()}
    lists = Inputs("w", "p" * 8, as_list, None, {"/p": ["/p/a"]}, "a b|", [])
    held = Inputs("w", "p" * 8, dict(packed), None, {"/p": ["/p/a"]}, "a b|", [])  # type: ignore[arg-type]
    old = replayinputs._BATCH
    replayinputs._BATCH = size
    try:
        assert replayinputs.encode(held) == replayinputs.encode(lists)
    finally:
        replayinputs._BATCH = old
    assert replayinputs.decode(replayinputs.encode(held)) == lists
