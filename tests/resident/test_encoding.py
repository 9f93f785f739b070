"""Resident files from every platform (issue 30, item 3): LF, CRLF and CR, with or without a UTF-8 byte order mark,
are split into the same entries; every write keeps the file's own line endings, mark and surrounding whitespace,
so an edit changes exactly one entry's bytes; UTF-16/32 and undecodable files are refused, never written."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.cli.main import main
from memzoi.ledger import Refusal
from memzoi.resident import service
from memzoi.resident.encoding import Layout, decode, layout_of, mixed_endings
from memzoi.resident.format import entry_spans, parse
from memzoi.resident.locator import parse_operation
from memzoi.resident.scope import resident_file
from memzoi.resident.store import ResidentStore
from memzoi.resident.views import candidates_for

from .conftest import rules

STYLES = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}
BOM = b"\xef\xbb\xbf"
#: The property test's case count (explicit, reported with issue 30).
PROPERTY_EXAMPLES = 300
SERVICE_EXAMPLES = 60
_HOMES = itertools.count()


def file_bytes(entries: list[str], nl: str, bom: bool, lead: str = "", trail: str = "") -> bytes:
    """A resident file as an editor with line ending ``nl`` would save ``entries`` (LF-broken texts)."""
    body = f"{nl}\u00a7{nl}".join(e.replace("\n", nl) for e in entries)
    return (BOM if bom else b"") + (lead + body + trail).encode("utf-8")


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak.*"))


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("bom", [False, True])
def test_every_style_splits_into_the_same_entries(style, bom):
    entries = ["Run make lint.", "Build:\n  make all\n  make test", "Cite § 4 inline."]
    data = file_bytes(entries, STYLES[style], bom, trail=STYLES[style])
    text, layout = decode(data, Path("RULES.md"))
    assert parse(text) == entries
    assert layout == Layout(STYLES[style], bom, "", STYLES[style])
    assert [s.text for s in entry_spans(text)] == entries
    assert layout.encode("\n\u00a7\n".join(entries)) == data  # written back byte for byte
    assert mixed_endings(text) is None


def test_a_crlf_file_was_one_entry_and_a_replace_now_keeps_the_other(project):
    """The defect of issue 30: a CRLF file read as one entry, so a replace of entry 1 rewrote entry 2 as well."""
    path = _write(rules(project), file_bytes(["Use tabs.", "Run make lint."], "\r\n", False))
    res = service.propose(
        project,
        scope="project",
        action="replace",
        old_text="tabs",
        content="Use spaces.",
        reason="r",
        confidence=0.5,
        actor="a",
    )
    assert res.candidate.status == "pending"
    done = service.apply(project, res.candidate.id, actor="b")
    assert done.before == ["Use tabs.", "Run make lint."] and done.after == ["Use spaces.", "Run make lint."]
    assert path.read_bytes() == b"Use spaces.\r\n\xc2\xa7\r\nRun make lint."
    assert [b.read_bytes() for b in _backups(path)] == [b"Use tabs.\r\n\xc2\xa7\r\nRun make lint."]  # hand-written
    service.undo(project, done.id, actor="b")
    assert path.read_bytes() == b"Use tabs.\r\n\xc2\xa7\r\nRun make lint."


@pytest.mark.parametrize(
    "data, why",
    [
        ("Use tabs.\n\u00a7\nRun lint.".encode("utf-16"), "UTF-16 (little-endian) byte order mark"),
        ("\ufeffUse tabs.".encode("utf-16-be"), "UTF-16 (big-endian) byte order mark"),
        ("Use tabs.".encode("utf-32"), "UTF-32 (little-endian) byte order mark"),
        ("Use tabs.\n\u00a7\nRun lint.".encode("utf-16-le"), "bytes are NUL, as in UTF-16 or UTF-32 text"),
        (b"Use \xff tabs.", "not valid UTF-8 (invalid byte at offset 4)"),
    ],
)
def test_files_zuno_cannot_read_are_refused_with_nothing_written(project, capsys, monkeypatch, data, why):
    path = _write(rules(project), data)
    with pytest.raises(Refusal) as err:
        service.propose(
            project, scope="project", action="add", content="New rule.", reason="r", confidence=0.5, actor="a"
        )
    assert err.value.code == "unreadable" and why in err.value.message
    assert str(path) in err.value.message and "re-save it as UTF-8" in err.value.message
    assert path.read_bytes() == data and _backups(path) == [] and candidates_for(project) == []
    monkeypatch.chdir(project)
    assert main(["check", str(path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert found[0]["code"] == "invalid_encoding" and found[0]["severity"] == "error"
    assert why in found[0]["message"] and "re-save it as UTF-8" in found[0]["message"]
    assert path.read_bytes() == data


def test_mixed_line_endings_refuse_a_proposal_as_drift_with_no_backup(project, capsys, monkeypatch):
    data = b"Use tabs.\r\n\xc2\xa7\nRun make lint."
    path = _write(rules(project), data)
    with pytest.raises(Refusal) as err:
        service.propose(
            project, scope="project", action="add", content="New rule.", reason="r", confidence=0.5, actor="a"
        )
    assert err.value.code == "external_drift" and "mixes CRLF and LF line endings" in err.value.message
    assert path.read_bytes() == data and _backups(path) == []  # a refused proposal writes nothing, no backup
    monkeypatch.chdir(project)
    main(["check", str(path), "--format", "json"])
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert "resident_drift" in codes


def test_the_editor_reads_a_bom_as_the_mark_not_an_invisible_character(project, capsys, monkeypatch):
    path = _write(rules(project), file_bytes(["Use tabs.", "Run make lint."], "\r\n", True, trail="\r\n"))
    monkeypatch.chdir(project)
    assert main(["check", str(path), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["code"] for f in found] == ["resident_hand_edit", "resident_hand_edit"]
    assert [f["range"]["start"] for f in found] == [{"line": 0, "character": 0}, {"line": 2, "character": 0}]
    from memzoi.resident.editor import findings

    file = resident_file(project, "project")
    assert [f.code for f in findings("\ufeffUse tabs.\r\n\u00a7\r\nRun.", file, [])] == ["resident_hand_edit"] * 2


def test_content_with_crlf_breaks_is_held_with_lf():
    op = parse_operation("add", "Build:\r\n  make all\r  make test\r\n", None)
    assert op.content == "Build:\n  make all\n  make test"


def test_layout_of_a_whitespace_only_file_keeps_it_all():
    assert layout_of("\r\n") == Layout("\r\n", False, "", "\r\n")
    assert layout_of("  a\r\n") == Layout("\r\n", False, "  ", "\r\n")


def test_a_write_to_a_reviewed_file_keeps_no_backup_but_a_hand_edited_one_does_once(project):
    def add(content):
        res = service.propose(
            project, scope="project", action="add", content=content, reason="r", confidence=0.5, actor="a"
        )
        return service.apply(project, res.candidate.id, actor="b")

    add("First rule.")
    add("Second rule.")
    path = rules(project)
    assert _backups(path) == []  # every entry was written by a reviewed candidate
    edited = path.read_bytes().replace(b"Second", b"2nd")
    path.write_bytes(edited)
    add("Third rule.")
    assert [b.read_bytes() for b in _backups(path)] == [edited]
    add("Fourth rule.")  # the hand edit was copied once; the file is what the last reviewed write left
    assert [b.read_bytes() for b in _backups(path)] == [edited]


# --- properties: random entry sets x line-ending styles x byte order mark x operations ----------------------------

_WORDS = ["use", "tabs", "make", "lint", "§ 4", "x§y", "é", "中文", "über", "`uv`", "-", "(a)", "see§4", "TODO:"]
_text = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5).flatmap(
    lambda words: st.lists(st.sampled_from([" ", "\n", "\n  "]), min_size=len(words) - 1, max_size=len(words) - 1).map(
        lambda seps: words[0] + "".join(s + w for s, w in zip(seps, words[1:]))
    )
)


@st.composite
def _case(draw):
    bodies = draw(st.lists(_text, max_size=6))
    entries = [f"[{i}] {b}" for i, b in enumerate(bodies)]  # a tag no other entry contains: a unique locator
    style = draw(st.sampled_from(sorted(STYLES)))
    nl = STYLES[style]
    bom = draw(st.booleans())
    lead = draw(st.sampled_from(["", nl, " "]))
    trail = draw(st.sampled_from(["", nl, nl + nl]))
    if not entries:  # a whitespace-only file is all trail (encoding.layout_of)
        lead, trail = "", lead + trail
    actions = ["add"] + (["replace", "remove"] if entries else [])
    action = draw(st.sampled_from(actions))
    index = draw(st.integers(0, max(len(entries) - 1, 0)))
    content = f"[new] {draw(_text)}"
    return entries, nl, bom, lead, trail, action, index, content


def _expected(entries, action, index, content):
    after = list(entries)
    if action == "add":
        after.append(content)
    elif action == "replace":
        after[index] = content
    else:
        del after[index]
    return after


def _written_newline(entries, nl, lead, trail):
    """The line ending a write uses: the file's own; LF when the file has no line break at all (Zuno's)."""
    has_break = any("\n" in e for e in entries) or len(entries) > 1 or "\n" in lead + trail or "\r" in lead + trail
    return nl if has_break else "\n"


def _check_one_entry_changed(before, after, action, index):
    if action == "add":
        assert after[:-1] == before and len(after) == len(before) + 1
    elif action == "replace":
        assert len(after) == len(before)
        assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [index]
    else:
        assert after == before[:index] + before[index + 1 :]


@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_case())
def test_property_each_operation_changes_exactly_one_entry_and_keeps_the_layout(project, case):
    entries, nl, bom, lead, trail, action, index, content = case
    original = file_bytes(entries, nl, bom, lead, trail)
    path = _write(rules(project), original)
    store = ResidentStore(resident_file(project, "project"))
    assert store.entries == entries
    locator = f"[{index}]" if action != "add" else None
    after = store.preview(parse_operation(action, content, locator))
    assert after == _expected(entries, action, index, content)
    _check_one_entry_changed(entries, after, action, index)
    recorded = store.layout  # what the service records with the candidate (begin_apply)
    store.replace_exact(entries, after)
    written = path.read_bytes()
    out_nl = _written_newline(entries, nl, lead, trail)
    # every other entry's bytes, the mark, the line ending and the surrounding whitespace are as they were
    assert written == file_bytes(after, out_nl, bom, lead, trail)
    assert written.startswith(BOM) == bom
    text, _ = decode(written, path)
    assert parse(text) == after and mixed_endings(text) is None
    # an undo restores the exact prior bytes (with the layout the write recorded, as the service's undo does:
    # a CR file reduced to one line no longer shows its line ending)
    again = ResidentStore(resident_file(project, "project"))
    again.layout = again.layout.fill(recorded)
    again.replace_exact(after, entries)
    assert path.read_bytes() == original


@settings(
    max_examples=SERVICE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_case())
def test_property_approve_and_undo_keep_the_layout_and_restore_the_exact_bytes(project, monkeypatch, tmp_path, case):
    entries, nl, bom, lead, trail, action, index, content = case
    # a fresh candidate database: no layout recorded by an earlier example's write
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / f"home-{next(_HOMES)}"))
    original = file_bytes(entries, nl, bom, lead, trail)
    path = _write(rules(project), original)
    for old in _backups(path):
        os.unlink(old)
    res = service.propose(
        project,
        scope="project",
        action=action,
        content=content,
        old_text=f"[{index}]" if action != "add" else None,
        reason="r",
        confidence=0.5,
        actor="a",
    )
    done = service.apply(project, res.candidate.id, actor="b")
    assert done.status == "applied" and done.before == entries
    _check_one_entry_changed(done.before, done.after, action, index)
    if done.after:
        assert path.read_bytes() == file_bytes(done.after, _written_newline(entries, nl, lead, trail), bom, lead, trail)
    if entries:  # hand-written entries: their bytes were kept before the write
        assert original in [b.read_bytes() for b in _backups(path)]
    undone = service.undo(project, done.id, actor="b")
    assert undone.status == "undone"
    assert path.read_bytes() == original


def test_a_later_write_keeps_the_line_ending_the_file_no_longer_shows(project):
    """A CR file emptied to one line has no line break left; the layout recorded with the candidate that wrote it
    keeps the next write, and the undo, in CR."""
    path = _write(rules(project), file_bytes(["Use tabs.", "Run make lint."], "\r", False))

    def decide(action, **kw):
        res = service.propose(project, scope="project", action=action, reason="r", confidence=0.5, actor="a", **kw)
        return service.apply(project, res.candidate.id, actor="b")

    removed = decide("remove", old_text="tabs")
    assert path.read_bytes() == b"Run make lint."
    added = decide("add", content="Line one\nline two")
    assert path.read_bytes() == b"Run make lint.\r\xc2\xa7\rLine one\rline two"
    service.undo(project, added.id, actor="b")
    service.undo(project, removed.id, actor="b")
    assert path.read_bytes() == file_bytes(["Use tabs.", "Run make lint."], "\r", False)


def test_a_version_1_candidate_database_is_upgraded_in_place(project):
    import sqlite3

    from memzoi.resident import candidate_schema, candidates as db

    path = db.db_path()
    old = sqlite3.connect(path)
    old.executescript(candidate_schema.SCHEMA.replace(",\n    layout TEXT,\n    original_content TEXT\n", "\n"))
    old.execute(
        "INSERT INTO memory_candidate (id, scope, target_path, action, content, reason, confidence, source, "
        "actor, status, time_created, time_updated) VALUES ('mem_1', 'project', '/x', 'add', 'c', 'r', 1, "
        "'user', 'a', 'pending', 1, 1)"
    )
    old.execute("PRAGMA user_version=1")
    old.commit()
    old.close()
    with db.connect() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3  # layout (2), then original_content (3)
        cand = db.get(conn, "mem_1")
        assert cand is not None and cand.layout is None and "layout" not in cand.to_json()
        assert cand.original_content is None
