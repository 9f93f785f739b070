"""Shared helpers for the real-editor tests: locating tools, failing (not skipping) under CI=true, and a
workspace made from the corpus with one planted secret and one pending proposal."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memzoi.base.runtime import git_env

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "vscode-extension"
ARTIFACTS = REPO / "test-artifacts"


def captures_dir() -> Path:
    """Where the editor tests write their screenshots and text captures: ``docs/editors/`` when
    ``MEMZOI_UPDATE_DOCS=1`` (to refresh the committed ones), else ``test-artifacts/editors`` (git-ignored), so a
    test run never changes the repository's files."""
    return REPO / "docs" / "editors" if os.environ.get("MEMZOI_UPDATE_DOCS") == "1" else ARTIFACTS / "editors"


def add_hand_edited_attested_record(root: Path) -> None:
    """An attested record ``hand-edited-rule``, committed to the workspace's git repository, then edited by hand
    (a stale attestation: Re-attest shows the hand edit before it writes)."""
    from .. import builders

    attested = builders.record("hand-edited-rule", attested=True)
    builders.write(root, ".memzoi/records/hand-edited-rule.md", attested)
    commit_env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    for cmd in (["git", "add", ".memzoi/records/hand-edited-rule.md"], ["git", "commit", "-q", "-m", "attested"]):
        subprocess.run(cmd, cwd=root, env=commit_env, check=True, capture_output=True)
    builders.write(
        root,
        ".memzoi/records/hand-edited-rule.md",
        builders.edit(attested, "Body of hand-edited-rule.", "Body of hand-edited-rule, edited by hand."),
    )


def portable_captures(pattern: str, root: Path) -> None:
    """Rewrite the captures matching ``pattern`` in :func:`captures_dir` with the test's workspace ``root`` shown as
    ``<workspace>``: a committed capture never holds a path of the machine that took it."""
    spellings = sorted({str(root), str(root.resolve())}, key=len, reverse=True)
    for path in captures_dir().glob(pattern):
        text = path.read_text(encoding="utf-8")
        for s in spellings:
            text = text.replace(s, "<workspace>")
        path.write_text(text, encoding="utf-8")


IN_CI = os.environ.get("CI", "").lower() == "true"
# Where scripts/install_editor_prereqs.sh puts code-server (the tests only look there; they never install anything).
EDITOR_CACHE = Path(
    os.environ.get("MEMZOI_EDITOR_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memzoi-lsp"
)
CODE_SERVER_VERSION = "4.100.3"
PREREQS_HINT = "run `bash scripts/install_editor_prereqs.sh`, then `pytest -m editor_packages`"


def require(ok: bool, reason: str) -> None:
    """Skip with ``reason`` when a prerequisite is missing, except under CI=true, where it fails: CI must run the
    editor tests, so a missing prerequisite there is a broken install step, not a reason to stay green."""
    if ok:
        return
    if IN_CI:
        pytest.fail(f"prerequisite missing in CI: {reason}")
    pytest.skip(reason)


def run(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` and fail the test with its output when it exits non-zero."""
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        pytest.fail(
            f"`{' '.join(cmd)}` exited {p.returncode}\n--- stdout\n{p.stdout[-6000:]}\n--- stderr\n{p.stderr[-6000:]}"
        )
    return p


def venv_bin(name: str) -> str | None:
    """A program installed next to the running Python (the project's venv), else on PATH."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return str(candidate)
    return shutil.which(name)


def npm_env() -> dict[str, str]:
    """Environment for npm: quiet, no update checks, answers yes to npx prompts (~/.npmrc may say yes=false), and
    its download cache inside the working tree (git-ignored), so the test run writes nothing under the home folder."""
    env = dict(os.environ)
    env.update(
        npm_config_fund="false",
        npm_config_audit="false",
        npm_config_update_notifier="false",
        npm_config_yes="true",
        npm_config_cache=str(REPO / ".cache" / "npm"),
    )
    return env


def lock_hash() -> str:
    """Hash of package-lock.json (which records every dependency, the root's included): node_modules is
    reinstalled (npm ci) only when it changes, or when a package went missing."""
    return hashlib.sha256((EXT / "package-lock.json").read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def node_modules() -> Iterator[Path]:
    """vscode-extension/node_modules installed from package-lock.json (npm ci), reused while the lock is unchanged.

    Held under an exclusive file lock for the whole session: several test runs may share one working tree, and an
    `npm ci` in one would delete the packages another is using."""
    require(shutil.which("node") is not None and shutil.which("npm") is not None, "node and npm are not installed")
    lock = open(EXT / ".npm-install.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        yield _install_node_modules()
    finally:
        lock.close()


def _install_node_modules() -> Path:
    stamp = EXT / "node_modules" / ".memzoi-lock-hash"
    want = lock_hash()
    intact = (EXT / "node_modules" / "esbuild" / "package.json").exists()
    if not (intact and stamp.exists() and stamp.read_text() == want):
        p = subprocess.run(
            # --ignore-scripts: no dependency needs its install script (esbuild's only re-validates its binary and
            # can fail with ETXTBSY), and scripts that download things cannot work offline anyway.
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=EXT,
            env=npm_env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        if p.returncode != 0:
            unreachable = "ENOTFOUND" in p.stderr or "EAI_AGAIN" in p.stderr or "ECONNREFUSED" in p.stderr
            require(not unreachable, "the npm registry is unreachable: " + p.stderr.strip().splitlines()[-1])
            pytest.fail(f"npm ci failed:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
        stamp.write_text(want)
    return EXT / "node_modules"


@pytest.fixture(scope="session")
def vsix(node_modules: Path) -> Path:
    """The packaged extension: bundle with esbuild, then `vsce package` (no node_modules inside: it is bundled)."""
    run(["npm", "run", "build"], EXT, 300, npm_env())
    out = EXT / "memzoi.vsix"
    out.unlink(missing_ok=True)
    run(["npm", "run", "package"], EXT, 300, npm_env())
    assert out.is_file()
    return out


SECRET_RECORD = "deploy-token-rotation.md"
PROPOSAL_ID = "mem_2026_07_06_auth_001"


def planted_token() -> str:
    """A GitHub-token-shaped string, built at run time so no secret-shaped literal sits in the source."""
    return "gh" + "p_" + "".join("aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5"[i] for i in range(36))


def make_workspace(root: Path, corpus: Path) -> dict[str, Path]:
    """A git repository holding the corpus's 24 canonical records (committed), plus, uncommitted, one record with a
    planted credential in its body and one pending proposal packet from the corpus examples. Returns the paths."""
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    src = corpus / "memzoi-repo" / ".memzoi"
    for f in sorted((src / "records").glob("*.md")):
        shutil.copyfile(f, records / f.name)
    shutil.copyfile(src / "index.md", root / ".memzoi" / "index.md")
    env = dict(
        git_env(),
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "corpus records"],
    ):
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
    # The planted secret: a copy of a corpus record (same frontmatter shape) under a new id, with a token in its body.
    base = (records / "rust-msrv-is-1-96-1.md").read_text(encoding="utf-8")
    text = base.replace("id: rust-msrv-is-1-96-1", "id: deploy-token-rotation", 1)
    assert text != base, "corpus record changed shape: update the planted-secret workspace"
    text = text.rstrip("\n") + f"\n\nThe deploy job authenticates with {planted_token()} for now.\n"
    secret = records / SECRET_RECORD
    secret.write_text(text, encoding="utf-8")
    pending = root / ".memzoi" / "proposals" / "pending"
    pending.mkdir(parents=True)
    proposal = pending / f"{PROPOSAL_ID}.md"
    # The corpus packet is project-scoped without a project id, which the git-plane gate refuses; as in the
    # lifecycle tests, switch it to repository scope so that Apply can succeed.
    data = (corpus / "examples" / "proposals" / f"{PROPOSAL_ID}.md").read_bytes()
    proposal.write_bytes(data.replace(b"\n  kind: project\n", b"\n  kind: repo\n"))
    return {"root": root, "secret": secret, "proposal": proposal, "clean": records / "rust-msrv-is-1-96-1.md"}
