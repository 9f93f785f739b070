#!/usr/bin/env bash
# Builds the wheel, installs it into a fresh venv (each of Python 3.11, 3.12 and 3.13 that is installed) and runs
# the installed `memzoi` away from the source tree: `memzoi check examples/` must print exactly what the source
# checkout prints (exit 1: the examples hold errors on purpose), and the shipped schemas and diagnostics reference
# must be found. Usage: scripts/check_wheel.sh [PYTHON_FOR_REFERENCE]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
ref_python=${1:-"$repo/.venv/bin/python"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel -q --no-deps --wheel-dir "$work/dist" "$repo"
wheel=$(ls "$work"/dist/memzoi_lsp-*.whl)
echo "built $(basename "$wheel")"
# Paths are printed as given: run both from the repository with the same relative argument.
expected=$(cd "$repo" && "$ref_python" -m memzoi check examples/ 2>&1; echo "exit $?")
found=0
# An interpreter per version: on PATH, else one that pyenv installed (its shims only run the selected version).
interpreter() {
  local v=$1 c
  for c in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v"; do
    if "$c" -c 'import sys' >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  return 1
}
for v in 3.11 3.12 3.13; do
  py=$(interpreter "$v") || { echo "python$v: not installed, skipped"; continue; }
  found=1
  venv="$work/venv-$v"
  "$py" -m venv "$venv"
  "$venv/bin/pip" install -q "$wheel"
  got=$(cd "$repo" && "$venv/bin/memzoi" check examples/ 2>&1; echo "exit $?")
  if [ "$got" != "$expected" ]; then
    echo "python$v: memzoi check examples/ from the wheel differs from the source checkout:" >&2
    diff <(echo "$expected") <(echo "$got") >&2 || true
    exit 1
  fi
  # Away from the repository the package must find its own data.
  (cd "$work" && "$venv/bin/memzoi" schema record | "$venv/bin/python" -c 'import json, sys; assert json.load(sys.stdin)["$id"] == "urn:memzoi-lsp:schema:record"')
  (cd "$work" && "$venv/bin/memzoi" explain bom | grep -q "byte order mark")
  href=$(cd "$work" && "$venv/bin/memzoi" explain bom --json | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["href"])')
  case "$href" in "file://$venv/"*"/memzoi/_data/docs/diagnostics.md#bom") ;; *) echo "python$v: link outside the wheel: $href" >&2; exit 1;; esac
  echo "python$v: wheel installs; memzoi check examples/ matches the source checkout ($(echo "$got" | tail -n1)); schema and explain read the shipped files"
done
if [ "$found" = 0 ]; then echo "no Python 3.11-3.13 found" >&2; exit 1; fi
