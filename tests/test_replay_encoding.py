"""The stored form of a report's inputs (:mod:`memzoi.stores.replay`) is encoded and hashed in pieces, so that
``memzoi check`` never holds that text whole more than once (issue 29, "``check`` peak RSS at 50k"). Each streamed
form must give byte for byte what encoding everything at once gave: a stored report of an earlier run then still
replays, and its checksum still matches. The references below are the whole-text formulas the pieces replace."""

from __future__ import annotations

import json
import zlib
from types import SimpleNamespace

import blake3
from hypothesis import given, settings, strategies as st

from memzoi.stores import replay
from memzoi.stores.replay import Inputs

#: path-like text with what JSON escapes, non-ASCII and lone surrogates (undecodable file names, ``surrogateescape``)
_TEXT = st.text(st.sampled_from('ab/."\\:[],{}é\u2028\U0001f600\udc80\udcff'), max_size=12)
_STAMP = st.tuples(st.lists(st.integers(-1, 2**62), min_size=5, max_size=5), st.text("0123456789abcdef", max_size=64))


def _batched(size: int, piece: int):
    """Set the batch and slice sizes of :mod:`memzoi.stores.replay` (small, so that a few items span several
    pieces); returns the old values."""
    old = (replay._BATCH, replay._PIECE)
    replay._BATCH, replay._PIECE = size, piece
    return old


@settings(max_examples=200, deadline=None)
@given(
    stamps=st.dictionaries(_TEXT, _STAMP, max_size=12),
    until=st.none() | st.integers(0, 2**60),
    links=st.none() | st.text("ab |", max_size=20),
    walk=_TEXT,
    size=st.integers(1, 5),
    picks=st.lists(st.integers(0, 11), max_size=3),
)
def test_inputs_encoded_in_pieces_are_the_utf8_of_the_whole_text(stamps, until, links, walk, size, picks):
    """:meth:`Inputs.pieces` (the stamps a batch at a time; or the text read with a few stamps spliced in, a slice at
    a time) joined is the UTF-8 of ``json.dumps`` of everything at once, and reads back as the same inputs; the
    row's checksum hashed piece by piece is :func:`replay._sum` of that whole text."""
    as_list = {p: [*n, d] for p, (n, d) in stamps.items()}
    listing = [["/p"], {"/p": [1, 2, 3, 4, 5]}] if until is not None else None
    inputs = Inputs(walk, "p" * 8, as_list, until, {"/p": ["/p/a"]}, links, ["/p/.memzoi"], listing)
    whole = json.dumps(
        [
            inputs.walk,
            inputs.projects,
            inputs.stamps,
            inputs.until_us,
            inputs.roots,
            inputs.links,
            inputs.planes,
            listing,
        ],
        separators=(",", ":"),
    ).encode("utf-8", "surrogateescape")
    read = Inputs.from_json(whole.decode("utf-8", "surrogateescape"))
    changed = [p for i, p in enumerate(as_list) if i in picks]
    for path in changed:
        read.stamps[path] = [1, 2, 3, 4, 5, "ab"]
    spliced = json.dumps(
        [read.walk, read.projects, read.stamps, read.until_us, read.roots, read.links, read.planes, read.listing],
        separators=(",", ":"),
    ).encode("utf-8", "surrogateescape")
    old = _batched(size, 3)
    try:
        pieces = list(inputs.pieces())
        got_spliced = b"".join(read.pieces(changed))
        packed, checksum = replay._packed("k", inputs, None, b"report")
    finally:
        replay._BATCH, replay._PIECE = old
    assert b"".join(pieces) == whole
    assert len(pieces) >= 2 + -(-len(as_list) // size)  # the stamps came in batches
    assert got_spliced == spliced
    assert zlib.decompress(packed) == whole
    assert checksum == replay._sum("k", whole, b"report")
    assert Inputs.from_json(whole.decode("utf-8", "surrogateescape")) == inputs


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
    old = _batched(size, 3)
    try:
        got = replay.walk_digest(iter(files), skipped, path_findings, complete, iter(planes))
    finally:
        replay._BATCH, replay._PIECE = old
    assert got == _old_walk_digest(files, skipped, path_findings, complete, planes)


def test_inputs_stored_compressed_read_back_as_the_same_inputs(tmp_path):
    """:func:`replay.save` stores the inputs compressed; :func:`replay.load` reads the same inputs and report back,
    with a matching checksum, and a damaged row is a miss."""
    from memzoi.stores.store import connect, store_path

    conn = connect(store_path(tmp_path))
    assert conn is not None
    try:
        stamps = {f"/p/é{i}": [i, 2, 3, 4, 5, "ab"] for i in range(3)}
        inputs = Inputs("w", "p", stamps, None, {"/p": ["/p"]}, "a|b|", [])
        assert replay.save(conn, "k", inputs, b"report")
        (packed,) = conn.execute("SELECT inputs FROM reports WHERE key = 'k'").fetchone()
        assert zlib.decompress(packed) == inputs.to_json().encode()
        got = replay.load(conn, "k")
        assert got is not None
        assert got[0] == inputs and got[1] == b"report"
        damaged = zlib.compress(inputs.to_json().replace("ab", "ac").encode(), 1)
        conn.execute("UPDATE reports SET inputs = ? WHERE key = 'k'", (damaged,))
        assert replay.load(conn, "k") is None
        conn.execute("UPDATE reports SET inputs = ? WHERE key = 'k'", (inputs.to_json(),))  # an old build's row
        assert replay.load(conn, "k") is None
    finally:
        conn.close()
