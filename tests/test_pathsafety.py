"""Every committed file below `.memzoi` is scanned, file and folder names included, and a secret-bearing path is
shown as Memzoi's `<redacted-path:BLAKE3HEX>` in every output of `memzoi check`, in refusals, the ledger and the
index. Planted secrets are asserted absent without being printed."""

from __future__ import annotations

import json
import os
from urllib.parse import quote, unquote

import blake3
import pytest
from hypothesis import given, settings, strategies as st

from memzoi.base.findings import Severity
from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_text
from memzoi.judge.pathsafety import REDACTED_PREFIX, name_findings, repository_path, shown_id, shown_path
from memzoi.runs.check import check_paths

from . import builders

TOKEN = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"  # a GitHub token shape (Memzoi: credential_token)
ENV = "TO" + "KEN=abcdefgh1234"  # Memzoi's environment_secret


def marker(rel: str) -> str:
    """Memzoi's form: BLAKE3 of the repository-relative path bytes (commands.rs safety_scan_report_path)."""
    return f"<redacted-path:{blake3.blake3(rel.encode()).hexdigest()}>"


def absent(secret: str, *texts: str) -> bool:
    return all(secret not in t for t in texts)


def record(rid: str, body: str = "Use pnpm for installs.", **fields) -> str:
    """A valid record ``rid`` without a ``description`` (a secret planted in the body is in the file once)."""
    return builders.record(rid, type="fact", title="Use pnpm", description=None, body=body, **fields)


# -- the core functions --------------------------------------------------------------------------------------------


def test_shown_path_uses_memzois_marker_over_the_repository_relative_path():
    rel = f".memzoi/records/{TOKEN}.md"
    for spelled in (f"/home/a/proj/{rel}", f"proj/{rel}", rel, f"file:///home/a/proj/{rel}"):
        assert repository_path(spelled) == rel
        assert shown_path(spelled) == marker(rel)
    clean = "/home/a/proj/.memzoi/records/use-pnpm.md"
    assert shown_path(clean) == clean
    # A checkout folder's own name is not the memory's business, a file name outside .memzoi is.
    assert shown_path(f"/srv/{TOKEN}/notes/a.md") == f"/srv/{TOKEN}/notes/a.md"
    assert shown_path(f"notes/{TOKEN}.md") == marker(f"notes/{TOKEN}.md")
    assert shown_id(TOKEN) == marker(TOKEN) and shown_id("use-pnpm") == "use-pnpm" and shown_id(None) is None


#: An id Memzoi's `environment_secret` rule (`NAME=value` at a line start) matches on its own, and not inside its
#: record's path, where it does not start the line.
LINE_START_ID = "SE" + "CRET=abc"


def test_a_clean_path_does_not_vouch_for_the_id_it_names():
    # shown_id scans an id on its own: a rule anchored at a line start matches the id alone and not
    # `.memzoi/records/<id>.md` (and Memzoi's entropy token spans the `/`), so "the path is clean, so the id is"
    # does not hold for an id shown apart from its path
    rel = f".memzoi/records/{LINE_START_ID}.md"
    assert shown_path(rel) == rel and not name_findings(rel)
    assert shown_id(LINE_START_ID) == marker(LINE_START_ID)


def _row_of(tmp_path, name: str, declared: str):
    from datetime import UTC, datetime

    from memzoi.stores.fileentry import entry_chunk

    md = tmp_path / "proj" / ".memzoi"
    (md / "records").mkdir(parents=True)
    path = md / "records" / f"{name}.md"
    # the frontmatter names another id: the document's own scan does not see the path's id
    path.write_text(record(declared), encoding="utf-8")
    [made] = entry_chunk([(str(path), "tracked")], now=datetime.now(UTC), root=str(md.parent))
    assert made is not None and made.row is not None
    return made.row


def test_the_index_row_judges_a_records_path_id_with_its_path(tmp_path):
    # The row keeps a record's path in clear when Memzoi's path scan finds nothing; the id below records/ is bytes
    # of that path, so it is kept (and redacted) exactly as its path is: redacting the id alone would leave the
    # same bytes in `files.path`, `records.path` and `files.facts` beside it
    row = _row_of(tmp_path, LINE_START_ID, "use-pnpm")
    assert row["file"]["path"] == row["record"]["path"] == f".memzoi/records/{LINE_START_ID}.md"
    assert row["record"]["id"] == LINE_START_ID


def test_the_index_row_redacts_a_records_path_id_with_its_path(tmp_path):
    row = _row_of(tmp_path, TOKEN, "use-pnpm")
    assert row["file"]["path"].startswith(REDACTED_PREFIX) and row["record"]["id"].startswith(REDACTED_PREFIX)
    assert all(TOKEN not in str(v) for part in row.values() for v in part.values())


def test_name_findings_cover_file_and_folder_names_with_memzois_codes():
    # Memzoi's entropy rule also matches the path piece around the token: only that code may come beside it
    found = name_findings(f"p/.memzoi/records/{TOKEN}.md")
    assert {g.code for g in found} <= {"credential_token", "high_entropy_value"}
    (f,) = [g for g in found if g.code == "credential_token"]
    assert (f.code, f.severity, f.start, f.end) == ("credential_token", Severity.ERROR, 0, 0)
    assert "file name" in f.message and absent(TOKEN, f.message)
    (g,) = [g for g in name_findings(f"p/.memzoi/proposals/pending/{TOKEN}/x.md") if g.code == "credential_token"]
    assert "folder" in g.message
    assert name_findings("p/.memzoi/records/use-pnpm-for-installs-2026.md") == []
    assert name_findings(f"p/notes/{TOKEN}.md") == []  # outside .memzoi: not a memory file


def test_a_name_finding_says_where_the_match_lies_when_it_spans_folders_and_file_name():
    # Memzoi's entropy rule reads `memzoi/records/<name>` as one token: the hit starts in a folder and ends in the
    # file name, so the message must not blame only "a folder above it"
    (g,) = [g for g in name_findings(f"p/.memzoi/records/notes-{TOKEN}.md") if g.code == "high_entropy_value"]
    assert "file path" in g.message and "folder above" not in g.message and absent(TOKEN, g.message)


def test_a_record_named_after_a_token_is_credential_token_not_only_invalid_identifier():
    analysis = analyze_text(record("x"), f"p/.memzoi/records/{TOKEN}.md")
    codes = {f.code for f in analysis.findings}
    assert {"credential_token", "invalid_identifier"} <= codes
    assert absent(TOKEN, *(f.message for f in analysis.findings))


# -- every committed file is scanned ---------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    md = tmp_path / ".memzoi"
    (md / "records").mkdir(parents=True)
    (md / "proposals" / "pending").mkdir(parents=True)
    (md / "records" / "use-pnpm.md").write_text(record("use-pnpm"), encoding="utf-8")
    return md


def _errors(report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for loc in report.findings:
        if loc.finding.severity == Severity.ERROR:
            out.setdefault(loc.path.split(".memzoi/", 1)[-1], set()).add(loc.finding.code)
    return out


def test_reserved_config_and_stray_files_are_scanned_with_memzois_codes(project):
    (project / "index.md").write_text(f"# Index\n\nDeploy with {TOKEN}\n", encoding="utf-8")
    (project / "records" / "log.md").write_text(f"notes\n{ENV}\n", encoding="utf-8")
    (project / "config.toml").write_text(f'[project]\nid = "demo"\n# ci: {TOKEN}\n', encoding="utf-8")
    (project / "proposals" / "draft.md").write_text(f"a packet in the wrong place: {TOKEN}\n", encoding="utf-8")
    (project / "proposals" / "drafts").mkdir()
    (project / "proposals" / "drafts" / "x.md").write_text("postgres://u:pw@db/app\n", encoding="utf-8")
    (project / "notes.txt").write_text(f"{ENV}\n", encoding="utf-8")
    report = check_paths([str(project)])
    assert _errors(report) == {
        "index.md": {"credential_token"},
        "records/log.md": {"environment_secret"},
        "config.toml": {"credential_token"},
        "proposals/draft.md": {"credential_token"},
        "proposals/drafts/x.md": {"connection_string", "credentialed_url"},  # Memzoi's gate gives both
        "notes.txt": {"environment_secret"},
    }
    assert report.has_errors and report.files_checked == 7
    assert absent(TOKEN, *(l.finding.message for l in report.findings))


def test_hidden_files_below_memzoi_are_scanned_as_stray_files(capsys, project, monkeypatch):
    # Memzoi skips hidden entries, but git commits them: every one below .memzoi is scanned for secrets
    (project / ".env").write_text(f"{ENV}\n", encoding="utf-8")
    (project / "records" / ".hidden.md").write_text(f"{ENV}\n", encoding="utf-8")
    (project / "records" / ".drafts").mkdir()
    (project / "records" / ".drafts" / "a.md").write_text(record("a", f"Body with {TOKEN}."), encoding="utf-8")
    monkeypatch.chdir(project.parent)
    assert main(["check"]) == 1  # no path: the project's .memzoi
    out = capsys.readouterr().out
    assert ".memzoi/.env:1:1: environment_secret" in out
    assert ".memzoi/records/.hidden.md:1:1: environment_secret" in out
    # a hidden file is never a record to Memzoi: scanned only, no schema findings, whatever it holds
    got = {(l.path.split(".memzoi/", 1)[-1], l.finding.code) for l in check_paths([str(project)]).findings}
    assert got == {
        (".env", "environment_secret"),
        ("records/.hidden.md", "environment_secret"),
        ("records/.drafts/a.md", "credential_token"),
    }
    assert absent(TOKEN, out)


@pytest.mark.parametrize(
    "name", [".x.md.swp", ".x.md.swo", "x.md~", ".#x.md", "#x.md#", "4913", ".x.md.0123456789ab.tmp"]
)
def test_editor_swap_backup_and_lock_files_are_skipped_by_the_walk_but_checked_by_name(project, name):
    path = project / "records" / name
    path.write_text(f"{ENV}\n", encoding="utf-8")
    report = check_paths([str(project)])
    assert report.findings == [] and report.files_checked == 1  # only use-pnpm.md
    assert any(why == "editor swap, backup or lock file" for _, why in report.skipped)
    # pre-commit passes staged files by name: a staged swap file is checked like any other
    assert "environment_secret" in {l.finding.code for l in check_paths([str(path)]).findings}


@settings(max_examples=400, deadline=None)
@given(
    name=st.text(st.sampled_from(".#~4913abc.-swptmp0123456789ef\n "), min_size=1, max_size=24)
    | st.sampled_from(["x.md~\n", "4913\n", "#a#\n", ".a.swp\n", "4913x", "a~b", ".a.0123456789ab.tmp"])
)
def test_the_quick_test_of_an_editor_name_is_the_pattern(name):
    """:func:`memzoi.judge.workspace.editor_temporary` skips the search for names no alternative can match: it
    answers as the pattern alone does, trailing newlines (which `$` reads past) included."""
    from memzoi.judge import workspace

    assert workspace.editor_temporary(name) is (workspace._EDITOR_TEMPORARY.search(name) is not None)


def test_a_git_folder_below_memzoi_is_not_walked(project):
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text(f"{ENV}\n", encoding="utf-8")
    assert check_paths([str(project)]).findings == []


def test_reserved_file_with_frontmatter_below_records_is_a_warning_and_still_scanned(project):
    (project / "records" / "index.md").write_text(record("index", f"Body with {TOKEN}."), encoding="utf-8")
    (project / "index.md").write_text(record("index"), encoding="utf-8")  # not below records/: Memzoi never looks
    report = check_paths([str(project)])
    got = sorted((l.path.split(".memzoi/", 1)[-1], l.finding.code, l.finding.severity.label) for l in report.findings)
    assert got == [("records/index.md", "credential_token", "error"), ("records/index.md", "reserved_file", "warning")]
    [reserved] = [l.finding for l in report.findings if l.finding.code == "reserved_file"]
    assert "Memzoi ignores this file" in reserved.message and "still scanned for secrets" in reserved.message


def test_clean_reserved_and_config_files_give_nothing(project):
    (project / "index.md").write_text("# Index\n\n- [use pnpm](records/use-pnpm.md)\n", encoding="utf-8")
    (project / "config.toml").write_text('[project]\nid = "demo"\n', encoding="utf-8")
    assert check_paths([str(project)]).findings == []


# -- redacted paths in the four output formats -------------------------------------------------------------------


def _secret_workspace(project):
    (project / "records" / f"{TOKEN}.md").write_text(record("x"), encoding="utf-8")
    # Another record naming it: the cross-file message must not repeat the id either.
    (project / "records" / "use-pnpm.md").write_text(record("use-pnpm", supersedes=TOKEN), encoding="utf-8")
    return f".memzoi/records/{TOKEN}.md"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_redacted_path_in_every_output_format(capsys, project, fmt):
    rel = _secret_workspace(project)
    code = main(["check", str(project), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 1
    leaked = not absent(TOKEN, out, err)
    assert not leaked, "the token leaked into the output"
    # Workflow commands escape `:` in properties; SARIF artifact URIs percent-encode the marker.
    shown = {"github": marker(rel).replace(":", "%3A"), "sarif": quote(marker(rel), safe="")}.get(fmt, marker(rel))
    assert shown in out
    if fmt == "json":
        paths = {f["path"] for f in json.loads(out)["findings"] if f["code"] == "credential_token"}
        assert marker(rel) in paths
    elif fmt == "sarif":
        uris = {
            unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in json.loads(out)["runs"][0]["results"]
        }
        assert marker(rel) in uris
        import jsonschema

        from .test_cli_options import sarif_schema  # the redacted form is still a valid SARIF URI

        jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.FormatChecker()).validate(json.loads(out))
    elif fmt == "github":
        assert f"file={shown},line=1,col=1" in out
    else:
        assert f"{marker(rel)}:1:1: credential_token" in out


def test_text_read_from_stdin_is_named_redacted(project):
    from memzoi.runs.check import check_text

    rel = f".memzoi/records/{TOKEN}.md"
    report = check_text(record("x").encode(), str(project.parent / rel))
    assert {l.path for l in report.findings} == {marker(rel)}
    assert "credential_token" in {l.finding.code for l in report.findings}


# -- pending packets ---------------------------------------------------------------------------------------------


def packet_text(*, sensitivity="repo-safe", scope="repo", body="Validate sessions on the server.") -> str:
    """A pending create packet ``prop-a`` whose sensitivity, scope kind and body can be varied."""
    return builders.packet(
        "prop-a",
        title="Prefer server sessions",
        description="Prefer server sessions.",
        scope={"kind": scope},
        sensitivity=sensitivity,
        body=body,
    )


def _packet(project, *, sensitivity="repo-safe", scope="repo", body="Validate sessions on the server."):
    text = packet_text(sensitivity=sensitivity, scope=scope, body=body)
    (project / "proposals" / "pending" / "prop-a.md").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("sensitivity", ["secret", "sensitive", "private-personal-data"])
def test_pending_packet_with_non_repo_safe_sensitivity_fails_check(capsys, project, sensitivity):
    _packet(project, sensitivity=sensitivity)
    assert main(["check", str(project)]) == 1
    out = capsys.readouterr().out
    assert "sensitivity_not_repo_safe" in out and "already in git" in out


def test_pending_packet_detector_finding_fails_check(capsys, project):
    _packet(project, body=f"CI pushes with {TOKEN}.")
    assert main(["check", str(project)]) == 1
    assert "credential_token" in capsys.readouterr().out


def test_pending_packet_that_only_cannot_be_applied_yet_passes_with_a_warning(capsys, project):
    _packet(project, scope="project")  # no [project] id configured: scope_project_mismatch
    assert main(["check", str(project), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["code"], f["severity"]) for f in found] == [("scope_project_mismatch", "warning")]


# -- refusals, the ledger and the index never hold the path ------------------------------------------------------


def test_lifecycle_refusal_and_ledger_never_hold_a_secret_bearing_path(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    md = tmp_path / "proj" / ".memzoi"
    (md / "proposals" / "pending").mkdir(parents=True)
    (md / "records").mkdir()
    text = packet_text(body="Body.")
    path = md / "proposals" / "pending" / f"{TOKEN}.md"
    path.write_text(text, encoding="utf-8")
    for argv in (["proposals", "apply", str(path)], ["proposals", "reject", str(path), "--reason", "no"]):
        code = main([*argv, "--root", str(md.parent), "--json"])
        out, err = capsys.readouterr()
        assert code == 1
        leaked = not absent(TOKEN, out, err)
        assert not leaked, "the token leaked into a refusal"
        assert "<redacted-path:" in out + err
    assert path.read_text(encoding="utf-8") == text  # nothing written
    home = tmp_path / "home"
    for dirpath, _, names in os.walk(home):
        for name in names:
            leaked = TOKEN.encode() in (open(os.path.join(dirpath, name), "rb").read())
            assert not leaked, "the token reached the runtime plane"


def test_index_stores_the_redacted_path_and_id(tmp_path, monkeypatch):
    from memzoi.stores.index import Index

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    md = tmp_path / "proj" / ".memzoi"
    (md / "records").mkdir(parents=True)
    (md / "records" / f"{TOKEN}.md").write_text(record("x"), encoding="utf-8")
    (md / "records" / "use-pnpm.md").write_text(record("use-pnpm"), encoding="utf-8")
    with Index(md.parent) as ix:
        ix.rebuild()
        rel = f".memzoi/records/{TOKEN}.md"
        assert {r["path"] for r in ix.db.execute("SELECT path FROM files")} == {
            marker(rel),
            ".memzoi/records/use-pnpm.md",
        }
        assert ix.refresh().files == 0  # the redacted key is stable: nothing re-indexed
        ix.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored = b"".join(open(os.path.join(d, n), "rb").read() for d, _, ns in os.walk(tmp_path / "home") for n in ns)
    leaked = TOKEN.encode() in stored
    assert not leaked, "the token reached the index"


def _repository_path_by_parts(text: str) -> str | None:
    """The rule as first written: split into components, join from the last `.memzoi` on."""
    parts = text.split("/")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == ".memzoi":
            return "/".join(parts[i:])
    return None


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["", ".", "..", ".memzoi", "memzoi", ".memzoix", "x.memzoi", "records", "a.md"]), max_size=7
    )
)
def test_the_repository_path_found_by_search_is_the_one_found_by_parts(parts):
    text = "/".join(parts)
    for spelled in (text, "/" + text, text + "/"):
        assert repository_path(spelled) == _repository_path_by_parts(spelled), spelled
