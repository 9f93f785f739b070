import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { abiMismatches, checkInterpreter, describeAbi, parseAbi, type PythonAbi } from '../logic/pythonCheck';

/** What bundled/python-abi.json holds for a bundle built on CPython 3.11, Linux x86_64. */
const BUNDLE: PythonAbi = {
  implementation: 'cpython', version: '3.11', extSuffix: '.cpython-311-x86_64-linux-gnu.so', machine: 'x86_64', platform: 'linux',
};
const PY312: PythonAbi = { ...BUNDLE, version: '3.12', extSuffix: '.cpython-312-x86_64-linux-gnu.so' };

test('the probe output and the recorded bundle ABI parse alike', () => {
  const text = '{"implementation": "cpython", "version": "3.11", "ext_suffix": ".cpython-311-x86_64-linux-gnu.so", "machine": "x86_64", "platform": "linux"}\n';
  assert.deepEqual(parseAbi(text), BUNDLE);
  assert.equal(parseAbi(''), undefined);
  assert.equal(parseAbi('3.11'), undefined); // the old python-version.txt shape is not an ABI record
  assert.equal(parseAbi('{"implementation": "cpython", "version": "three"}'), undefined);
  assert.equal(describeAbi(BUNDLE), 'CPython 3.11 (x86_64, linux)');
});

test('the interpreter the bundle was built for passes', () => {
  assert.deepEqual(checkInterpreter('/usr/bin/python3', BUNDLE, { ...BUNDLE }), { ok: true });
});

test('Python 3.12 passes ">= 3.11" but not the bundle built for 3.11: refused with what to do', () => {
  const r = checkInterpreter('/usr/bin/python3.12', BUNDLE, PY312);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.match(r.error, /built for CPython 3\.11 \(x86_64, linux\), but \/usr\/bin\/python3\.12 is CPython 3\.12/);
  assert.match(r.error, /Python 3\.12, not 3\.11/);
  assert.match(r.fix, /Install CPython 3\.11 \(x86_64, linux\)/);
  assert.match(r.fix, /memzoi\.interpreter/);
  assert.match(r.fix, /pip install memzoi-lsp/);
  assert.match(r.fix, /memzoi\.server\.path/);
});

test('another machine, platform, implementation or ABI suffix is a mismatch too', () => {
  assert.deepEqual(abiMismatches(BUNDLE, { ...BUNDLE, machine: 'aarch64', extSuffix: '.cpython-311-aarch64-linux-gnu.so' }),
    ['machine aarch64, not x86_64']);
  assert.deepEqual(abiMismatches(BUNDLE, { ...BUNDLE, platform: 'darwin', extSuffix: '.cpython-311-darwin.so' }),
    ['platform darwin, not linux']);
  assert.deepEqual(abiMismatches(BUNDLE, { ...BUNDLE, implementation: 'pypy', extSuffix: '.pypy311-pp73-x86_64-linux-gnu.so' }),
    ['implementation pypy, not cpython']);
  // same version and machine, other C library: only the suffix tells
  assert.deepEqual(abiMismatches(BUNDLE, { ...BUNDLE, extSuffix: '.cpython-311-x86_64-linux-musl.so' }),
    ['extension modules .cpython-311-x86_64-linux-musl.so, not .cpython-311-x86_64-linux-gnu.so']);
});

test('an interpreter that does not run is refused with its error', () => {
  const r = checkInterpreter('/nope/python', BUNDLE, undefined, 'spawn /nope/python ENOENT');
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.error, /does not run \(spawn \/nope\/python ENOENT\)/);
});

test('a bundle that recorded no ABI (older .vsix) falls back to the minimum version', () => {
  assert.deepEqual(checkInterpreter('python3', undefined, PY312), { ok: true });
  const old = checkInterpreter('python3', undefined, { ...BUNDLE, version: '3.10' });
  assert.equal(old.ok, false);
  if (!old.ok) assert.match(old.error, /needs Python 3\.11 or newer/);
});

test('scripts/python_abi.py prints what parseAbi reads, and matches the interpreter that ran it', () => {
  const script = path.join(__dirname, '..', '..', 'scripts', 'python_abi.py');
  let out: string;
  try {
    out = execFileSync('python3', ['-I', script]).toString();
  } catch {
    return; // no python3 here: nothing to compare
  }
  const abi = parseAbi(out);
  assert.ok(abi, out);
  assert.deepEqual(checkInterpreter('python3', abi, abi), { ok: true });
});
