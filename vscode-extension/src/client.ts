// The language client's life: finding the server (settings, the bundled server, PATH), starting, stopping and
// restarting it, and telling the user clearly when it cannot start.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, type ServerOptions, TransportKind } from 'vscode-languageclient/node';
import { MIN_PYTHON, pythonFromExtension, pythonVersion, supported } from './interpreter';
import { isFailure, locateServer } from './logic/serverLocator';
import { buildServerSettings } from './logic/settings';
import { middleware } from './palette';
import { advertisedCommands, readConfig, state } from './state';
import { updateStatus } from './status';

/**
 * Files the server analyses: Markdown under any `.memzoi/` tree, and materialization artifacts (candidate, plan and
 * decision JSON, which live outside `.memzoi/`) matching the `memzoi.materializationGlobs` setting.
 */
function documentSelector(): { scheme: string; language: string; pattern: string }[] {
  const globs = readConfig().get<string[]>('materializationGlobs') ?? [];
  return [
    { scheme: 'file', language: 'markdown', pattern: '**/.memzoi/**/*.md' },
    // Zuno's resident memory: the project's rules and the global MEMORY.md (default locations).
    { scheme: 'file', language: 'markdown', pattern: '**/.zuno/RULES.md' },
    { scheme: 'file', language: 'markdown', pattern: '**/zuno/memory/MEMORY.md' },
    ...globs.filter((g) => typeof g === 'string' && g.trim()).map((g) => ({ scheme: 'file', language: 'json', pattern: g })),
  ];
}

async function showMissingServer(error: string, fix: string): Promise<void> {
  state.output.error(`${error} ${fix}`);
  const choice = await vscode.window.showErrorMessage(`Memzoi: ${error} ${fix}`, 'Open README', 'Open Settings');
  if (choice === 'Open README') {
    await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.joinPath(state.extensionUri, 'README.md'));
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'memzoi.server');
  }
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startClient(): Promise<void> {
  const cfg = readConfig();
  const bundledLibs = vscode.Uri.joinPath(state.extensionUri, 'bundled', 'libs').fsPath;
  const hasBundle = fs.existsSync(bundledLibs);
  const chosen = cfg.get<string>('interpreter')?.trim()
    || (hasBundle ? await pythonFromExtension(vscode.workspace.workspaceFolders?.[0]?.uri) : undefined);
  const located = locateServer({
    serverPath: cfg.get<string>('server.path'),
    pythonPath: cfg.get<string>('server.pythonPath'),
    bundledLibs: hasBundle ? bundledLibs : undefined,
    interpreter: chosen,
    extraArgs: cfg.get<string[]>('server.args') ?? [],
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    envPath: process.env.PATH,
    home: os.homedir(),
    platform: process.platform,
    isExecutable,
  });
  if (isFailure(located)) {
    updateStatus();
    await showMissingServer(located.error, located.fix);
    return;
  }
  const env = { ...process.env, ...(located.env ?? {}) };
  if (located.source === 'bundled') {
    // The bundled server needs Python 3.11+: say so clearly instead of showing a traceback.
    const checked = await pythonVersion(located.command, env);
    if (!checked.version || !supported(checked.version)) {
        updateStatus();
      const have = checked.version ? `Python ${checked.version.join('.')}` : `it does not run (${checked.error ?? '?'})`;
      await showMissingServer(`The interpreter ${located.command} cannot run the Memzoi language server: ${have}.`,
        `Select Python ${MIN_PYTHON.join('.')} or newer with the Python extension, or set memzoi.interpreter to its path.`);
      return;
    }
  }
  state.output.info(`Starting ${located.command} ${located.args.join(' ')} (found via ${located.source})`);
  const serverOptions: ServerOptions = {
    command: located.command,
    args: located.args,
    transport: TransportKind.stdio,
    options: { env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: state.output,
    traceOutputChannel: state.output,
    revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: errors are surfaced as messages instead
    initializationOptions: buildServerSettings((k) => readConfig().get(k)),
    middleware,
  };
  state.client = new LanguageClient('memzoi', 'Memzoi Language Server', serverOptions, clientOptions);
  state.scanned = false;
  state.client.onDidChangeState(() => updateStatus());
  // The server's log (window/logMessage) goes to the output at its level; the end of the first workspace scan ends
  // the "starting…" state of the status bar.
  state.client.onNotification('window/logMessage', (p: { type: number; message: string }) => {
    if (p.type === 1) state.output.error(p.message);
    else if (p.type === 2) state.output.warn(p.message);
    else if (p.type === 3) state.output.info(p.message);
    else state.output.debug(p.message);
    if (!state.scanned && /\bscanned\b/.test(p.message)) {
      state.scanned = true;
      void state.inbox.refresh();
    }
  });
  try {
    await state.client.start();
  } catch (err) {
    state.output.error(`The language server did not start: ${String(err)}`);
    updateStatus();
    void vscode.window.showErrorMessage(
      `Memzoi: the language server (${located.command}) did not start. See the Memzoi output for its error.`,
      'Show Output',
    ).then((c) => (c ? state.output.show() : undefined));
    return;
  }
  state.output.info(`Server commands: ${advertisedCommands().join(', ') || '(none)'}`);
  await state.inbox.refresh();
}

export async function stopClient(): Promise<void> {
  const c = state.client;
  state.client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (err) {
      state.output.warn(`stopping the language server: ${String(err)}`);
    }
    await c.dispose();
  }
}

export async function restart(): Promise<void> {
  state.output.info('Restarting the language server');
  await stopClient();
  await startClient();
}
