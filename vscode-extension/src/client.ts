// The language client's life: finding the server (settings, the bundled server, PATH), starting, stopping and
// restarting it, and telling the user clearly when it cannot start.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, type ServerOptions, TransportKind } from 'vscode-languageclient/node';
import { bundleAbi, probeAbi, pythonFromExtension } from './interpreter';
import { checkInterpreter } from './logic/pythonCheck';
import { isFailure, locateServer } from './logic/serverLocator';
import { buildServerSettings } from './logic/settings';
import { middleware } from './palette';
import { parseChanged, reloadTouched } from './reload';
import { advertisedCommands, readConfig, state } from './state';
import { updateStatus } from './status';

/**
 * Files the server analyses: Markdown under any `.memzoi/` tree, the project's `.memzoi/config.toml` (whatever
 * language a TOML extension gives it, so no language is named), session-end files and import manifests (YAML), and
 * materialization artifacts (candidate, plan and decision JSON, which live outside `.memzoi/`) matching the
 * `memzoi.materializationGlobs` setting.
 */
function documentSelector(): { scheme: string; language?: string; pattern: string }[] {
  const globs = readConfig().get<string[]>('materializationGlobs') ?? [];
  return [
    { scheme: 'file', language: 'markdown', pattern: '**/.memzoi/**/*.md' },
    // The project configuration: its `invalid_config` and credential findings, as `memzoi check` reports them.
    { scheme: 'file', pattern: '**/.memzoi/config.toml' },
    // Zuno's resident memory: the project's rules and the global MEMORY.md (default locations).
    { scheme: 'file', language: 'markdown', pattern: '**/.zuno/RULES.md' },
    { scheme: 'file', language: 'markdown', pattern: '**/zuno/memory/MEMORY.md' },
    // Session-end files and import manifests (YAML): the server diagnoses only those it recognises.
    { scheme: 'file', language: 'yaml', pattern: '**/*.{yml,yaml}' },
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
  const bundled = vscode.Uri.joinPath(state.extensionUri, 'bundled').fsPath;
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
    // The bundle's compiled packages import only in the interpreter it was built for: check the exact ABI and say
    // what to do, instead of starting a server that dies with an ImportError.
    const probed = await probeAbi(located.command, path.join(bundled, 'python_abi.py'), env);
    const verdict = checkInterpreter(located.command, bundleAbi(bundled), probed.abi, probed.error);
    if (!verdict.ok) {
      updateStatus();
      await showMissingServer(verdict.error, verdict.fix);
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
  state.ready = false;
  state.scannedLine = false;
  state.client.onDidChangeState(() => updateStatus());
  // The server's log (window/logMessage) goes to the output at its level. "memzoi-lsp ready" (sent once the server
  // has registered the workspace's projects) and each "scanned" line refresh the inbox, whose listing says whether
  // a scan is still running: the status bar leaves "starting…" when none is, at once when there is nothing to scan.
  state.client.onNotification('window/logMessage', (p: { type: number; message: string }) => {
    if (p.type === 1) state.output.error(p.message);
    else if (p.type === 2) state.output.warn(p.message);
    else if (p.type === 3) state.output.info(p.message);
    else state.output.debug(p.message);
    if (state.scanned) return;
    if (/^memzoi-lsp ready\b/.test(p.message)) {
      state.ready = true;
      state.refreshHealth();
    } else if (/\bscanned\b/.test(p.message)) state.scannedLine = true;
    else return;
    void state.inbox.refresh();
  });
  // After a change the server wrote (contract §1): reload every open document of a touched file from disk and drop
  // the diagnostics of deleted ones; the message was already shown with the command's result, so only log it.
  state.client.onNotification('memzoi/changed', (params: unknown) => {
    const changed = parseChanged(params);
    state.output.info(`changed: ${changed.message || changed.operation}${changed.changeId ? ` [change ${changed.changeId}]` : ''}`);
    void reloadTouched(changed.touched).then(() => {
      state.inbox.schedule();
      state.refreshHealth();
    });
  });
  // Pending proposals or resident candidates changed anywhere (CLI, MCP, another editor): refresh the inbox.
  state.client.onNotification('memzoi/inboxChanged', () => state.inbox.schedule());
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
  state.registerReviewCommands();
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
