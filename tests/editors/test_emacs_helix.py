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

from .conftest import PREREQS_HINT, REPO, make_workspace, planted_token, require, venv_bin

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
    out = tmp / "out.json"
    env = dict(os.environ, MEMZOI_LSP_CMD=server, MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
               MEMZOI_HOME=str(tmp / "memzoi-home"), MEMZOI_ACTOR="reviewer", HOME=str(tmp / "home"))
    # -q, not -Q: Debian's site-start puts the elpa-eglot package on the load path.
    p = subprocess.run([emacs, "--batch", "-q", "-l", str(HERE / "emacs_e2e.el"), str(ws["root"]), str(out)],
                       env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    res = json.loads(out.read_text()) if out.exists() else {}
    return {"ws": ws, "proc": p, "res": res}


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
    res, ws = emacs_run["res"], emacs_run["ws"]
    assert emacs_run["proc"].returncode == 0, emacs_run["proc"].stdout + emacs_run["proc"].stderr
    assert {"Apply proposal", "Reject proposal…"} <= set(res["code_action_menu"])
    assert res["reject_prompts"] == ["Reason (required): "]
    assert res["reject_result"]["status"] == "applied" and res["rejected_moved"] is True
    # memzoi-history: completing-read over the changes; the reject is undone from there
    assert any("reject applied" in label and "(undo available)" in label for label in res["history_labels"])
    assert res["undo_result"]["status"] == "undone" and res["proposal_restored"] is True
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
    prompts = ["Reason (required): ", "New title (empty keeps the record's): "]
    assert "Preview: supersede record…" in res["supersede_preview_menu"]
    assert res["supersede_preview_prompts"] == prompts
    assert "+# Prefer source files below 800 lines" in res["supersede_preview_text"]
    assert "Supersede record…" in res["supersede_menu"] and res["supersede_prompts"] == prompts
    result = res["supersede_result"]
    assert result["status"] == "applied", result
    [packet] = [f["path"] for f in result["files"] if f["before"] == "absent"]
    text = (ws["root"] / packet).read_text(encoding="utf-8")
    assert "action: supersede" in text and "\n# Prefer source files below 800 lines\n" in text


def test_helix_languages_toml() -> None:
    cfg = tomllib.loads((REPO / "editors" / "helix" / "languages.toml").read_text(encoding="utf-8"))
    assert cfg["language-server"]["memzoi-lsp"]["command"] == "memzoi-lsp"
    assert set(cfg["language-server"]["memzoi-lsp"]["config"]["memzoi"]) == {
        "severity", "disabled", "debounceMs", "logLevel", "logToClient", "showDocumentTimeoutMs"}
    langs = {lang["name"]: lang for lang in cfg["language"]}
    md = langs["memzoi"]
    assert md["language-servers"] == ["memzoi-lsp"] and md["language-id"] == "markdown"
    assert md["file-types"] == [{"glob": ".memzoi/**/*.md"}] and md["roots"] == [".memzoi"]
    assert langs["memzoi-json"]["file-types"] == [{"glob": ".memzoi/**/*.json"}]
    from memzoi_lsp.settings import Settings

    assert {f.alias for f in Settings.model_fields.values()} == set(cfg["language-server"]["memzoi-lsp"]["config"]["memzoi"])
