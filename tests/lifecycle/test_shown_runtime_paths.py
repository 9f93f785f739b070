"""A project folder or a memzoi home whose name bears a credential is never printed: ``memzoi doctor`` (text and
``--json``, which the language server's ``memzoi.doctor`` returns), ``memzoi rebuild`` and a runtime failure's
message show each such path as ``<redacted-path:…>`` (:func:`memzoi.judge.pathsafety.shown_local_path`).

The tokens are built here, so no credential is in the repository's files; assertion messages never quote output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memzoi.cli.main import main
from memzoi.judge.pathsafety import REDACTED_PREFIX, redacted_path, shown_local_path, with_shown_paths

from ..resident.reflection_helpers import ADD, transcript, user_config
from ..resident.stub_endpoint import Reply, Stub, call
from ..secret_names import HOME_TOKEN, ROOT_TOKEN, assert_no_token
from .conftest import TARGET_ID, seed


def run(capsys, repo: Path, *argv: str) -> tuple[int, str]:
    """``memzoi ARGV --root REPO``: its exit code and stdout plus stderr."""
    capsys.readouterr()
    code = main([*argv, "--root", str(repo)])
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def secret_repo(tmp_path, monkeypatch) -> Path:
    """A seeded repository in a folder named after a token, with a memzoi home named after another one."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / HOME_TOKEN))
    monkeypatch.setenv("MEMZOI_ACTOR", "reviewer")
    return seed(tmp_path / ROOT_TOKEN)


def checks(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.parametrize("built", [False, True], ids=["no-index", "index"])
def test_doctor_shows_no_secret_bearing_root_or_runtime_path(secret_repo, capsys, built):
    if built:
        code, out = run(capsys, secret_repo, "rebuild")
        assert code == 0
        assert_no_token(out)
        assert "index: " + REDACTED_PREFIX in out
        home = Path(os.environ["MEMZOI_HOME"])
        home.chmod(0o755)  # runtime_modes then lists the home, whose name bears the token
        (home / "projects").chmod(0o755)
    code, out = run(capsys, secret_repo, "doctor", "--json")
    assert_no_token(out)
    report = json.loads(out)
    assert report["project_root"] == redacted_path(str(secret_repo))
    assert isinstance(report["index_path"], str) and report["index_path"].startswith(REDACTED_PREFIX)
    found = checks(report)
    assert found["records_root"]["message"].startswith(REDACTED_PREFIX)
    assert REDACTED_PREFIX in found["git"]["message"] and REDACTED_PREFIX in found["index"]["message"]
    if built:
        assert found["runtime_modes"]["status"] == "warning"
        assert found["runtime_modes"]["message"].count(REDACTED_PREFIX) == 2
        assert "(0755)" in found["runtime_modes"]["message"]
    code, text = run(capsys, secret_repo, "doctor")
    assert_no_token(text)
    assert f"project: {redacted_path(str(secret_repo))}" in text


def test_doctor_shows_plain_paths_as_they_are(repo, capsys):
    code, out = run(capsys, repo, "doctor", "--json")
    report = json.loads(out)
    assert report["project_root"] == str(repo) and REDACTED_PREFIX not in out
    assert report["index_path"].startswith(os.environ["MEMZOI_HOME"])


def test_a_runtime_dir_that_is_not_writable_is_named_redacted(secret_repo, capsys, monkeypatch):
    assert run(capsys, secret_repo, "rebuild")[0] == 0
    from memzoi.runs import doctor

    monkeypatch.setattr(doctor.os, "access", lambda *_: False)  # root may write anywhere: asked, not made
    code, out = run(capsys, secret_repo, "doctor", "--json")
    assert_no_token(out)
    message = checks(json.loads(out))["runtime_dir"]["message"]
    assert message.startswith(REDACTED_PREFIX) and message.endswith("is not writable")


def test_a_damaged_index_is_named_redacted(secret_repo, capsys):
    assert run(capsys, secret_repo, "rebuild")[0] == 0
    [db] = Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-store.db")
    db.write_bytes(b"garbage" * 1000)
    code, out = run(capsys, secret_repo, "doctor", "--json")
    assert_no_token(out)
    index = checks(json.loads(out))["index"]
    assert index["status"] == "warning" and REDACTED_PREFIX in index["message"]


def test_a_symlinked_records_folder_is_named_redacted(secret_repo, capsys, tmp_path):
    records = secret_repo / ".memzoi" / "records"
    records.rename(tmp_path / "elsewhere")
    records.symlink_to(tmp_path / "elsewhere")
    code, out = run(capsys, secret_repo, "doctor", "--json")
    assert_no_token(out)
    assert REDACTED_PREFIX in checks(json.loads(out))["canonical_path"]["message"]


@pytest.mark.parametrize("as_json", [False, True])
def test_a_runtime_failure_names_its_database_redacted(secret_repo, capsys, as_json):
    code, out = run(capsys, secret_repo, "tombstone", TARGET_ID, "--reason", "obsolete", "--json")
    assert code == 0
    [ledger] = Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-ledger.db")
    ledger.write_bytes(b"garbage" * 1000)
    code, out = run(capsys, secret_repo, "history", *(["--json"] if as_json else []))
    assert code == 1 and "corrupt_database" in out
    assert_no_token(out)
    assert REDACTED_PREFIX in out


def test_rebuild_json_names_its_paths_redacted(secret_repo, capsys):
    code, out = run(capsys, secret_repo, "rebuild", "--json")
    assert code == 0
    assert_no_token(out)
    report = json.loads(out)
    assert report["db_path"].startswith(REDACTED_PREFIX) and report["records_root"].startswith(REDACTED_PREFIX)


#: Folder names too short to bear a credential.
names = st.lists(st.text(alphabet="abcdefgh-_", min_size=1, max_size=6), min_size=1, max_size=5)


@given(names, names, st.sampled_from([ROOT_TOKEN, HOME_TOKEN, ROOT_TOKEN.upper().replace("GHP_", "ghp_")]))
def test_any_name_of_a_local_path_that_bears_a_token_redacts_it(before, after, token):
    plain = "/" + "/".join(before + after)
    assert shown_local_path(plain) == plain
    path = "/" + "/".join([*before, token, *after])
    shown = shown_local_path(path)
    assert shown == redacted_path(path)
    message = f"index {path} cannot be written: the disk holding {os.path.dirname(path)} is full"
    if token in with_shown_paths(message, path):
        pytest.fail("a message kept the token")
    assert with_shown_paths(f"index {plain} is damaged", plain) == f"index {plain} is damaged"


@pytest.mark.parametrize("as_json", [False, True])
def test_init_names_its_paths_redacted(tmp_path, monkeypatch, capsys, as_json):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / HOME_TOKEN))
    root = tmp_path / ROOT_TOKEN
    root.mkdir()
    capsys.readouterr()
    assert main(["init", str(root), *(["--json"] if as_json else [])]) == 0
    out, err = capsys.readouterr()
    assert_no_token(out + err)
    if as_json:
        report = json.loads(out)
        assert report["project_root"] == redacted_path(str(root.resolve()))
        assert all(p.startswith(REDACTED_PREFIX) for p in [*report["created"], report["runtime_dir"]])
    else:
        assert f"runtime directory: {REDACTED_PREFIX}" in out and f"created {REDACTED_PREFIX}" in out


@pytest.mark.parametrize("as_json", [False, True])
def test_export_names_its_files_redacted(secret_repo, capsys, as_json):
    code, out = run(capsys, secret_repo, "export", *(["--json"] if as_json else []))
    assert code == 0
    assert_no_token(out)
    if as_json:
        report = json.loads(out)
        assert report["exports_dir"].startswith(REDACTED_PREFIX) and report["files"]
        assert all(f["path"].startswith(REDACTED_PREFIX) for f in report["files"])
    else:
        assert REDACTED_PREFIX in out


@pytest.mark.parametrize("as_json", [False, True])
def test_materialize_template_names_its_output_redacted(secret_repo, capsys, as_json):
    draft = secret_repo / "draft.md"
    code, out = run(capsys, secret_repo, "materialize", "template", "--output", str(draft), *(["--json"] * as_json))
    assert code == 0 and draft.is_file()
    assert_no_token(out)
    assert REDACTED_PREFIX in out


def test_an_unreadable_input_file_is_named_redacted(secret_repo, capsys):
    code, out = run(capsys, secret_repo, "materialize", "candidate", str(secret_repo / "missing-draft.md"))
    assert code == 1 and "unreadable" in out
    assert_no_token(out)
    assert REDACTED_PREFIX in out


def test_an_input_file_that_cannot_be_read_is_named_redacted(secret_repo):
    from memzoi.cli._changes import read_text_file
    from memzoi.ledger import Refusal

    with pytest.raises(Refusal) as caught:
        read_text_file(str(secret_repo / "missing.json"))
    assert caught.value.code == "unreadable" and caught.value.message.startswith(REDACTED_PREFIX)
    assert_no_token(caught.value.message)


def test_integrate_list_names_an_unreadable_file_without_the_root(secret_repo, capsys, monkeypatch):
    (secret_repo / "AGENTS.md").write_text("# agents\n", encoding="utf-8")
    real = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self.name == "AGENTS.md":  # root may read every file: the refusal is made, not provoked
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    code, out = run(capsys, secret_repo, "integrate", "list", "--json")
    assert code == 0
    assert_no_token(out)
    [entry] = json.loads(out)["files"]
    assert entry["error"] == "AGENTS.md: cannot read (Permission denied)"


@pytest.mark.parametrize("as_json", [False, True])
def test_resident_show_names_the_project_file_redacted(secret_repo, capsys, as_json):
    code, out = run(capsys, secret_repo, "resident", "show", *(["--json"] * as_json))
    assert code == 0
    assert_no_token(out)
    if as_json:
        [project] = [s for s in json.loads(out)["scopes"] if s["scope"] == "project"]
        assert project["path"].startswith(REDACTED_PREFIX)
    else:
        assert f"# project: {REDACTED_PREFIX}" in out


@pytest.fixture
def resident_repo(secret_repo, tmp_path, monkeypatch) -> Path:
    """``secret_repo`` with a project resident file and Zuno's configuration (a reflection model whose endpoint
    is never called here) in ``tmp_path``."""
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    user_config(tmp_path, "http://127.0.0.1:9/v1")
    (secret_repo / ".zuno").mkdir()
    (secret_repo / ".zuno" / "RULES.md").write_text("Run make lint.\n", encoding="utf-8")
    return secret_repo


@pytest.mark.parametrize("as_json", [False, True])
def test_resident_state_names_its_files_redacted(resident_repo, capsys, as_json):
    code, out = run(capsys, resident_repo, "resident", "state", *(["--json"] * as_json))
    assert code == 0
    assert_no_token(out)
    if as_json:
        [project] = [f for f in json.loads(out)["files"] if f["scope"] == "project"]
        assert project["path"] == redacted_path(resident_repo.resolve() / ".zuno" / "RULES.md")
    else:
        assert f"# project: {REDACTED_PREFIX}" in out


def test_reflection_jobs_name_their_project_redacted(resident_repo, capsys):
    code, out = run(capsys, resident_repo, "resident", "turn", "--session", "s", "--message", "m1", "--json")
    assert code == 0
    assert_no_token(out)
    job = json.loads(out)["job"]
    assert job["project_root"] == redacted_path(resident_repo.resolve())
    for argv in (["jobs", "--json"], ["job", job["id"], "--json"], ["state", "--json"], ["job", job["id"]]):
        code, out = run(capsys, resident_repo, "resident", *argv)
        assert code == 0 and job["id"] in out
        assert_no_token(out)


def test_a_reflection_names_its_job_and_candidate_redacted(resident_repo, tmp_path, capsys):
    with Stub() as stub:
        user_config(tmp_path, stub.url)
        stub.replies.append(Reply("json", [call("propose_resident_memory", ADD)]))
        run(capsys, resident_repo, "resident", "turn", "--session", "s", "--message", "msg_1")
        code, out = run(
            capsys,
            resident_repo,
            "resident",
            "reflect",
            "--session",
            "s",
            "--transcript",
            str(transcript(tmp_path)),
            "--json",
        )
    assert code == 0
    assert_no_token(out)
    assert json.loads(out)["job"]["project_root"] == redacted_path(resident_repo.resolve())
    code, out = run(capsys, resident_repo, "resident", "state", "--json")
    assert_no_token(out)
    [cand] = json.loads(out)["memory_candidates"]
    assert cand["path"] == redacted_path(resident_repo.resolve() / ".zuno" / "RULES.md")


def test_resident_remove_json_names_its_file_redacted(resident_repo, capsys):
    code, out = run(capsys, resident_repo, "resident", "remove", "lint", "--json")
    assert code == 0
    assert_no_token(out)
    assert json.loads(out)["target_path"] == redacted_path(resident_repo.resolve() / ".zuno" / "RULES.md")


def _denied(monkeypatch) -> None:
    """Reading RULES.md fails as for a file of another user (root may read every file: the failure is made)."""
    from memzoi.resident import store

    real = store.read_state

    def denied(path):
        if Path(path).name == "RULES.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(store, "read_state", denied)


def test_the_resident_store_names_an_unreadable_file_redacted(resident_repo, monkeypatch):
    from memzoi.ledger import Refusal
    from memzoi.resident.store import read_raw

    _denied(monkeypatch)
    with pytest.raises(Refusal) as caught:
        read_raw(resident_repo / ".zuno" / "RULES.md")
    shown = redacted_path(resident_repo / ".zuno" / "RULES.md")
    assert caught.value.code == "unreadable" and caught.value.path == shown
    assert caught.value.message == f"{shown}: cannot read (Permission denied); check permissions"
    assert_no_token(caught.value.message)


def test_resident_state_names_an_unreadable_file_redacted(resident_repo, capsys, monkeypatch):
    _denied(monkeypatch)
    code, out = run(capsys, resident_repo, "resident", "state", "--json")
    assert code == 0
    assert_no_token(out)
    [project] = [f for f in json.loads(out)["files"] if f["scope"] == "project"]
    assert project["error"].startswith(REDACTED_PREFIX) and "cannot read (Permission denied)" in project["error"]


#: ``memzoi resident propose`` of one project line, in JSON.
PROPOSE = ("resident", "propose", "--scope", "project", "--action", "add", "--content", "Run make test.")
PROPOSE += ("--reason", "asked", "--confidence", "0.5", "--json")


def test_resident_propose_and_list_json_name_the_file_redacted(resident_repo, capsys):
    shown = redacted_path(resident_repo.resolve() / ".zuno" / "RULES.md")
    code, out = run(capsys, resident_repo, *PROPOSE)
    assert code == 0
    assert_no_token(out)
    assert json.loads(out)["target_path"] == shown
    code, out = run(capsys, resident_repo, "resident", "list", "--json")
    assert code == 0
    assert_no_token(out)
    assert [c["target_path"] for c in json.loads(out)["candidates"]] == [shown]


@pytest.mark.parametrize("damage", ["symlink", "utf16"])
def test_a_resident_write_refusal_names_the_file_redacted(resident_repo, capsys, damage):
    rules = resident_repo / ".zuno" / "RULES.md"
    if damage == "symlink":
        real = resident_repo / "real-rules.md"
        rules.rename(real)
        rules.symlink_to(real)
    else:
        rules.write_bytes("Run make lint.\n".encode("utf-16"))
    code, out = run(capsys, resident_repo, *PROPOSE)
    assert code == 1
    assert_no_token(out)
    error = json.loads(out)["error"]
    assert error["code"] == ("unsafe_path" if damage == "symlink" else "unreadable")
    assert error["path"].startswith(REDACTED_PREFIX) and error["message"].startswith(REDACTED_PREFIX)
