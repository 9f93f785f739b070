"""The SQLite/FTS5 workspace index, drift detection, and the rebuild / search / doctor commands."""

from __future__ import annotations

import builtins
import json
import os
import shutil
from pathlib import Path

import pytest

from memzoi.cli.main import main
from memzoi.stores.index import Index
from memzoi.stores.index_queries import excerpt, fts_query
from memzoi.stores.index_schema import checksum_sql
from memzoi.stores.store import store_path

from .test_revision import attested

TARGET = "semantic/decisions/auth-client-validation"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(h))
    return h


@pytest.fixture
def project(corpus, tmp_path) -> Path:
    """The corpus records plus the example proposals as pending packets, in a project outside git."""
    root = tmp_path / "proj"
    shutil.copytree(corpus / "memzoi-repo/.memzoi", root / ".memzoi")
    shutil.copytree(corpus / "examples/proposals", root / ".memzoi/proposals/pending")
    return root


def cli(capsys, *args: str) -> tuple[int, dict]:
    code = main(list(args))
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in args else out


def test_index_lives_in_the_worktree_runtime_dir(home, project):
    path = store_path(project)
    assert path.name == "memzoi-lsp-store.db"
    assert path.parent.parent.name == "worktrees" and path.parents[2].parent == home / "projects"


def test_rebuild_search_and_lookup(home, project):
    with Index(project) as ix:
        assert not ix.exists
        seen = []
        result = ix.rebuild(lambda done, total: seen.append((done, total)))
        assert result.files == 29 and len(result.record_ids) == 24 and len(result.proposal_ids) == 5
        assert seen[0] == (0, 29) and seen[-1] == (29, 29)
        assert ix.counts() == {"files": 29, "records": 24, "proposals": 5, "refused": 0}
        hits = ix.search("runtime index")
        assert hits and all(h.kind == "record" for h in hits[:2])
        assert "rebuild-runtime-index-after-applying-proposal-files" in [h.id for h in hits[:3]]
        assert "[" in hits[0].snippet
        props = ix.search("server sessions", kinds=("proposal",))
        assert [h.id for h in props][:1] == ["mem_2026_07_06_auth_supersede"]
        row = ix.record("rust-msrv-is-1-96-1")
        assert row["title"] == "Rust MSRV is 1.96.1+" and row["attestation"] == "unattested"
        assert row["content_hash"] and row["revision"] is None
        assert ix.drift().clean


def test_search_excerpt_is_linear_in_a_body_that_repeats_the_query(home, project):
    # FTS5's snippet() costs the square of a document's matches: a record repeating the word 160,000 times kept
    # `memzoi search` busy for minutes. The excerpt is made in Python from the first match instead.
    rec = project / ".memzoi/records/prefer-source-files-below-1000-lines.md"
    rec.write_text(rec.read_text(encoding="utf-8") + "\nSee the wordlist: " + "word " * 20000 + "\n", encoding="utf-8")
    with Index(project) as ix:
        ix.rebuild()
        statements: list[str] = []
        ix.db.set_trace_callback(statements.append)
        (hit,) = ix.search("wordlist word", kinds=("record",))
        ix.db.set_trace_callback(None)
        assert not any("snippet(" in s for s in statements)
    assert hit.id == "prefer-source-files-below-1000-lines"
    assert hit.snippet == "…See the [wordlist]: " + " ".join(["[word]"] * 9) + "…"


def test_excerpt_prefers_the_title_marks_prefixes_and_falls_back_to_the_body():
    assert excerpt("Rebuild runtime index after applying proposal files", "x", "runtime ind") == (
        "Rebuild [runtime] [index] after applying proposal files"
    )
    assert excerpt("Title", "one two three four five", "FOUR") == "…two three [four] five"
    assert excerpt("Title", "alpha beta", "zzz") == "alpha beta"
    assert excerpt("Title", "", "zzz") == ""


def test_search_never_echoes_a_secret_typed_into_the_query(home, project, capsys, monkeypatch):
    token = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"  # assembled: no credential shape in the source
    monkeypatch.chdir(project)
    assert main(["rebuild"]) == 0
    capsys.readouterr()
    assert main(["search", "deploy", token]) == 0
    out, err = capsys.readouterr()
    assert "no matches" in err and token not in out + err
    code, found = cli(capsys, "search", "deploy", token, "--json")
    assert code == 0 and token not in json.dumps(found) and found["query"].startswith("deploy ")


def test_doctor_names_an_unreadable_file_instead_of_sending_the_user_to_rebuild(home, project, capsys, monkeypatch):
    # A file the user cannot read is skipped by the rebuild; calling it "missing from the index, run memzoi
    # rebuild" sent the user round in a loop. (Tests run as root, which reads a 0000 file: refuse it here.)
    locked = (project / ".memzoi/records/prefer-source-files-below-1000-lines.md").resolve()
    real_open = Path.open

    def guarded(self, *args, **kwargs):
        if self.resolve() == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    real_builtin = builtins.open

    def guarded_builtin(file, *args, **kwargs):  # other readers of files use open()
        if isinstance(file, (str, os.PathLike)) and Path(file).resolve() == locked:
            raise PermissionError(13, "Permission denied", str(file))
        return real_builtin(file, *args, **kwargs)

    real_os_open = os.open

    def guarded_os_open(path, *args, **kwargs):  # and with os.open (memzoi.base.freshness.read_bytes)
        if isinstance(path, (str, os.PathLike)) and Path(path).resolve() == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", guarded)
    monkeypatch.setattr(builtins, "open", guarded_builtin)
    monkeypatch.setattr(os, "open", guarded_os_open)
    monkeypatch.chdir(project)
    assert main(["rebuild"]) == 0
    capsys.readouterr()
    code, doc = cli(capsys, "doctor", "--json")
    checks = {c["name"]: c for c in doc["checks"]}
    assert code == 1 and checks["readable"]["status"] == "warning"
    assert "prefer-source-files-below-1000-lines.md" in checks["readable"]["message"]
    assert checks["repo_index"]["status"] == "ok" and doc["drift"]["missing_from_index"] == []


@pytest.mark.parametrize("query", ['"unbalanced', "NEAR(a b)", "title:x OR", "*", "a AND -b", "", "🙂"])
def test_search_never_interprets_query_syntax(home, project, query):
    with Index(project) as ix:
        ix.rebuild()
        ix.search(query)  # no exception
    assert fts_query("") is None and fts_query('a"b') == '"a"* "b"*'


def test_per_file_update_remove_and_drift(home, project):
    records = project / ".memzoi/records"
    with Index(project) as ix:
        ix.rebuild()
        rec = records / "rust-msrv-is-1-96-1.md"
        rec.write_text(rec.read_text(encoding="utf-8").replace("compiler floor", "compiler minimum"), encoding="utf-8")
        new = records / "brand-new.md"
        new.write_text(
            (records / "rust-msrv-is-1-96-1.md")
            .read_text(encoding="utf-8")
            .replace("rust-msrv-is-1-96-1", "brand-new")
            .replace("compiler minimum", "zeppelin"),
            encoding="utf-8",
        )
        gone = records / "prefer-source-files-below-1000-lines.md"
        gone.unlink()
        d = ix.drift()
        assert d.changed_in_index == [".memzoi/records/rust-msrv-is-1-96-1.md"]
        assert d.missing_from_index == [".memzoi/records/brand-new.md"]
        assert d.stale_in_index == [".memzoi/records/prefer-source-files-below-1000-lines.md"]
        assert not d.clean and not d.fts_out_of_sync
        assert ix.search("zeppelin") == []
        result = ix.refresh()
        assert result.files == 2  # the changed and the new file; the deleted one is dropped
        assert ix.drift().clean
        assert [h.id for h in ix.search("zeppelin")] == ["brand-new"]
        assert ix.search("minimum compiler")[0].id == "rust-msrv-is-1-96-1"
        kept = new.read_bytes()
        new.unlink()
        ix.update_paths([new])  # a missing file's rows are dropped
        assert ix.search("zeppelin") == [] and ix.record("brand-new") is None
        new.write_bytes(kept)
        ix.update_paths([".memzoi/records/brand-new.md"])
        assert [h.id for h in ix.search("zeppelin")] == ["brand-new"]


def test_fts_corruption_and_schema_mismatch_are_drift(home, project):
    with Index(project) as ix:
        ix.rebuild()
        ix.db.execute("DROP TRIGGER records_ai")
        ix.db.execute("INSERT INTO records(path, title, body, admitted) VALUES ('x', 'orphan', 'orphan', 1)")
        assert ix.drift().fts_out_of_sync
        ix.rebuild()
        assert ix.drift().clean
        ix.db.execute("PRAGMA user_version=99")
    with Index(project) as ix:  # a store of another version is dropped and made anew, never served
        assert ix.schema_problem is None and not ix.exists
        assert not ix.drift().clean
        ix.refresh()
        assert ix.exists and ix.drift().clean


def stored(ix: Index, path: Path, column: str):
    """A JSON column of the ``files`` row of ``path``, decoded."""
    return json.loads(ix.db.execute(f"SELECT {column} FROM files WHERE path = ?", (ix._rel(path),)).fetchone()[0])


def test_stale_attested_record_is_refused_and_stores_projection(home, project):
    src = project / ".memzoi/records/rust-msrv-is-1-96-1.md"
    text = attested(src.read_text(encoding="utf-8"), "rust-msrv-is-1-96-1")
    src.write_text(text, encoding="utf-8")
    with Index(project) as ix:
        ix.rebuild()
        row = ix.record("rust-msrv-is-1-96-1")
        assert row["attestation"] == "attested" and json.loads(row["attested_projection"])["title"]
        # Outside git an attested record is refused (review-visibility), per Memzoi's admission order.
        assert stored(ix, src, "refusals") == ["review-visibility"]
        src.write_text(text.replace("compiler floor.", "compiler floor!"), encoding="utf-8")
        ix.update_paths([src])
        assert ix.record("rust-msrv-is-1-96-1")["attestation"] == "stale"
        assert stored(ix, src, "refusals") == ["materialization-revision", "review-visibility"]
        assert {"stale_attestation", "review_visibility"} <= {f["code"] for f in stored(ix, src, "findings")}
        # The projection from when it verified is kept, and names what changed.
        assert ix.record("rust-msrv-is-1-96-1")["attested_projection"] == row["attested_projection"]
        [stale] = [f for f in stored(ix, src, "findings") if f["code"] == "stale_attestation"]
        assert "changed since decision time: `body`" in stale["message"]
        # keep_verified changed the rows the worker sealed: their checksum was taken again (else never served)
        sound = f"files.checksum = {checksum_sql()}"
        assert ix.db.execute(f"SELECT {sound} FROM files WHERE path = ?", (ix._rel(src),)).fetchone()[0] == 1


def test_workspace_from_index_reports_and_resolves_dangling_targets(home, project):
    with Index(project) as ix:
        ix.rebuild()
        ws = ix.workspace()
        pending = project / ".memzoi/proposals/pending"
        dangling = sorted(
            Path(p).name for p in ws.paths() if any(f.code == "dangling_reference" for f in ws.findings_for(p))
        )
        assert dangling == ["mem_2026_07_06_auth_supersede.md", "mem_2026_07_06_auth_tombstone.md"]
        target = project / f".memzoi/records/{TARGET}.md"
        target.parent.mkdir(parents=True)
        from .test_crossfile import record

        target.write_text(record(TARGET, scope="project"), encoding="utf-8")
        ix.update_paths([target])
        ws = ix.workspace()
        assert not any(f.code == "dangling_reference" for p in ws.paths() for f in ws.findings_for(p))
        assert ws.record_paths(TARGET) == [str(target)]
        assert str(pending / "mem_2026_07_06_auth_tombstone.md") in ws.referrers(TARGET)


def test_cli_rebuild_search_doctor_json(home, project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    code, doc = cli(capsys, "doctor", "--json")
    assert code == 1 and doc["status"] == "warning" and doc["next_steps"] == ["memzoi rebuild"]
    code, out = cli(capsys, "rebuild", "--json")
    assert code == 0
    assert set(out) >= {"records_root", "db_path", "record_ids"} and len(out["record_ids"]) == 24
    assert out["db_path"].startswith(str(home))
    code, doc = cli(capsys, "doctor", "--json")
    assert code == 0 and doc["status"] == "ok", doc
    assert {c["name"] for c in doc["checks"]} >= {"records_root", "git", "index", "repo_index", "fts", "admission"}
    assert doc["drift"]["changed_in_index"] == []
    code, found = cli(capsys, "search", "compiler", "floor", "--json")
    assert code == 0 and found["query"] == "compiler floor"
    [hit] = found["records"]
    assert hit["record_id"] == "rust-msrv-is-1-96-1" and hit["destination"] == "repo" and hit["retention"] == {}
    assert hit["origin"]["route"] == "repository_materialization" and found["proposals"] == []
    # An edit is picked up by search (refresh) but reported by doctor until then.
    rec = project / ".memzoi/records/rust-msrv-is-1-96-1.md"
    rec.write_text(rec.read_text(encoding="utf-8") + "\nAlso quasar.\n", encoding="utf-8")
    code, doc = cli(capsys, "doctor", "--json")
    assert code == 1 and doc["drift"]["changed_in_index"] == [".memzoi/records/rust-msrv-is-1-96-1.md"]
    assert any(c["name"] == "repo_index" and c["status"] == "warning" for c in doc["checks"])
    code, found = cli(capsys, "search", "quasar", "--json")
    assert [r["id"] for r in found["records"]] == ["rust-msrv-is-1-96-1"]
    code, doc = cli(capsys, "doctor", "--json")
    assert code == 0
    code, text = cli(capsys, "search", "nothing-matches-this-zzz")
    assert code == 0 and text == ""


def test_rebuild_in_parallel_matches_in_process(home, project, monkeypatch):
    import memzoi.stores.index_build as index_build

    monkeypatch.setattr(index_build, "PARALLEL_THRESHOLD", 2)
    with Index(project, path=project / "a.db", workers=2) as a, Index(project, path=project / "b.db", workers=1) as b:
        ra, rb = a.rebuild(), b.rebuild()
        assert ra.record_ids == rb.record_ids and ra.proposal_ids == rb.proposal_ids
        query = "SELECT path, revision, content_hash, title FROM records ORDER BY path"
        assert a.db.execute(query).fetchall() == b.db.execute(query).fetchall()


def test_check_of_a_subset_uses_the_index_for_the_rest(home, project, monkeypatch):
    """Checking one packet in a large workspace takes the other files' facts from the (refreshed) index."""
    import memzoi.project.crosscheck as crosscheck
    from memzoi.runs.check import check_paths

    monkeypatch.setattr(crosscheck, "INDEX_ASSIST_THRESHOLD", 5)
    with Index(project) as ix:
        ix.rebuild()
    target = project / f".memzoi/records/{TARGET}.md"
    target.parent.mkdir(parents=True)
    from .test_crossfile import record

    target.write_text(record(TARGET, scope="project"), encoding="utf-8")  # not indexed yet: refresh finds it
    analysed = []
    import memzoi.judge.analysis as analysis_mod

    orig = analysis_mod.analyze_path
    monkeypatch.setattr(analysis_mod, "analyze_path", lambda p, **kw: analysed.append(p) or orig(p, **kw))
    packet = project / ".memzoi/proposals/pending/mem_2026_07_06_auth_tombstone.md"
    report = check_paths([str(packet)])
    assert not [l for l in report.findings if l.finding.code == "dangling_reference"]
    assert analysed == []  # the cross-file pass analysed nothing: every other file came from the index


def test_runtime_directories_are_private(home, project):
    import stat as st

    with Index(project) as ix:
        created = [d for d in [ix.path.parent, *ix.path.parent.parents] if home in [d, *d.parents]]
    assert created and all(st.S_IMODE(d.stat().st_mode) == 0o700 for d in created)


def test_commands_refuse_outside_a_project(home, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["rebuild", "--root", str(tmp_path)]) == 2
    assert main(["search", "x", "--root", str(tmp_path)]) == 2
    assert "no .memzoi directory" in capsys.readouterr().err
    assert not home.exists()
