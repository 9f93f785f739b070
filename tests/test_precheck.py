"""``memzoi precheck``: every example of Memzoi's ``precheck.rs@81b0f5f`` tests gives its documented outcome here
(ids, order, severity, cited binding), plus the 5/4/3/2 path scores and the git provenance of each citation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memzoi.agent.precheck import precheck
from memzoi.base.runtime import git_env
from memzoi.cli.main import main

from . import builders


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    return root


def _memory(root: Path, rid: str, type: str, title: str, body: str, *paths: str, **fields) -> None:
    text = builders.record(
        rid, type=type, title=title, body=body, applies_to=list(paths), confidence=0.93, description=None, **fields
    )
    builders.write(root, builders.record_path(rid), text)


def _ids(result: dict) -> list[str]:
    return [w["record_id"] for w in result["warnings"]]


def test_path_only_returns_exact_governance_without_lexical_overlap(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "risk-exact-ledger",
        "risk",
        "Preserve ledger invariants",
        "Changing the rounding order can silently alter settled totals.",
        "apps/api/src/billing/invoice.rs",
    )
    _memory(
        root,
        "warning-unrelated-auth",
        "warning",
        "Keep the migration lock held",
        "Concurrent schema changes can strand partially applied state.",
        "apps/api/src/auth/mod.rs",
    )
    out = precheck(root, path="apps/api/src/billing/invoice.rs")
    assert _ids(out) == ["risk-exact-ledger"]
    cite = out["warnings"][0]["citations"][0]
    assert cite["path"] == "apps/api/src/billing/invoice.rs" and out["warnings"][0]["path_score"] == 5
    assert cite["provenance"] == "git" and cite["destination"] == "repo"


def test_path_only_applies_directory_and_trailing_double_star_bindings(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-billing-directory",
        "warning",
        "Preserve settlement ordering",
        "The settlement pipeline depends on a stable calculation sequence.",
        "apps/api/src/billing",
    )
    _memory(
        root,
        "risk-web-glob",
        "risk",
        "Hydration boundary is fragile",
        "Server and client render phases must continue to agree.",
        "apps/web/**",
    )
    below = precheck(root, path="apps/api/src/billing/invoice.rs")
    above = precheck(root, path="apps/api/src")
    glob = precheck(root, path="apps/web/src/App.tsx")
    assert _ids(below) == ["warning-billing-directory"] and below["warnings"][0]["path_score"] == 3
    assert _ids(above) == ["warning-billing-directory"] and above["warnings"][0]["path_score"] == 2
    assert _ids(glob) == ["risk-web-glob"] and glob["warnings"][0]["path_score"] == 4
    assert glob["warnings"][0]["citations"][0]["path"] == "apps/web/**"


def test_lexical_matches_are_an_additional_signal_without_duplicates(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-key-rotation",
        "warning",
        "Signing key rotation warning",
        "Rotate signing keys only after publishing the overlap window.",
        "config/keys.toml",
        "config",
    )
    _memory(
        root,
        "risk-key-config",
        "risk",
        "Preserve trust continuity",
        "A malformed transition can invalidate already issued credentials.",
        "config/keys.toml",
    )
    out = precheck(root, path="config/keys.toml", action="rotate signing keys")
    assert _ids(out) == ["warning-key-rotation", "risk-key-config"]
    assert out["warnings"][0]["citations"][0]["path"] == "config/keys.toml"  # the most specific binding


def test_path_recall_suppresses_inactive_out_of_scope_and_unrelated_records(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-active-repo",
        "warning",
        "Keep rollout overlap",
        "Removing overlap can interrupt active sessions.",
        "config/deploy.toml",
    )
    _memory(
        root,
        "risk-inactive-repo",
        "risk",
        "Old rollout hazard",
        "This lifecycle record is no longer active.",
        "config/deploy.toml",
        status="tombstoned",
    )
    _memory(
        root,
        "risk-project-scope",
        "risk",
        "Project rollout hazard",
        "This warning belongs to a different requested scope.",
        "config/deploy.toml",
        scope="project",
        scope_id="other",
    )
    _memory(
        root,
        "fact-deploy-config",
        "fact",
        "Deploy configuration location",
        "This informational record must not become a precheck warning.",
        "config/deploy.toml",
    )
    _memory(
        root,
        "warning-unrelated-deploy",
        "warning",
        "Rotate deploy keys carefully",
        "The same action text must not bypass path applicability.",
        "config/other.toml",
    )
    out = precheck(root, path="config/deploy.toml", action="rotate deploy keys", scope_kind="repo")
    assert _ids(out) == ["warning-active-repo"]


@pytest.mark.parametrize(
    "type_,path,action,severity",
    [
        ("risk", "apps/api/src/billing/invoice.rs", "change invoice rounding", "high"),
        ("failed_attempt", "crates/cache/src/reset.rs", "run cache reset", "warning"),
    ],
)
def test_path_and_action_warn_with_memzoi_severity(tmp_path, type_, path, action, severity):
    root = _project(tmp_path)
    _memory(
        root,
        "the-one",
        type_,
        "Billing file is fragile cache reset",
        "Editing invoice rounding or running cache reset without draining workers broke things.",
        path,
    )
    _memory(
        root,
        "warning-auth-command",
        "warning",
        "Auth command warning",
        "Do not run auth migrations while smoke tests are active.",
        "apps/api/src/auth/mod.rs",
    )
    out = precheck(root, path=path, action=action)
    assert _ids(out) == ["the-one"] and out["warnings"][0]["severity"] == severity
    assert out["warnings"][0]["message"].startswith("Billing file is fragile")


def test_command_only_input_warns_by_text(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-npm-install",
        "warning",
        "npm install warning",
        "Running npm install mutates lockfiles; use the package manager already configured by the repo.",
        "package.json",
    )
    out = precheck(root, command="npm install")
    assert _ids(out) == ["warning-npm-install"] and out["warnings"][0]["severity"] == "warning"
    assert out["warnings"][0]["path_score"] == 0 and out["warnings"][0]["lexical"] is True
    assert precheck(root, command="cargo fmt")["warnings"] == []


def test_nothing_asked_gives_no_warning(tmp_path):
    root = _project(tmp_path)
    _memory(root, "warning-npm-install", "warning", "npm install warning", "Mutates lockfiles.", "package.json")
    assert precheck(root)["warnings"] == []


def test_cli_prints_memzoi_shape(tmp_path, capsys):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-npm-install",
        "warning",
        "npm install warning",
        "Running npm install mutates lockfiles.",
        "package.json",
    )
    assert main(["precheck", "--root", str(root), "--path", "package.json", "--command", "npm install", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"path", "action", "command", "warnings"}
    w = out["warnings"][0]
    assert set(w) >= {"id", "record_id", "message", "severity", "citations", "suggested_next_step"}
    assert w["id"] == "warn_warning-npm-install" and w["citations"][0]["provenance"] == "git"
    assert main(["precheck", "--root", str(root), "--path", "package.json"]) == 0
    text = capsys.readouterr().out
    assert "warning-npm-install" in text and "provenance git" in text


def test_a_secret_in_the_command_is_never_echoed(tmp_path):
    root = _project(tmp_path)
    _memory(
        root,
        "warning-curl",
        "warning",
        "curl uploads",
        "Uploading with curl needs the staging host.",
        "scripts/upload.sh",
    )
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # built at run time
    out = precheck(root, command=f"curl -H 'Authorization: Bearer {token}' uploads", path="scripts/upload.sh")
    assert token not in json.dumps(out)
    assert [w["record_id"] for w in out["warnings"]] == ["warning-curl"]


@pytest.mark.parametrize("broken", [{"lane": "nonsense"}, {"status": "zzzzzz"}, {"extra": "bogus_key: 1\n"}])
def test_a_refused_risk_covering_the_path_is_listed_withheld_never_dropped(tmp_path, broken):
    """A risk ``memzoi check`` refuses (``invalid_value`` on ``lane``/``status``, ``unknown_key``) still claims the
    path: the precheck and the context pack list it in ``withheld`` with its reasons, never silently drop it, and
    never hand out its text."""
    from memzoi.agent.context_pack import build_context_pack  # noqa: PLC0415

    root = _project(tmp_path)
    extra = broken.pop("extra", "")
    text = builders.record(
        "risk-broken",
        type="risk",
        title="Widgets break",
        body="Touching widgets breaks the frobnicator.",
        applies_to=["src/widgets.py"],
        description=None,
        extra=extra,
        **broken,
    )
    builders.write(root, builders.record_path("risk-broken"), text)
    for out in (precheck(root, path="src/widgets.py"), build_context_pack(root, "x", paths=["src/widgets.py"])):
        assert [w["id"] for w in out["withheld"]] == ["risk-broken"]
        assert out["withheld"][0]["reasons"] and "frobnicator" not in json.dumps(out)
        assert out.get("warnings", []) == [] and out.get("records", []) == []
