#!/usr/bin/env bash
# Installs Emacs (no X) with eglot from Debian for the Emacs editor test. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if command -v emacs >/dev/null && [ -d /usr/share/emacs/site-lisp/elpa-src ] && ls -d /usr/share/emacs/site-lisp/elpa-src/eglot-* >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get install -y --no-install-recommends emacs-nox elpa-eglot >/dev/null 2>&1 ||
  { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends emacs-nox elpa-eglot >/dev/null; }
emacs --version | head -1
