// The interpreter that runs the server bundled in the extension: the `memzoi.interpreter` setting, else the one the
// Python extension selected for the workspace (its API, as vscode-python-tools-extension-template does), checked
// against the ABI the bundle was built for before the server starts (logic/pythonCheck.ts).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { parseAbi, type PythonAbi } from './logic/pythonCheck';

interface PythonApi {
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } };
  environments?: { getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } };
}

/** The interpreter of the `ms-python.python` extension for `resource`, when it is installed; else undefined. */
export async function pythonFromExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
    return exec ?? api?.environments?.getActiveEnvironmentPath?.(resource)?.path;
  } catch {
    return undefined; // the Python extension failed: fall back to the setting or PATH
  }
}

/**
 * The ABI facts of `python` (bundled/python_abi.py run in isolated mode, so PYTHONPATH and user site-packages play no
 * part), or the error it failed with.
 */
export function probeAbi(python: string, probe: string, env: NodeJS.ProcessEnv): Promise<{ abi?: PythonAbi; error?: string }> {
  return new Promise((resolve) => {
    execFile(python, ['-I', probe], { env, timeout: 15000 }, (err, stdout) => {
      if (err) return resolve({ error: String(err.message).split('\n')[0] });
      const abi = parseAbi(stdout);
      resolve(abi ? { abi } : { error: `unexpected output: ${stdout.trim().slice(0, 200)}` });
    });
  });
}

/** The ABI the bundle was built for (bundled/python-abi.json), or `undefined` for a bundle that recorded none. */
export function bundleAbi(bundled: string): PythonAbi | undefined {
  try {
    return parseAbi(fs.readFileSync(path.join(bundled, 'python-abi.json'), 'utf8'));
  } catch {
    return undefined;
  }
}
