// The interpreter that runs the server bundled in the extension: the `memzoi.interpreter` setting, else the one the
// Python extension selected for the workspace (its API, as vscode-python-tools-extension-template does), checked to
// be Python 3.11 or newer before the server starts.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';

/** The minimum Python the server supports (pyproject's requires-python). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

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

/** `major.minor` of `python`, or an error message when it cannot run. */
export function pythonVersion(python: string, env: NodeJS.ProcessEnv): Promise<{ version?: [number, number]; error?: string }> {
  return new Promise((resolve) => {
    execFile(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { env, timeout: 15000 }, (err, stdout) => {
      if (err) return resolve({ error: String(err.message).split('\n')[0] });
      const m = /^(\d+)\.(\d+)/.exec(stdout.trim());
      resolve(m ? { version: [Number(m[1]), Number(m[2])] } : { error: `unexpected output: ${stdout.trim()}` });
    });
  });
}

/** True when `v` is at least {@link MIN_PYTHON}. */
export function supported(v: readonly [number, number]): boolean {
  return v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]);
}
