// Whether the interpreter chosen for the bundled server can import the bundle. Its compiled packages (pydantic-core,
// blake3, PyYAML, regex, watchfiles) were installed for one interpreter: one implementation, Python minor version,
// extension-module suffix (ABI and platform tag) and machine, recorded at packaging time in
// bundled/python-abi.json (scripts/bundle_server.mjs). Another Python would pass a mere "≥ 3.11" check and then
// fail on import, so the comparison is exact. Pure logic (no `vscode` import).

/** What scripts/python_abi.py prints: the ABI facts of one interpreter. */
export interface PythonAbi {
  implementation: string;
  /** `major.minor`. */
  version: string;
  /** `sysconfig.get_config_var('EXT_SUFFIX')`, e.g. `.cpython-311-x86_64-linux-gnu.so`. */
  extSuffix?: string;
  /** `platform.machine()`, e.g. `x86_64`, `arm64`. */
  machine?: string;
  /** `sys.platform`, e.g. `linux`, `darwin`, `win32`. */
  platform?: string;
}

/** The oldest Python the server supports (pyproject's requires-python), for a bundle that recorded no ABI. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** Parses scripts/python_abi.py's output (or bundled/python-abi.json); `undefined` for anything else. */
export function parseAbi(text: string | undefined): PythonAbi | undefined {
  if (!text) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text.trim().split(/\r?\n/).pop() ?? '');
  } catch {
    return undefined;
  }
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.implementation !== 'string' || typeof r.version !== 'string' || !/^\d+\.\d+$/.test(r.version)) return undefined;
  const opt = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  return { implementation: r.implementation, version: r.version, extSuffix: opt(r.ext_suffix), machine: opt(r.machine),
    platform: opt(r.platform) };
}

/** `CPython 3.11 (x86_64, linux)`. */
export function describeAbi(a: PythonAbi): string {
  const impl = a.implementation === 'cpython' ? 'CPython' : a.implementation;
  const where = [a.machine, a.platform].filter(Boolean).join(', ');
  return `${impl} ${a.version}${where ? ` (${where})` : ''}`;
}

function atLeast(version: string, min: readonly [number, number]): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

/** The differences between what the bundle needs and what the interpreter is, as short phrases. */
export function abiMismatches(bundle: PythonAbi, found: PythonAbi): string[] {
  const out: string[] = [];
  if (bundle.implementation !== found.implementation) out.push(`implementation ${found.implementation}, not ${bundle.implementation}`);
  if (bundle.version !== found.version) out.push(`Python ${found.version}, not ${bundle.version}`);
  if (bundle.machine && found.machine && bundle.machine !== found.machine) out.push(`machine ${found.machine}, not ${bundle.machine}`);
  if (bundle.platform && found.platform && bundle.platform !== found.platform) out.push(`platform ${found.platform}, not ${bundle.platform}`);
  if (out.length === 0 && bundle.extSuffix && found.extSuffix && bundle.extSuffix !== found.extSuffix) {
    out.push(`extension modules ${found.extSuffix}, not ${bundle.extSuffix}`);
  }
  return out;
}

/** How to fix a mismatch: a matching interpreter for the bundle, or a server installed in any supported Python. */
export function mismatchFix(bundle: PythonAbi | undefined): string {
  const want = bundle ? describeAbi(bundle) : `Python ${MIN_PYTHON.join('.')} or newer`;
  return `Install ${want} and select it with the Python extension or set memzoi.interpreter to its path; or install ` +
    'the server yourself (pip install memzoi-lsp, e.g. pip install -e . in its checkout, in any Python 3.11+) and set ' +
    'memzoi.server.path to its memzoi-lsp program.';
}

/**
 * Checks the interpreter `python` (its probe output `found`, or the `error` it failed with) against the bundle's
 * recorded ABI. A bundle without a record (an older .vsix) falls back to the minimum version.
 */
export function checkInterpreter(python: string, bundle: PythonAbi | undefined, found: PythonAbi | undefined,
  error?: string): { ok: true } | { ok: false; error: string; fix: string } {
  if (!found) {
    return { ok: false, error: `The interpreter ${python} cannot run the Memzoi language server: it does not run (${error ?? 'no answer'}).`,
      fix: mismatchFix(bundle) };
  }
  if (!bundle) {
    if (found.implementation === 'cpython' && atLeast(found.version, MIN_PYTHON)) return { ok: true };
    return { ok: false, error: `The interpreter ${python} is ${describeAbi(found)}; the Memzoi language server needs Python ${MIN_PYTHON.join('.')} or newer.`,
      fix: mismatchFix(undefined) };
  }
  const diff = abiMismatches(bundle, found);
  if (diff.length === 0) return { ok: true };
  return {
    ok: false,
    error: `The language server bundled in this extension was built for ${describeAbi(bundle)}, but ${python} is ${describeAbi(found)} (${diff.join('; ')}): its compiled packages would not import.`,
    fix: mismatchFix(bundle),
  };
}
