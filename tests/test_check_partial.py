"""Partial re-judging of ``memzoi check`` (:mod:`memzoi.runs.checkpartial`): after a few files changed, only they and
the files sharing a cross-file key with them are judged again, and the report is byte for byte what ``--no-cache``
prints, in every format.

The property test runs random edit scripts over a generated project whose records and packets refer to each
other (supersede chains, proposal targets, shared identities, duplicate bodies, invalid fields): after each edit
the cached run must re-judge partially (it never plans every file) and print ``--no-cache``'s report. Nothing
here measures time.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from memzoi.cli.main import main
from memzoi.project.crossfile import Workspace, related_keys
from memzoi.project.filefacts import FileFacts, Ref
from memzoi.runs import check as checkmod, checkpartial
from memzoi.stores.replayinputs import decode

from .builders import packet, packet_path, record, record_path, write
from .test_admission import git

FORMATS = ("json", "text", "sarif", "github")
RECORDS = ("a", "b", "c", "d", "e")
PACKETS = ("p", "q", "a")  # "a": a packet sharing a record's id
BODIES = ("Body one.", "Body two.", "Shared body.")


def record_text(rid: str, choice: int) -> str:
    """One of several texts of record ``rid``: its status, what it supersedes, its body, a broken field."""
    status = ("active", "superseded")[choice % 2]
    target = (None, "a", "b", "gone")[(choice // 2) % 4]
    body = BODIES[(choice // 8) % 3]
    extra = "lane2: x\n" if (choice // 24) % 2 else ""
    fields = {"supersedes": target} if target is not None else {}
    return record(rid, status=status, body=body, extra=extra, **fields)


def packet_text(pid: str, choice: int) -> str:
    """One of several texts of the pending packet ``pid``: its action, its target, its body."""
    action = ("create", "supersede", "tombstone")[choice % 3]
    target = ("a", "b", "c", "gone")[(choice // 3) % 4] if action != "create" else None
    body = BODIES[(choice // 12) % 3]
    return packet(pid, action=action, target=target, body=body)


FILES = [("record", r) for r in RECORDS] + [("packet", p) for p in PACKETS]


def put(root: Path, which: int, choice: int) -> None:
    kind, name = FILES[which]
    if kind == "record":
        write(root, record_path(name), record_text(name, choice))
    else:
        write(root, packet_path(name), packet_text(name, choice))


def run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check", *argv])
    return code, capsys.readouterr().out


class Counted:
    """How many runs planned every file, and how many re-judged partially."""

    def __init__(self) -> None:
        self.full = 0
        self.partial = 0
        self._plan = checkmod.plan_check
        self._rejudge = checkpartial.rejudge

    def plan(self, *a, **k):
        self.full += 1
        return self._plan(*a, **k)

    def rejudge(self, *a, **k):
        got = self._rejudge(*a, **k)
        self.partial += got is not None
        return got


def project(tmp_path: Path, start: list[int]) -> Path:
    root = tmp_path
    git(root, "init", "-q")
    for which, choice in enumerate(start):
        put(root, which, choice)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "memory")
    return root


edits = st.lists(st.tuples(st.integers(0, len(FILES) - 1), st.integers(0, 47)), min_size=1, max_size=4)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # each example runs git and checks: no slow shrinking
)
@given(start=st.lists(st.integers(0, 47), min_size=len(FILES), max_size=len(FILES)), script=st.lists(edits, max_size=4))
@pytest.mark.parametrize("targets", [(".memzoi",), (".memzoi/records/a.md", ".memzoi/proposals/pending/p.md")])
def test_partial_reports_are_no_cache_reports_for_random_edit_scripts(tmp_path_factory, capsys, targets, start, script):
    """Over the whole project, and over a few of its files (what pre-commit checks: the others' facts count)."""
    root = project(tmp_path_factory.mktemp("proj"), start)
    counted = Counted()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with (
            mock.patch.object(checkmod, "plan_check", counted.plan),
            mock.patch.object(checkpartial, "rejudge", counted.rejudge),
        ):
            assert run(capsys, *targets, "--format", "json") == run(capsys, *targets, "--format", "json", "--no-cache")
            for step in script:
                for which, choice in step:
                    put(root, which, choice)
                counted.full = counted.partial = 0
                cached = run(capsys, *targets, "--format", "json")
                # a step that rewrote files with the same text changed nothing: then the report is replayed
                assert counted.full == 0, "a run with a few changed files judged every file"
                assert cached == run(capsys, *targets, "--format", "json", "--no-cache")
            for fmt in FORMATS:
                assert run(capsys, *targets, "--format", fmt) == run(capsys, *targets, "--format", fmt, "--no-cache")
    finally:
        os.chdir(cwd)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    root = project(tmp_path, [0, 2, 0, 8, 0, 1, 4, 0])
    monkeypatch.chdir(root)
    return root


def test_an_edit_re_judges_partially_in_every_format(repo, capsys):
    counted = Counted()
    with (
        mock.patch.object(checkmod, "plan_check", counted.plan),
        mock.patch.object(checkpartial, "rejudge", counted.rejudge),
    ):
        for fmt in FORMATS:
            run(capsys, ".memzoi", "--format", fmt)
        put(repo, 0, 1)  # record a superseded: b's supersede of it is no longer inconsistent
        for fmt in FORMATS:
            counted.full = counted.partial = 0
            got = run(capsys, ".memzoi", "--format", fmt)
            assert counted.full == 0
            assert got == run(capsys, ".memzoi", "--format", fmt, "--no-cache")
            put(repo, 0, (1, 24, 25, 1)[FORMATS.index(fmt)])  # change it again before the next format
        assert counted.partial >= 1


def test_many_changed_files_are_judged_in_full(repo, capsys, monkeypatch):
    monkeypatch.setattr(checkpartial, "MAX_CHANGED", 1)
    counted = Counted()
    with mock.patch.object(checkmod, "plan_check", counted.plan):
        run(capsys, ".memzoi", "--format", "json")
        put(repo, 0, 1)
        put(repo, 1, 1)
        counted.full = 0
        assert run(capsys, ".memzoi", "--format", "json") == run(capsys, ".memzoi", "--format", "json", "--no-cache")
        assert counted.full == 2  # the cached run and the --no-cache one


def test_a_changed_file_touches_the_files_sharing_a_key_with_its_old_or_new_facts():
    """The relation :func:`related_keys` gives is what a workspace's re-evaluation needs: every file whose
    findings change when one file's facts change shares a key with its old or new facts."""
    old = FileFacts(kind="record", role="record", ident="a", status="active")
    new = FileFacts(kind="record", role="record", ident="a", status="superseded")
    referrer = FileFacts(
        kind="record", role="record", ident="b", status="active", refs=(Ref("supersedes", "a", (0, 1)),)
    )
    ws = Workspace.of({"/a.md": old, "/b.md": referrer})
    ws.evaluate(["/a.md", "/b.md"])
    changed = ws.update("/a.md", new)
    assert changed == {"/b.md"}  # the lifecycle_inconsistent finding went away
    assert set(related_keys(referrer)) & (set(related_keys(old)) | set(related_keys(new)))
    assert not set(related_keys(FileFacts(kind="record", role="record", ident="z"))) & set(related_keys(old))


def test_the_stored_keys_hold_no_byte_of_a_secret_in_a_reference(repo, capsys):
    """A reference is a cross-file key; one that holds a credential is stored as a digest only, and a partial run
    over the file that holds it prints --no-cache's report."""
    import sqlite3
    import zlib

    from memzoi.base.runtime import STORE_DB

    token = "ghp_" + "".join(chr(ord("a") + (i * 5) % 26) for i in range(36))  # built here, never printed
    write(repo, record_path("e"), record("e", supersedes=token))
    counted = Counted()
    with mock.patch.object(checkpartial, "rejudge", counted.rejudge):
        run(capsys, ".memzoi", "--format", "json")
        write(repo, record_path("e"), record("e", supersedes=token, body="Edited."))
        got = run(capsys, ".memzoi", "--format", "json")
    assert counted.partial == 1
    assert got == run(capsys, ".memzoi", "--format", "json", "--no-cache")
    assert "credential_token" in got[1] and token not in got[1]
    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    for f in (db, db.with_name(db.name + "-wal")):
        assert not f.exists() or token.encode() not in f.read_bytes()
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT inputs, report FROM reports").fetchall()
    in_inputs = [token in repr(asdict(decode(i))) for i, _ in stored]
    in_reports = [token.encode() in zlib.decompress(r) for _, r in stored]
    assert stored and not any(in_inputs) and not any(in_reports)  # booleans only: the token is never printed


def test_a_check_of_a_few_files_replays_and_re_judges_partially(repo, capsys):
    """What pre-commit runs: the report of a few files depends on the project's other records and packets too, so
    their bytes and their listing are inputs: an edit of another file re-judges partially, a new file judges again."""
    counted = Counted()
    few = (".memzoi/records/b.md", ".memzoi/records/c.md")
    with (
        mock.patch.object(checkmod, "plan_check", counted.plan),
        mock.patch.object(checkpartial, "rejudge", counted.rejudge),
    ):
        base = {fmt: run(capsys, *few, "--format", fmt, "--no-cache") for fmt in FORMATS}
        assert {fmt: run(capsys, *few, "--format", fmt) for fmt in FORMATS} == base
        counted.full = 0
        assert {fmt: run(capsys, *few, "--format", fmt) for fmt in FORMATS} == base
        assert counted.full == counted.partial == 0, "an unchanged check of a few files judged again"
        put(repo, 0, 1)  # record a, which b supersedes, is no longer active: b's finding changes
        got = run(capsys, *few, "--format", "json")
        assert counted.full == 0 and counted.partial == 1
        assert got == run(capsys, *few, "--format", "json", "--no-cache") != base["json"]
        counted.full = 0
        write(repo, record_path("f"), record("f", body="Body two."))  # a new record: the listing changed
        got = run(capsys, *few, "--format", "json")
        assert counted.full == 1
        assert got == run(capsys, *few, "--format", "json", "--no-cache")


def test_a_check_over_several_projects_replays(tmp_path, capsys, monkeypatch):
    """Two projects in one run: the first project's store keeps the report, whose inputs are both projects'."""
    one, two = tmp_path / "one", tmp_path / "two"
    for root, start in ((one, [0, 2, 0, 8, 0, 1, 4, 0]), (two, [1, 0, 3, 0, 24, 2, 0, 5])):
        root.mkdir()
        project(root, start)
    monkeypatch.chdir(tmp_path)
    both = ("one/.memzoi", "two/.memzoi")
    counted = Counted()
    with (
        mock.patch.object(checkmod, "plan_check", counted.plan),
        mock.patch.object(checkpartial, "rejudge", counted.rejudge),
    ):
        base = {fmt: run(capsys, *both, "--format", fmt, "--no-cache") for fmt in FORMATS}
        assert {fmt: run(capsys, *both, "--format", fmt) for fmt in FORMATS} == base
        counted.full = 0
        assert {fmt: run(capsys, *both, "--format", fmt) for fmt in FORMATS} == base
        assert counted.full == counted.partial == 0, "an unchanged check of two projects judged again"
        put(two, 0, 0)  # record a of the second project becomes active again
        got = run(capsys, *both, "--format", "json")
        assert counted.full == 0 and counted.partial == 1
        assert got == run(capsys, *both, "--format", "json", "--no-cache") != base["json"]


def test_a_check_of_a_few_files_after_a_full_check_is_replayed(repo, capsys, monkeypatch):
    """After a full check the other files' facts come from their entries, which keep the digest of their bytes:
    the report of a few files resting on them is stored and replayed, also when every file is drawn for a re-hash
    (each is read and compared with its entry's digest); an edit of another file is re-judged partially."""
    from memzoi.base import freshness

    monkeypatch.setattr(freshness, "RACY_NS", -1)  # files just written: the blob's stat alone vouches for them
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    counted = Counted()
    few = (".memzoi/records/b.md",)
    with (
        mock.patch.object(checkmod, "plan_check", counted.plan),
        mock.patch.object(checkpartial, "rejudge", counted.rejudge),
    ):
        run(capsys, ".memzoi", "--format", "json")
        counted.full = 0
        first, second = (run(capsys, *few, "--format", "json") for _ in range(2))
        assert counted.full == 1, "the second check of the few files judged again"
        monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)  # every file read and compared with its digest
        assert run(capsys, *few, "--format", "json") == first
        assert counted.full == 1 and counted.partial == 0
        assert first == second == run(capsys, *few, "--format", "json", "--no-cache")
        counted.full = 0
        put(repo, 0, 1)  # record a, which b supersedes, is no longer active: b's finding changes
        got = run(capsys, *few, "--format", "json")
        assert counted.full == 0 and counted.partial == 1
    assert got == run(capsys, *few, "--format", "json", "--no-cache") != first


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    start=st.lists(st.integers(0, 47), min_size=2 * len(FILES), max_size=2 * len(FILES)),
    script=st.lists(
        st.lists(st.tuples(st.integers(0, 2 * len(FILES) - 1), st.integers(0, 47)), min_size=1, max_size=3), max_size=3
    ),
)
def test_partial_reports_over_two_projects_are_no_cache_reports(tmp_path_factory, capsys, start, script):
    """Random edit scripts over two projects with the same ids checked in one run: each project's files are
    re-judged over its own files only."""
    base = tmp_path_factory.mktemp("two")
    roots = [base / "one", base / "two"]
    for i, root in enumerate(roots):
        root.mkdir()
        project(root, start[i * len(FILES) : (i + 1) * len(FILES)])
    both = ("one/.memzoi", "two/.memzoi")
    counted = Counted()
    cwd = os.getcwd()
    os.chdir(base)
    try:
        with (
            mock.patch.object(checkmod, "plan_check", counted.plan),
            mock.patch.object(checkpartial, "rejudge", counted.rejudge),
        ):
            assert run(capsys, *both, "--format", "json") == run(capsys, *both, "--format", "json", "--no-cache")
            for step in script:
                for which, choice in step:
                    put(roots[which // len(FILES)], which % len(FILES), choice)
                counted.full = 0
                cached = run(capsys, *both, "--format", "json")
                assert counted.full == 0, "a run with a few changed files judged every file"
                assert cached == run(capsys, *both, "--format", "json", "--no-cache")
            for fmt in FORMATS:
                assert run(capsys, *both, "--format", fmt) == run(capsys, *both, "--format", fmt, "--no-cache")
    finally:
        os.chdir(cwd)
