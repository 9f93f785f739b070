// Finds the memzoi-lsp language server to launch. Pure logic (no `vscode` import) so node's test runner covers it.
import * as path from 'node:path';

/** What the locator may look at: settings, the environment and a file-system probe (injected for tests). */
export interface LocateInput {
  /** `memzoi.server.path`: a `memzoi-lsp` executable (absolute, `~/…`, or relative to the first workspace folder). */
  serverPath?: string;
  /** `memzoi.server.pythonPath`: an interpreter that has the `memzoi-lsp` distribution installed. */
  pythonPath?: string;
  /** The extension's `bundled/libs` folder when the .vsix carries the server (see scripts/bundle_server.mjs). */
  bundledLibs?: string;
  /**
   * The interpreter that runs the bundled server: the `memzoi.interpreter` setting, else the Python extension's
   * interpreter for the workspace, else undefined (then `python3` on PATH).
   */
  interpreter?: string;
  /** `memzoi.server.args`: extra arguments appended to the launch command. */
  extraArgs?: readonly string[];
  /** Absolute paths of the open workspace folders (first one resolves relative settings). */
  workspaceFolders: readonly string[];
  /** The `PATH` environment variable. */
  envPath?: string;
  /** Home directory, for `~` expansion. */
  home?: string;
  /** `process.platform`. */
  platform: string;
  /** True when `p` is an existing, executable regular file. */
  isExecutable(p: string): boolean;
}

/** A launch command: `command` run with `args`, found through `source`. */
export interface ServerCommand {
  command: string;
  args: string[];
  source: 'server.path' | 'server.pythonPath' | 'bundled' | 'PATH';
  /** Extra environment: PYTHONPATH for the bundled server. */
  env?: Record<string, string>;
}

/** Why no server was found: a one-line reason and what the user should do about it. */
export interface LocateFailure {
  error: string;
  fix: string;
}

export type LocateResult = ServerCommand | LocateFailure;

export function isFailure(r: LocateResult): r is LocateFailure {
  return (r as LocateFailure).error !== undefined;
}

/** Expands `${workspaceFolder}`, `${userHome}` and a leading `~`, then absolutises against the first folder. */
export function expandPath(raw: string, input: Pick<LocateInput, 'workspaceFolders' | 'home'>): string {
  let p = raw.trim();
  const folder = input.workspaceFolders[0];
  if (folder !== undefined) p = p.split('${workspaceFolder}').join(folder);
  if (input.home !== undefined) {
    p = p.split('${userHome}').join(input.home);
    if (p === '~' || p.startsWith('~/')) p = input.home + p.slice(1);
  }
  if (!path.isAbsolute(p) && folder !== undefined && (p.includes('/') || p.includes('\\'))) {
    p = path.join(folder, p);
  }
  return p;
}

/** Looks a bare program name up on `PATH` (with Windows' `.exe`/`.cmd` suffixes). */
export function whichOnPath(name: string, input: Pick<LocateInput, 'envPath' | 'platform' | 'isExecutable'>): string | undefined {
  const sep = input.platform === 'win32' ? ';' : ':';
  const exts = input.platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const dir of (input.envPath ?? '').split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (input.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function resolveProgram(raw: string, input: LocateInput): string | undefined {
  const expanded = expandPath(raw, input);
  if (path.isAbsolute(expanded)) return input.isExecutable(expanded) ? expanded : undefined;
  return whichOnPath(expanded, input);
}

/**
 * Decides how to launch the server, in this order: the `memzoi.server.path` setting, the
 * `memzoi.server.pythonPath` setting (`python -m memzoi_lsp`), the server bundled in the extension (run by the
 * chosen interpreter, else `python3` on PATH, with PYTHONPATH set to the bundle), then `memzoi-lsp` on `PATH`.
 * A setting that is given but does not point at an executable is an error (it is not silently skipped),
 * so a typo in the settings is reported instead of launching some other server.
 */
export function locateServer(input: LocateInput): LocateResult {
  const extra = [...(input.extraArgs ?? [])];
  if (input.serverPath && input.serverPath.trim()) {
    const found = resolveProgram(input.serverPath, input);
    if (!found) {
      return {
        error: `The memzoi.server.path setting points at "${input.serverPath}", which is not an executable file.`,
        fix: 'Set memzoi.server.path to the memzoi-lsp program of your installation (for example .venv/bin/memzoi-lsp), or clear it.',
      };
    }
    return { command: found, args: extra, source: 'server.path' };
  }
  if (input.pythonPath && input.pythonPath.trim()) {
    const found = resolveProgram(input.pythonPath, input);
    if (!found) {
      return {
        error: `The memzoi.server.pythonPath setting points at "${input.pythonPath}", which is not an executable file.`,
        fix: 'Set memzoi.server.pythonPath to a Python interpreter in which memzoi-lsp is installed, or clear it.',
      };
    }
    return { command: found, args: ['-m', 'memzoi_lsp', ...extra], source: 'server.pythonPath' };
  }
  if (input.bundledLibs) {
    const python = input.interpreter && input.interpreter.trim()
      ? resolveProgram(input.interpreter, input)
      : whichOnPath('python3', input) ?? whichOnPath('python', input);
    if (!python) {
      return {
        error: input.interpreter
          ? `The Python interpreter "${input.interpreter}" (memzoi.interpreter or the Python extension) is not an executable file.`
          : 'No Python interpreter was found to run the bundled Memzoi language server.',
        fix: 'Install Python 3.11 or newer, then select it with the Python extension or set memzoi.interpreter to its path.',
      };
    }
    return { command: python, args: ['-m', 'memzoi_lsp', ...extra], source: 'bundled', env: { PYTHONPATH: input.bundledLibs } };
  }
  const onPath = whichOnPath('memzoi-lsp', input);
  if (onPath) return { command: onPath, args: extra, source: 'PATH' };
  return {
    error: 'The Memzoi language server (memzoi-lsp) was not found on PATH.',
    fix: "Install it (pip install -e . in the memzoi-lsp checkout), then set memzoi.server.path to its memzoi-lsp program or memzoi.server.pythonPath to the environment's Python.",
  };
}
