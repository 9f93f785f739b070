#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, using only the npm registry and Debian apt:
#   * code-server 4.100.3 (VS Code 1.100.3, the newest release whose engines allow Node 20) into
#     ${MEMZOI_EDITOR_CACHE:-${XDG_CACHE_HOME:-~/.cache}/memzoi-lsp}/code-server-4.100.3
#   * Debian's chromium (driven headless by playwright-core, which the extension's package-lock installs).
# Idempotent: a finished install leaves a stamp file and a re-run returns at once. Prints the prefix on its last line.
#
# Why the manual steps: a plain `npm install code-server` fails offline. Its postinstall downloads ripgrep from
# GitHub (npm then rolls the whole install back), native modules try prebuilt downloads, and node-pty runs
# `npx node-gyp`, which ~/.npmrc's yes=false cancels. So: install with --ignore-scripts, link Debian's rg where
# @vscode/ripgrep expects its binary, and replay code-server's postinstall by hand.
set -euo pipefail
VERSION=4.100.3
CACHE=${MEMZOI_EDITOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memzoi-lsp}
PREFIX="$CACHE/code-server-$VERSION"
STAMP="$PREFIX/.installed"
export DEBIAN_FRONTEND=noninteractive npm_config_yes=true npm_config_fund=false npm_config_audit=false \
  npm_config_update_notifier=false npm_config_unsafe_perm=true

mkdir -p "$CACHE"
# One install at a time (several test runs may start together); the others wait, then find the stamp.
exec 9>"$CACHE/.install.lock"
flock 9

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
apt_install() {
  # Try without refreshing the package lists first (fast when they are current), then refresh once and retry.
  $SUDO apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 ||
    { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends "$@" >/dev/null; }
}

if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian chromium" >&2
  apt_install chromium
fi

if [ -f "$STAMP" ] && XDG_CONFIG_HOME="$PREFIX/.config" XDG_DATA_HOME="$PREFIX/.data" "$PREFIX/node_modules/.bin/code-server" --version >/dev/null 2>&1; then
  echo "$PREFIX"
  exit 0
fi

echo "installing code-server $VERSION into $PREFIX (takes about 2 minutes)" >&2
# Build dependencies of VS Code's native modules (kerberos needs gssapi.h) and ripgrep.
missing=()
for pkg in build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi

rm -rf "$PREFIX"
mkdir -p "$PREFIX"
cd "$PREFIX"
npm init -y >/dev/null
npm install "code-server@$VERSION" --ignore-scripts --no-audit --no-fund >&2
npm rebuild argon2 --foreground-scripts >&2   # its prebuilt download fails here, so it builds from source
VS="$PREFIX/node_modules/code-server/lib/vscode"
cd "$VS"
npm install --omit=dev --ignore-scripts --no-audit --no-fund >&2
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg   # its postinstall then finds bin/ and exits
npm rebuild --foreground-scripts >&2
rm -rf node_modules.asar && ln -s node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --no-audit --no-fund >&2)
XDG_CONFIG_HOME="$PREFIX/.config" XDG_DATA_HOME="$PREFIX/.data" "$PREFIX/node_modules/.bin/code-server" --version >&2
touch "$STAMP"
echo "$PREFIX"
