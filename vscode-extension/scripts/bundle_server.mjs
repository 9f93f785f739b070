// Bundles the Python language server into the extension, as microsoft/vscode-python-tools-extension-template does:
// `pip install --target bundled/libs` of this repository (memzoi-lsp and its dependencies). The extension runs it
// with an interpreter (`memzoi.interpreter`, the Python extension's, or python3 on PATH) and PYTHONPATH=bundled/libs,
// so installing the .vsix is the whole installation. Compiled dependencies (pydantic-core, blake3, PyYAML, regex,
// watchfiles) make the bundle specific to the interpreter it was built with: its implementation, Python minor
// version, extension-module suffix and machine are recorded in bundled/python-abi.json (by scripts/python_abi.py,
// shipped as bundled/python_abi.py), and the extension refuses, with what to do, an interpreter that differs.
// Package one .vsix per target (`vsce package --target linux-x64`, …) with a matching interpreter.
// Env: MEMZOI_BUNDLE_PYTHON (default python3) is the interpreter whose pip installs the bundle.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = dirname(ext);
const libs = join(ext, 'bundled', 'libs');
const python = process.env.MEMZOI_BUNDLE_PYTHON || 'python3';

rmSync(libs, { recursive: true, force: true });
mkdirSync(libs, { recursive: true });
execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile', '--target', libs, repo],
  { stdio: ['ignore', 'inherit', 'inherit'] });
// Console scripts point at the build interpreter: the extension runs `python -m memzoi_lsp` instead.
rmSync(join(libs, 'bin'), { recursive: true, force: true });
const probe = join(ext, 'bundled', 'python_abi.py');
copyFileSync(join(ext, 'scripts', 'python_abi.py'), probe);
rmSync(join(ext, 'bundled', 'python-version.txt'), { force: true }); // replaced by python-abi.json
const abi = execFileSync(python, ['-I', probe]).toString().trim();
writeFileSync(join(ext, 'bundled', 'python-abi.json'), `${abi}\n`);
if (!existsSync(join(libs, 'memzoi_lsp', '__main__.py'))) throw new Error('the bundle has no memzoi_lsp');
console.log(`bundled memzoi-lsp into ${libs} (built with ${abi})`);
