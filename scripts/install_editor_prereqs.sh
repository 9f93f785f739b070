#!/usr/bin/env bash
# Installs what the `editor_packages` tests need and the default test run never installs: Emacs with eglot
# (Debian) for tests/editors/test_emacs_helix.py, Debian chromium plus code-server (npm) for
# tests/editors/test_vscode_e2e.py, and Claude Code plus Codex CLI (npm) for tests/editors/test_agent_clients.py.
# Changes the host (apt-get, ~/.cache/memzoi-lsp); .ci/run calls it before `pytest -m editor_packages`. Idempotent: a second run returns quickly.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# bindfs (a FUSE mount whose ctime follows the mtime) for tests/test_fuse_freshness.py
# (the package lists may be missing on a new machine: update them once when the install fails)
if ! command -v bindfs >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends bindfs >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y -q --no-install-recommends bindfs >/dev/null; }
fi
bash "$here/install_emacs.sh"
bash "$here/install_code_server.sh" >/dev/null
bash "$here/install_agent_clients.sh" >/dev/null
