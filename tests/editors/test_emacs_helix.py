"""editors/emacs in a real batch Emacs 28 with eglot (Debian packages, installed by scripts/install_emacs.sh), and
the Helix configuration's shape (no Helix build is reachable from the package registries CI can use)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests import builders

from .conftest import (
    PREREQS_HINT,
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
# A hang guard for one batch Emacs run (seconds when the machine is idle).
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def emacs_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Runs tests/editors/emacs_e2e.el once against a corpus workspace; returns the paths, process and report."""
    from ..conftest import corpus_or_skip

    corpus = corpus_or_skip()
    emacs = shutil.which("emacs")
    require(emacs is not None, f"emacs is not installed: {PREREQS_HINT}")
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    tmp = tmp_path_factory.mktemp("emacs")
    ws = make_workspace(tmp / "ws", corpus)
    (ws["root"] / "NOTES.md").write_text("# Notes\n")
    # A pending packet with an error finding (its lane is not Memzoi's), rejected by its uri from another buffer.
    builders.write(ws["root"], builders.packet_path("mem_bad_lane"), builders.packet("mem_bad_lane", lane="nonsense"))
    # Resident memory: a project cap of 10 characters, a 9-character entry and two pending candidates.
    (ws["root"] / ".memzoi" / "config.toml").write_text("[resident]\nproject_char_limit = 10\n", encoding="utf-8")
    (ws["root"] / ".zuno").mkdir()
    (ws["root"] / ".zuno" / "RULES.md").write_text("Use tabs.", encoding="utf-8")
    out = tmp / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
        MEMZOI_HOME=str(tmp / "memzoi-home"),
        MEMZOI_ACTOR="reviewer",
        HOME=str(tmp / "home"),
        ZUNO_CONFIG_DIR=str(tmp / "zuno"),
    )
    add_hand_edited_attested_record(ws["root"])  # Re-attest shows the hand edit before it writes
    (tmp / "zuno" / "memory").mkdir(parents=True)
    (tmp / "zuno" / "memory" / "MEMORY.md").write_text("Prefer small commits.", encoding="utf-8")
    for key, content in (("MEMZOI_RESIDENT_ID", "Tabs only"), ("MEMZOI_RESIDENT_REJECT_ID", "Tabs!")):
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
                content,
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
        env[key] = json.loads(proposed.stdout)["id"]
    # -q, not -Q: Debian's site-start puts the elpa-eglot package on the load path.
    p = subprocess.run(
        [emacs, "--batch", "-q", "-l", str(HERE / "emacs_e2e.el"), str(ws["root"]), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    if os.environ.get("MEMZOI_KEEP_EMACS_OUT"):
        Path(os.environ["MEMZOI_KEEP_EMACS_OUT"]).write_text(out.read_text() if out.exists() else "{}")
    if p.returncode == 0 and res:
        write_captures(res)
        portable_captures("emacs-*.txt", ws["root"])
    return {"ws": ws, "proc": p, "res": res}


CAPTURES = captures_dir()


def write_captures(res: dict) -> None:
    """Text captures of the Emacs flows for docs/editors/ (emacs-*.txt), written from what the run recorded."""
    CAPTURES.mkdir(parents=True, exist_ok=True)
    head = "# Emacs {}: captured by tests/editors/test_emacs_helix.py (batch Emacs 28 + eglot 1.9)\n\n"
    questions = res.get("apply_questions") or []
    if questions:
        q = questions[0]
        (CAPTURES / "emacs-review-apply.txt").write_text(
            head.format("review flow, M-x memzoi-apply on a pending proposal")
            + f"Echo area question: {q['prompt']}\n\n## *Memzoi preview* at that moment\n\n{q['diff']}",
            encoding="utf-8",
        )
    reattest = res.get("reattest") or {}
    if reattest.get("diff"):
        (CAPTURES / "emacs-review-reattest.txt").write_text(
            head.format("review flow, M-x memzoi-reattest of a hand-edited attested record")
            + f"## *Memzoi preview* when Apply? was asked\n\n{reattest['diff']}",
            encoding="utf-8",
        )
    facts = {
        "buffer of the superseded record (not shown) after its supersede packet was applied": res.get("hidden_reload"),
        "packet with an error finding rejected by its uri from another buffer": res.get("deleted_diagnostics"),
        "memzoi/changed handler given the contract's params": res.get("changed_handler"),
        ".zuno/RULES.md: mode, project root, diagnostics": [
            res.get("resident_mode"),
            res.get("resident_root"),
            res.get("resident_diagnostics"),
        ],
        "Reject candidate… prompts": res.get("resident_reject_prompts"),
        "RULES.md buffer and disk after Approve": [res.get("resident_buffer"), res.get("resident_disk")],
    }
    (CAPTURES / "emacs-after-write.txt").write_text(
        head.format("state after the server's writes (buffers not shown, deleted files, resident file)")
        + "\n".join(f"## {k}\n{json.dumps(v, ensure_ascii=False, indent=1)}\n" for k, v in facts.items()),
        encoding="utf-8",
    )
    menu = res.get("code_action_menu") or []
    (CAPTURES / "emacs-code-actions.txt").write_text(
        head.format("eglot-code-actions on a pending proposal (first entry = the default on RET)")
        + "\n".join(f"{i + 1}. {t}" for i, t in enumerate(menu))
        + "\n",
        encoding="utf-8",
    )
    (CAPTURES / "emacs-messages.txt").write_text(
        head.format("echo-area messages of the whole run") + "\n".join(res.get("messages", [])) + "\n", encoding="utf-8"
    )


@pytest.mark.editor_packages
def test_emacs_eglot_attach_diagnostics_hover(emacs_run: dict) -> None:
    p, res, ws = emacs_run["proc"], emacs_run["res"], emacs_run["ws"]
    assert p.returncode == 0 and "error" not in res, p.stdout + p.stderr + json.dumps(res)
    assert res["outside_mode"] != "memzoi-mode"  # Markdown outside .memzoi is left alone
    assert res["mode"] == "memzoi-mode"
    assert Path(res["project_root"]) == ws["root"]
    assert res["same_server"] is True
    cred = [d for d in res["diagnostics"] if "[credential_token]" in d["text"]]
    assert len(cred) == 1 and cred[0]["type"] == "eglot-error"
    line = ws["secret"].read_text().splitlines()[cred[0]["line"] - 1]
    assert line[cred[0]["beg_col"] : cred[0]["end_col"]] == planted_token()
    assert planted_token() not in json.dumps(res)
    assert "provenance:" in res["hover"] and "deploy-token-rotation" in res["hover"]


@pytest.mark.editor_packages
def test_emacs_reject_from_eglot_code_actions_and_history(emacs_run: dict) -> None:
    res = emacs_run["res"]
    assert emacs_run["proc"].returncode == 0, emacs_run["proc"].stdout + emacs_run["proc"].stderr
    assert {"Apply proposal", "Reject proposal…"} <= set(res["code_action_menu"])
    assert res["reject_prompts"] == ["Reason (required): "]
    assert res["reject_result"]["status"] == "applied" and res["rejected_moved"] is True
    # memzoi-history: completing-read over the changes; the reject is undone from there
    assert any("reject applied" in label and "(undo available)" in label for label in res["history_labels"])
    assert res["undo_result"]["status"] == "undone" and res["proposal_restored"] is True
    # the undo was confirmed first, naming the change: its operation, the files it restores and when it was made
    assert res["undo_question"].startswith("Undo reject of ") and "proposals/" in res["undo_question"], res
    # M-x memzoi-apply outside a pending proposal asks which one (never guesses) and reviews the chosen one
    assert res["picker_prompt"].startswith("Pending proposal") and any(
        label.startswith("Protected routes must validate sessions server-side (") for label in res["picker_labels"]
    ), res
    q = res["picked_questions"]
    assert len(q) == 1 and ("Protected routes" in q[0] or "mem_2026_07_06_auth_001" in q[0]), res
    assert res["picked_wrote_nothing"] is True
    # without markdown-mode eglot asks for plaintext hovers, and gets them
    if not res["markdown_mode"]:
        assert res["hover_kind"] == "plaintext" and "**" not in res["hover"]


@pytest.mark.editor_packages
def test_emacs_runs_a_server_command(emacs_run: dict) -> None:
    res = emacs_run["res"]
    assert emacs_run["proc"].returncode == 0
    result = res["lifecycle_result"]
    assert res["lifecycle"] == "apply", f"the server offers no apply command: {res['server_commands']}"
    assert isinstance(result, dict) and result.get("status") == "applied", result
    assert res["record_exists"] is True and not res["proposal_pending"]  # elisp nil encodes as null


@pytest.mark.editor_packages
def test_emacs_preview_shows_a_diff_buffer(emacs_run: dict) -> None:
    res = emacs_run["res"]
    assert emacs_run["proc"].returncode == 0 and "error" not in res, emacs_run["proc"].stdout + emacs_run["proc"].stderr
    buf = res["preview_buffer"]
    assert buf and buf["mode"] == "diff-mode" and buf["read_only"] is True, buf
    text = buf["text"]
    assert text.startswith("# Preview of apply") and "nothing is written" in text
    assert "+++ b/.memzoi/records/protected-routes-must-validate-sessions-server-side.md" in text
    assert "--- a/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md" in text
    assert '{"operation"' not in text and ":operation" not in text  # a diff, not the raw result
    assert res["preview_wrote_nothing"] is True


@pytest.mark.editor_packages
def test_emacs_supersede_asks_reason_then_title(emacs_run: dict) -> None:
    res, ws = emacs_run["res"], emacs_run["ws"]
    assert emacs_run["proc"].returncode == 0 and "error" not in res, emacs_run["proc"].stdout + emacs_run["proc"].stderr
    prompts = ["Reason (required): ", "New title (say what changed: the replacement needs an id of its own): "]
    assert "Preview: supersede record…" in res["supersede_preview_menu"]
    assert res["supersede_preview_prompts"] == prompts
    assert "+# Prefer source files below 800 lines" in res["supersede_preview_text"]
    assert "Supersede record…" in res["supersede_menu"] and res["supersede_prompts"] == prompts
    result = res["supersede_result"]
    assert result["status"] == "applied", result
    [packet] = [f["path"] for f in result["files"] if f["before"] == "absent"]
    # applied further down (the hidden-buffer step): the packet is now under resolved/applied
    text = (ws["root"] / ".memzoi" / "proposals" / "resolved" / "applied" / Path(packet).name).read_text(
        encoding="utf-8"
    )
    assert "action: supersede" in text and "\n# Prefer source files below 800 lines\n" in text


@pytest.mark.editor_packages
def test_emacs_review_action_first_and_preview_then_apply(emacs_run: dict) -> None:
    """The safe action is the menu's first entry (the default on RET); M-x memzoi-apply shows the diff, asks Apply
    once, and writes only then; a preview answered Cancel writes nothing."""
    res = emacs_run["res"]
    assert emacs_run["proc"].returncode == 0 and "error" not in res, emacs_run["proc"].stdout + emacs_run["proc"].stderr
    first = res["code_action_menu"][0]
    assert first.startswith(("Review", "Preview")), res["code_action_menu"]
    assert res["preview_questions"] and res["preview_wrote_nothing"] is True
    # the contract's Review proposal… command runs the same flow on the client
    assert len(res["review_command_questions"]) == 1 and res["review_command_wrote_nothing"] is True
    assert "+++ b/.memzoi/records/protected-routes-must-validate-sessions-server-side.md" in res["review_command_diff"]
    [q] = res["apply_questions"]
    assert q["prompt"].startswith("Apply: ") and q["prompt"].endswith("Apply? ")
    assert "+++ b/.memzoi/records/protected-routes-must-validate-sessions-server-side.md" in q["diff"]
    assert "--- a/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md" in q["diff"]
    assert "apply_asked" not in res  # nothing asked besides Apply
    assert res["lifecycle_result"]["status"] == "applied"


@pytest.mark.editor_packages
def test_emacs_apply_refused_when_the_target_changed_since_the_preview(emacs_run: dict) -> None:
    """The superseded record edited on disk while the diff is shown: Apply sends the preview's fingerprint, the
    server refuses (preview_stale, naming the record), nothing is written, and a new preview is offered."""
    s = emacs_run["res"]["stale_apply"]
    assert s["code"] == "preview_stale", s
    assert "prefer-source-files-below-1000-lines.md" in s["error"] and "review the new preview" in s["error"]
    assert s["again"] and "Preview again" in s["again"] and s["edit_kept"] and s["packet_kept"], s


@pytest.mark.editor_packages
def test_emacs_supersede_reason_and_title_asked_once(emacs_run: dict) -> None:
    res = emacs_run["res"]
    assert res["supersede_prompts"] == [
        "Reason (required): ",
        "New title (say what changed: the replacement needs an id of its own): ",
    ]
    assert res["supersede_questions"] == 1 and res["supersede_preview_questions"] == 1


@pytest.mark.editor_packages
def test_emacs_buffer_reverted_after_apply_and_deleted_diagnostics_cleared(emacs_run: dict) -> None:
    res = emacs_run["res"]
    assert res["supersede_apply_result"]["status"] == "applied" and res["supersede_apply_questions"] == 1
    h = res["hidden_reload"]
    assert not h["shown"] and h["changed_on_disk"] and h["buffer_is_disk"] and h["superseded"], h
    d = res["deleted_diagnostics"]
    assert d["prompts"] == ["Reason (required): "] and d["status"] == "applied" and d["file_gone"], d
    assert d["before"] >= 1 and d["after"] == 0, d
    assert res["changed_handler"] == {"notes_reloaded": True, "modified_kept": True}


@pytest.mark.editor_packages
def test_emacs_attaches_to_zuno_rules_and_rejects_with_a_reason(emacs_run: dict) -> None:
    res, ws = emacs_run["res"], emacs_run["ws"]
    assert res["resident_mode"] == "memzoi-mode" and Path(res["resident_root"]) == ws["root"]
    assert res["resident_same_server"] is True
    assert any("[resident_cap_usage]" in d for d in res["resident_diagnostics"])
    assert res["resident_reject_prompts"] == ["Reason (required): "]
    assert res["resident_reject_result"]["status"] == "rejected"
    assert res["resident_approve_result"]["status"] == "applied"
    assert res["resident_buffer"] == res["resident_disk"] == "Tabs only"  # the buffer was reverted
    assert res["global_mode"] == "memzoi-mode" and res["global_managed"] is True  # $ZUNO_CONFIG_DIR/memory/MEMORY.md


@pytest.mark.editor_packages
def test_emacs_reattest_shows_the_hand_edit(emacs_run: dict) -> None:
    """M-x memzoi-reattest: the optional reason asked once; where the server previews reattest, the diff of the hand
    edit, then Apply writes; otherwise one refusal and nothing written."""
    r = emacs_run["res"]["reattest"]
    assert r["prompts"] == ["Reason (optional): "], r
    if not r["supported"]:
        assert r["questions"] == 0 and not r["written"], r
        return
    assert r["questions"] == 1 and r["written"] and r["status"] == "applied", r
    assert "-Body of hand-edited-rule." in r["diff"] and "+Body of hand-edited-rule, edited by hand." in r["diff"]


@pytest.mark.editor_packages
def test_emacs_messages_are_sentences(emacs_run: dict) -> None:
    msgs = emacs_run["res"]["messages"]
    assert len(msgs) >= 8
    for m in msgs:
        assert "memzoi." not in m and "(:" not in m and ":change_id" not in m, m
        assert "\n" not in m, m


@pytest.fixture(scope="module")
def large_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A 2,000-record workspace (tests/benchmarks/generate.py); Emacs is given one record on its command line."""
    from tests.benchmarks.generate import generate

    emacs = shutil.which("emacs")
    require(emacs is not None, f"emacs is not installed: {PREREQS_HINT}")
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    tmp = tmp_path_factory.mktemp("emacs-large")
    man = generate(tmp / "ws", 2000)
    assert man.n_records == 2000
    record = man.records[0]
    out = tmp / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
        MEMZOI_HOME=str(tmp / "memzoi-home"),
        HOME=str(tmp / "home"),
    )
    p = subprocess.run(
        [
            emacs,
            "--batch",
            "-q",
            "-l",
            str(HERE / "emacs_large.el"),
            str(record),
            "--eval",
            f'(memzoi-large-wait "{out}")',
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        stdin=subprocess.DEVNULL,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    return {"proc": p, "res": res, "record": record}


@pytest.mark.editor_packages
def test_emacs_command_line_file_of_a_large_workspace_is_diagnosed(
    large_run: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file given on the command line gets didOpen and its diagnostics although no command follows the visit
    (eglot-ensure waited for one); the time from the visit to its first diagnostic is printed, not asserted."""
    p, res = large_run["proc"], large_run["res"]
    assert p.returncode == 0 and res, p.stdout + p.stderr
    assert res["mode"] == "memzoi-mode" and res["managed"] is True and res["did_open_s"] is not None, res
    assert Path(res["file"]) == large_run["record"] and res["first_diagnostic_s"] is not None, res
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with capsys.disabled():
        print(
            f"\n[timing] Emacs, 2,000-record workspace: visit -> didOpen {res['did_open_s'] * 1000:.0f} ms, "
            f"-> first diagnostic {res['first_diagnostic_s'] * 1000:.0f} ms (load average {load})"
        )


def test_helix_languages_toml() -> None:
    cfg = tomllib.loads((REPO / "editors" / "helix" / "languages.toml").read_text(encoding="utf-8"))
    assert cfg["language-server"]["memzoi-lsp"]["command"] == "memzoi-lsp"
    assert set(cfg["language-server"]["memzoi-lsp"]["config"]["memzoi"]) == {
        "severity",
        "disabled",
        "debounceMs",
        "logLevel",
        "logToClient",
        "showDocumentTimeoutMs",
    }
    langs = {lang["name"]: lang for lang in cfg["language"]}
    md = langs["memzoi"]
    assert md["language-servers"] == ["memzoi-lsp"] and md["language-id"] == "markdown"
    assert md["file-types"] == [{"glob": ".memzoi/**/*.md"}] and md["roots"] == [".memzoi"]
    assert langs["memzoi-json"]["file-types"] == [{"glob": ".memzoi/**/*.json"}]
    from memzoi_lsp.settings import wire_names

    assert set(wire_names()) == set(cfg["language-server"]["memzoi-lsp"]["config"]["memzoi"])
