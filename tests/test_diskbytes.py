"""The byte findings of a file on disk, on an editor's text of it (:mod:`memzoi.judge.diskbytes`): the codes and
messages ``memzoi check`` gives the bytes, placed where check places them (or line 0), merged without
duplicates, without quick fixes; the scan's stored first stage gives the same as the bytes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from memzoi.judge import diskbytes
from memzoi.judge.analysis import MAX_FILE_BYTES, analyze_bytes, analyze_text
from memzoi.judge.workspace import place
from memzoi.project.verdict import ProjectContext
from memzoi.read.text import LineIndex, decode
from memzoi.stores import fileentry

from .lsp.conftest import record_text

RECORD = "/proj/.memzoi/records/cafe-build.md"
LATIN1 = record_text("cafe-build", "Café build").encode("latin-1")


def _checks(data: bytes, path: str = RECORD) -> list[tuple[str, str, int, int]]:
    """Check's byte findings of ``data``: ``(code, message, line, column)``."""
    analysis = analyze_bytes(data, path)
    lines = LineIndex(analysis.text)
    return [(f.code, f.message, *lines.position(f.start)) for f in analysis.findings if f.code in diskbytes.BYTE_CODES]


def _placed(disk: diskbytes.DiskBytes) -> list[tuple[str, str, int, int]]:
    return [(p.finding.code, p.finding.message, p.line, p.column) for p in disk.placed]


@settings(max_examples=60, deadline=None)
@given(
    st.binary(max_size=200).map(lambda b: b"---\nid: x\n---\n" + b),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
)
def test_of_bytes_gives_checks_byte_findings(body: bytes, bom: bytes):
    data = bom + body
    assert sorted(_placed(diskbytes.of_bytes(data))) == sorted(_checks(data))


def test_of_bytes_of_a_large_file_and_a_plain_file():
    big = b"---\nid: x\n---\n" + b"notes\n" * (MAX_FILE_BYTES // 6 + 10)
    assert [c for c, *_ in _placed(diskbytes.of_bytes(big))] == ["file_too_large"]
    assert _placed(diskbytes.of_bytes(big)) == _checks(big)
    assert diskbytes.of_bytes(LATIN1.decode("latin-1").encode()).placed == ()


def test_a_latin1_record_decoded_by_the_editor_gets_checks_invalid_encoding_where_check_puts_it():
    text = LATIN1.decode("latin-1")  # what Neovim sends: valid UTF-8, no invalid_encoding of its own
    plain = analyze_text(text, RECORD)
    assert "invalid_encoding" not in {f.code for f in plain.findings}
    merged = diskbytes.editor_analysis(plain, RECORD, diskbytes.of_bytes(LATIN1))
    (got,) = [f for f in merged.findings if f.code == "invalid_encoding"]
    (want,) = [f for f in analyze_bytes(LATIN1, RECORD).findings if f.code == "invalid_encoding"]
    assert (got.message, got.severity) == (want.message, want.severity)
    assert LineIndex(text).position(got.start) == LineIndex(decode(LATIN1).text).position(want.start) == (6, 11)
    assert text[got.start] == "é"
    assert merged.findings == sorted(merged.findings, key=lambda f: (f.start, f.end, f.code))
    assert [f for f in merged.findings if f.code != "invalid_encoding"] == plain.findings


def test_nothing_is_added_twice_and_the_text_keeps_its_own():
    # the text's findings already hold the invalid_encoding at that place (the editor's text is check's decoding)
    data = b"---\nid: \xff\n---\n"
    text = decode(data).text
    disk = diskbytes.of_bytes(data)
    found = analyze_bytes(data, RECORD).findings  # already holds the finding at that place
    assert diskbytes.editor_findings(text, found, disk) is found
    # a BOM the editor kept: the text's bom (with its quick fix) is the one shown
    data = b"\xef\xbb\xbf" + LATIN1.decode("latin-1").encode()
    kept = analyze_text(data.decode("utf-8"), RECORD)
    merged = diskbytes.editor_analysis(kept, RECORD, diskbytes.of_bytes(data))
    assert merged is kept and [f.fixes != () for f in merged.findings if f.code == "bom"] == [True]


def test_a_bom_the_editor_stripped_is_reported_without_a_quick_fix_and_never_on_a_scanned_file():
    data = b"\xef\xbb\xbf" + LATIN1.decode("latin-1").encode()
    text = data[3:].decode("utf-8")
    merged = diskbytes.editor_analysis(analyze_text(text, RECORD), RECORD, diskbytes.of_bytes(data))
    (bom,) = [f for f in merged.findings if f.code == "bom"]
    assert (bom.start, bom.fixes) == (0, ())
    stray = "/proj/.memzoi/notes.txt"  # only scanned: check gives it no bom
    scanned = analyze_text(text, stray)
    assert diskbytes.editor_analysis(scanned, stray, diskbytes.of_bytes(data)) is scanned


def test_a_place_the_editor_text_lacks_maps_to_line_0():
    disk = diskbytes.of_bytes(LATIN1)  # invalid byte at line 6, column 11
    got = diskbytes.editor_findings("---\nid: x\n", [], disk)
    assert [(f.code, f.start, f.end) for f in got] == [("invalid_encoding", 0, 1)]
    assert diskbytes.editor_findings("", [], disk)[0].start == 0


def test_an_editor_text_over_the_limit_gets_file_too_large_once():
    text = "---\nid: x\n---\n" + "é" * (MAX_FILE_BYTES // 2)  # fewer code points than the limit, more bytes
    got = diskbytes.editor_findings(text, [], None)
    assert [f.code for f in got] == ["file_too_large"]
    disk = diskbytes.of_bytes(text.encode())
    assert [f.code for f in diskbytes.editor_findings(text, [], disk)] == ["file_too_large"]
    assert diskbytes.editor_findings("---\nid: x\n---\n", [], None) == []


def test_the_scans_first_stage_gives_what_the_bytes_give(tmp_path: Path):
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    path = records / "cafe-build.md"
    path.write_bytes(b"\xef\xbb\xbf" + LATIN1)
    stage = fileentry.make_entry(
        str(path), place(path), ProjectContext.of(tmp_path / ".memzoi"), {}, None, entry=False
    ).verdict
    held = diskbytes.of_findings(stage.first.own, stage.lines(), stage.revision)
    assert _placed(held) == _placed(diskbytes.of_bytes(path.read_bytes()))
    assert {c for c, *_ in _placed(held)} == {"bom", "invalid_encoding"}


# The line before the bad byte holds characters of two to four UTF-8 bytes: check counts each as one code point,
# an editor that fell back to a one-byte encoding (Neovim's `latin1`) shows each byte as one character.
_LINE_CHARS = st.sampled_from(["a", " ", ":", '"', "é", "Ü", "€", "中", "😀"])
_BAD = st.sampled_from([b"\xe9", b"\xff", b"\x80", b"\xc3("])


@settings(max_examples=120, deadline=None)
@given(
    st.lists(_LINE_CHARS, max_size=12).map("".join),
    _BAD,
    st.lists(_LINE_CHARS, max_size=6).map("".join),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
    st.booleans(),
)
def test_the_bad_byte_is_placed_where_the_editor_shows_it(before: str, bad: bytes, after: str, bom: bytes, first):
    head = b"" if first else b"---\nid: x\n---\n"  # the bad byte on the first line (after a BOM) or later
    data = bom + head + before.encode() + bad + after.encode() + b"\nend\n"
    at = len(bom + head + before.encode())  # the bad byte's offset in the file
    disk = diskbytes.of_bytes(data)
    for shown, where in (
        # Neovim's latin1 fallback: one character per byte, so the bad byte is at its file offset
        (data.decode("latin-1"), at),
        # ...and with the BOM stripped, as editors strip it
        (data[len(bom) :].decode("latin-1"), at - len(bom)),
        # VS Code: UTF-8 with replacement characters, check's own decoding, BOM stripped
        (data[len(bom) :].decode("utf-8", "replace"), len((head + before.encode()).decode())),
    ):
        got = [f for f in diskbytes.editor_findings(shown, [], disk) if f.code == "invalid_encoding"]
        assert [f.start for f in got] == [where], (shown, where)
        assert got[0].end == where + 1


def test_a_windows_1252_editor_text_gets_the_bad_byte_at_its_place():
    data = 'title: "Ünïcödé café"\n'.encode().replace('é"'.encode(), b'\xe9"')
    shown = data.decode("cp1252")
    (got,) = diskbytes.editor_findings(shown, [], diskbytes.of_bytes(data))
    assert shown[got.start :] == 'é"\n' and got.start == data.index(b"\xe9")


def test_the_server_reads_the_bytes_of_a_file_that_is_not_utf8_though_its_scan_stage_is_current(tmp_path: Path):
    from memzoi_lsp import diskview  # noqa: PLC0415 the server's reader of the disk (a stored stage has no text)

    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    path = records / "cafe-build.md"
    text = record_text("cafe-build", "Ünï café")
    path.write_bytes(text.encode().replace("café".encode(), b"caf\xe9"))
    stage = fileentry.make_entry(
        str(path), place(path), ProjectContext.of(tmp_path / ".memzoi"), {}, None, entry=False
    ).verdict
    assert stage.current()
    got = diskview.read(path, stage)
    assert got is not None and got == diskbytes.of_bytes(path.read_bytes())
    (placed,) = [p for p in got.placed if p.finding.code == "invalid_encoding"]
    assert placed.before == 'title: "Ünï caf'
