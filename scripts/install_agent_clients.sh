#!/usr/bin/env bash
# Installs the agent clients tests/editors/test_agent_clients.py drives, from the npm registry only:
#   * Claude Code (@anthropic-ai/claude-code) and Codex CLI (@openai/codex), pinned, into
#     ${MEMZOI_EDITOR_CACHE:-${XDG_CACHE_HOME:-~/.cache}/memzoi-lsp}/agent-clients-<versions>
# Both ship their Linux binaries as npm packages (optional dependencies), so nothing is downloaded from elsewhere:
# the packages are installed with --ignore-scripts, then Claude Code's postinstall (install.cjs, which only links
# the binary of @anthropic-ai/claude-code-linux-x64 into bin/claude.exe and makes no network access) is run by hand.
# Neither client needs an account or an API key for `mcp add|list|get`.
# Idempotent: a finished install leaves a stamp file and a re-run returns at once. Prints the prefix on its last line.
set -euo pipefail
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
CACHE=${MEMZOI_EDITOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memzoi-lsp}
PREFIX="$CACHE/agent-clients-claude-$CLAUDE_VERSION-codex-$CODEX_VERSION"
STAMP="$PREFIX/.installed"
export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

mkdir -p "$CACHE"
# One install at a time (several test runs may start together); the others wait, then find the stamp.
exec 9>"$CACHE/.install-agent-clients.lock"
flock 9

works() {
  "$PREFIX/node_modules/.bin/claude" --version >/dev/null 2>&1 && "$PREFIX/node_modules/.bin/codex" --version >/dev/null 2>&1
}

if [ -f "$STAMP" ] && works; then
  echo "$PREFIX"
  exit 0
fi

echo "installing Claude Code $CLAUDE_VERSION and Codex CLI $CODEX_VERSION into $PREFIX" >&2
rm -rf "$PREFIX"
mkdir -p "$PREFIX"
cd "$PREFIX"
npm init -y >/dev/null
npm install "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" --ignore-scripts \
  --no-audit --no-fund >&2
node node_modules/@anthropic-ai/claude-code/install.cjs >&2
works || { echo "claude or codex does not run after the install" >&2; exit 1; }
touch "$STAMP"
echo "$PREFIX"
