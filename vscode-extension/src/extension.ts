// Memzoi for VS Code: starts the memzoi-lsp language server and adds the Memory Inbox view, the status bar
// counts and palette commands around it. Logic that needs no `vscode` API lives in ./logic (unit-tested).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  argsHaveReason,
  buildArguments,
  COMMANDS,
  describeResult,
  historyChanges,
  searchHits,
  type CommandSpec,
  type InvocationContext,
  resolveServerCommand,
  specForServerCommand,
  validateReason,
  withReason,
} from './logic/commands';
import {
  buildInbox,
  countInbox,
  describeItem,
  type DiagnosticSummary,
  type InboxItem,
  isPendingProposalUri,
  localRows,
  residentRows,
  statusBarText,
} from './logic/inbox';
import { isFailure, locateServer } from './logic/serverLocator';
import { preview, registerChangeDocuments, showHistory } from './history';
import { MIN_PYTHON, pythonFromExtension, pythonVersion, supported } from './interpreter';
import { buildServerSettings, RESTART_SETTING_KEYS, SERVER_SETTING_KEYS } from './logic/settings';

const SECTION = 'memzoi';
/** Server command listing both resident memory files and their candidates. */
const RESIDENT_LIST = 'memzoi.resident.list';
/** Server command of the resident files' "N pending candidates: Review" code lens. */
const RESIDENT_REVIEW = 'memzoi.resident.review';
/** Server command listing the pending local-memory candidates agents proposed. */
const LOCAL_LIST = 'memzoi.local.list';

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

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let extensionUri: vscode.Uri;
let inbox: InboxProvider;
let statusItem: vscode.StatusBarItem;
/** False until the server's first workspace scan has ended (the status bar says "starting…" meanwhile). */
let scanned = false;

function severityName(s: vscode.DiagnosticSeverity): string {
  return ['error', 'warning', 'information', 'hint'][s] ?? 'hint';
}

function allDiagnostics(): DiagnosticSummary[] {
  const out: DiagnosticSummary[] = [];
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    for (const d of diags) {
      const code = typeof d.code === 'object' && d.code !== null ? String(d.code.value) : d.code === undefined ? undefined : String(d.code);
      out.push({
        uri: uri.toString(),
        code,
        source: d.source,
        severity: severityName(d.severity),
        message: d.message,
        data: (d as vscode.Diagnostic & { data?: unknown }).data,
      });
    }
  }
  return out;
}

/** The Memory Inbox tree: pending proposals and uncertain changes. */
class InboxProvider implements vscode.TreeDataProvider<InboxItem> {
  private readonly changed = new vscode.EventEmitter<InboxItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  items: InboxItem[] = [];
  private pending: Promise<void> | undefined;
  private again = false;

  getTreeItem(item: InboxItem): vscode.TreeItem {
    const { label, description } = describeItem(item);
    const t = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    t.description = description;
    const kind = {
      proposal: 'Pending proposal', uncertain: 'Uncertain change', resident: 'Resident-memory candidate',
      local: 'Local-memory candidate',
    };
    t.tooltip = `${kind[item.kind]} ${item.id}\n${item.title}` + (item.reason ? `\nReason: ${item.reason}` : '');
    t.resourceUri = vscode.Uri.parse(item.uri);
    t.contextValue = `memzoi.${item.kind}`;
    t.iconPath = new vscode.ThemeIcon(
      item.kind === 'local' ? 'lock'
        : item.kind === 'resident' ? (item.status === 'uncertain' ? 'warning' : 'note')
        : item.kind === 'uncertain' ? 'warning' : item.blocking > 0 ? 'error' : 'git-pull-request',
    );
    t.command = item.kind === 'local'
      ? { command: 'memzoi.inbox.showLocal', title: 'Show', arguments: [item] }
      : { command: 'memzoi.inbox.open', title: 'Open', arguments: [item] };
    return t;
  }

  getChildren(): InboxItem[] {
    return this.items;
  }

  private timer: NodeJS.Timeout | undefined;

  /** Schedules a refresh shortly (diagnostic and file events come in bursts: at most one pass per 300 ms). */
  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 300);
  }

  /** Recomputes the inbox now (coalescing overlapping calls into one more pass). */
  refresh(): Promise<void> {
    if (this.pending) {
      this.again = true;
      return this.pending;
    }
    this.pending = (async () => {
      do {
        this.again = false;
        try {
          this.items = await computeInbox();
        } catch (err) {
          output.error(`Memory Inbox: ${String(err)}`);
        }
      } while (this.again);
      this.changed.fire(undefined);
      updateStatus();
      this.pending = undefined;
    })();
    return this.pending;
  }
}

async function computeInbox(): Promise<InboxItem[]> {
  return [...(await computeReviewRows()), ...(await computeResidentRows()), ...(await computeLocalRows())];
}

/** The Resident memory section: candidates of the workspace's resident files, when the server offers them. */
function computeResidentRows(): Promise<InboxItem[]> {
  return serverRows(RESIDENT_LIST, residentRows, 'resident memory');
}

/** The Local memory section: candidates agents proposed for private local memory, when the server offers them. */
function computeLocalRows(): Promise<InboxItem[]> {
  return serverRows(LOCAL_LIST, localRows, 'local memory');
}

/** Rows from a listing command of the server (none when it is not running or does not offer the command). */
async function serverRows(command: string, toRows: (answer: unknown) => InboxItem[], what: string): Promise<InboxItem[]> {
  if (client?.state !== State.Running || !advertisedCommands().includes(command)) return [];
  try {
    return toRows(await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [{}] }));
  } catch (err) {
    output.warn(`Memory Inbox: ${what}: ${String(err)}`);
    return [];
  }
}

async function computeReviewRows(): Promise<InboxItem[]> {
  const diagnostics = allDiagnostics();
  const files = await vscode.workspace.findFiles('**/.memzoi/proposals/pending/*.md', '**/node_modules/**', 2000);
  const proposals: { uri: string; text: string }[] = [];
  for (const uri of files) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    try {
      const text = open ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      proposals.push({ uri: uri.toString(), text });
    } catch {
      // Deleted between the search and the read: the next refresh drops it.
    }
  }
  return buildInbox(proposals, diagnostics);
}

function updateStatus(): void {
  const counts = countInbox(inbox.items, allDiagnostics());
  const { text, tooltip } = statusBarText(counts);
  if (client && client.state !== State.Stopped && !scanned) {
    // Until the first scan ends, counts of 0 would read as a false all-clear.
    statusItem.text = '$(sync~spin) Memzoi starting…';
    statusItem.tooltip = 'Memzoi: the language server is starting and scanning the workspace';
    statusItem.show();
    return;
  }
  statusItem.text = client?.state === State.Running ? text : `${text} $(debug-disconnect)`;
  statusItem.tooltip = client?.state === State.Running ? tooltip : `${tooltip} (language server not running)`;
  statusItem.show();
}

function readConfig(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

async function showMissingServer(error: string, fix: string): Promise<void> {
  output.error(`${error} ${fix}`);
  const choice = await vscode.window.showErrorMessage(`Memzoi: ${error} ${fix}`, 'Open README', 'Open Settings');
  if (choice === 'Open README') {
    await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.joinPath(extensionUri, 'README.md'));
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

/** Gathers the target of a command: the inbox row it was invoked on, else the active editor's file. */
async function gatherContext(spec: CommandSpec, arg: unknown): Promise<InvocationContext | undefined> {
  const ctx: InvocationContext = {};
  const row = arg && typeof arg === 'object' && 'kind' in arg && 'uri' in arg ? (arg as InboxItem) : undefined;
  const argUri = arg instanceof vscode.Uri ? arg : row ? vscode.Uri.parse(row.uri) : undefined;
  const uri = argUri ?? vscode.window.activeTextEditor?.document.uri;
  if (spec.target === 'change') {
    const changeId = row?.kind === 'uncertain' && row.changeId ? row.changeId : await pickChange(spec, uri);
    if (changeId === undefined) return undefined;
    ctx.changeId = changeId.trim();
    if (uri?.scheme === 'file') ctx.uri = uri.toString();
    if (spec.modes) {
      const picked = await vscode.window.showQuickPick(
        spec.modes.map((m) => ({ label: m.label, description: m.mode, mode: m.mode })),
        { title: `Memzoi: recover change ${changeId.slice(0, 12)}`, ignoreFocusOut: true },
      );
      if (!picked) return undefined;
      ctx.mode = picked.mode;
    }
  } else if (spec.target !== 'none') {
    if (!uri || uri.scheme !== 'file') {
      void vscode.window.showWarningMessage(`Memzoi: ${spec.title} needs a ${spec.target === 'candidate' ? 'materialization candidate' : 'Memzoi file'}: open it first.`);
      return undefined;
    }
    if (spec.target === 'proposal' && !isPendingProposalUri(uri.toString())) {
      void vscode.window.showWarningMessage(`Memzoi: ${spec.title} works on a pending proposal (.memzoi/proposals/pending/*.md).`);
      return undefined;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc?.isDirty) {
      // Lifecycle commands are disk transactions: the server refuses unsaved files, so say it up front.
      void vscode.window.showWarningMessage(`Memzoi: save ${vscode.workspace.asRelativePath(uri)} first; lifecycle commands work on the file on disk.`);
      return undefined;
    }
    ctx.uri = uri.toString();
  }
  if (spec.query) {
    const q = await vscode.window.showInputBox({ title: `Memzoi: ${spec.title}`, ...spec.query, ignoreFocusOut: true });
    if (q === undefined) return undefined;
    ctx.query = q;
  }
  if (spec.reason) {
    const reason = await promptReason(spec);
    if (reason === undefined) return undefined;
    ctx.reason = reason;
  }
  if (spec.confirm) {
    const ok = await vscode.window.showWarningMessage(spec.confirm, { modal: true }, 'Continue');
    if (ok !== 'Continue') return undefined;
  }
  return ctx;
}

/** Lets the user pick a ledger change from the history (of `uri` when given), else type its id. */
async function pickChange(spec: CommandSpec, uri: vscode.Uri | undefined): Promise<string | undefined> {
  const historyCommand = advertisedCommands().includes('memzoi.history') ? 'memzoi.history' : undefined;
  if (client && historyCommand) {
    try {
      const arg = uri?.scheme === 'file' ? { uri: uri.toString() } : {};
      const changes = historyChanges(await client.sendRequest(ExecuteCommandRequest.type, { command: historyCommand, arguments: [arg] }));
      if (changes && changes.length > 0) {
        const picked = await vscode.window.showQuickPick(
          changes.map((c) => ({ label: c.label, description: c.description, id: c.change_id })),
          { title: `Memzoi: ${spec.title.replace(/…$/, '')}: choose a change`, ignoreFocusOut: true, matchOnDescription: true },
        );
        return picked?.id;
      }
    } catch (err) {
      output.warn(`history for the change picker failed: ${String(err)}`);
    }
  }
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title}`,
    prompt: 'Ledger change id (see Memzoi: Show Change History)',
    validateInput: (v) => (v.trim() ? undefined : 'A change id is required.'),
    ignoreFocusOut: true,
  });
}

function promptReason(spec: CommandSpec): Thenable<string | undefined> {
  const required = spec.reason === 'required';
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title.replace(/…$/, '')}`,
    prompt: required ? 'Reason (required; recorded with the change)' : 'Reason (optional; recorded with the change)',
    validateInput: (v) => validateReason(v, required),
    ignoreFocusOut: true,
  }).then((v) => (v === undefined ? undefined : v.trim()));
}

function advertisedCommands(): string[] {
  return client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
}

/** Runs a palette command: gathers its target and reason, then asks the server to execute it. */
async function runPaletteCommand(spec: CommandSpec, arg: unknown): Promise<unknown> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showErrorMessage('Memzoi: the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.');
    return undefined;
  }
  const serverCommand = resolveServerCommand(spec, advertisedCommands());
  if (!serverCommand) {
    void vscode.window.showWarningMessage(`Memzoi: this memzoi-lsp does not offer "${spec.title}"; update memzoi-lsp.`);
    return undefined;
  }
  if (serverCommand === 'memzoi.history') {
    // Memory History: a quick pick of the changes with Open Diff and Undo (not a count of results).
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    return showHistory(historyExecute, uri);
  }
  const ctx = await gatherContext(spec, arg);
  if (!ctx) return undefined;
  return executeOnServer(spec, serverCommand, buildArguments(ctx, spec));
}

/** Tells the user what a command did (and opens a chosen search hit). */
async function reportResult(spec: CommandSpec | undefined, command: string, result: unknown): Promise<void> {
  output.info(`${command} -> ${JSON.stringify(result)}`);
  const hits = spec?.args === 'query' ? searchHits(result) : undefined;
  if (hits) {
    if (hits.length === 0) {
      void vscode.window.showInformationMessage('Memzoi: no matching records.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      hits.map((h) => ({ label: h.title, description: h.id, uri: h.uri })),
      { title: 'Memzoi: search results', matchOnDescription: true },
    );
    if (pick) await vscode.window.showTextDocument(vscode.Uri.parse(pick.uri));
    return;
  }
  const said = describeResult(spec?.title ?? command, result);
  if (said?.level === 'error') void vscode.window.showErrorMessage(`Memzoi: ${said.text}`);
  else if (said) void vscode.window.showInformationMessage(`Memzoi: ${said.text}`);
}

async function executeOnServer(spec: CommandSpec | undefined, command: string, args: unknown[]): Promise<unknown> {
  const result = await requestServer(command, args);
  if (result !== undefined) void reportResult(spec, command, result);
  void inbox.refresh();
  return result;
}

/**
 * Sends one server command. A refusal (a JSON-RPC error response) is reported once: its first line in a toast, the
 * details in the output; the result is then `undefined`.
 */
async function requestServer(command: string, args: unknown[]): Promise<unknown> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showErrorMessage('Memzoi: the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.');
    return undefined;
  }
  try {
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    if (command === 'memzoi.undo') void inbox.refresh();
    return result;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    output.error(`${command} refused: ${msg}`);
    void vscode.window.showErrorMessage(`Memzoi: ${msg.split('\n')[0]}`);
    return undefined;
  }
}

/** Memory History and previews send their commands through here; an undo is reported like a palette Undo. */
const historyExecute = (command: string, args: unknown[]): Promise<unknown> =>
  command === 'memzoi.undo' ? executeOnServer(specForServerCommand(command), command, args) : requestServer(command, args);

/**
 * Middleware for server-registered commands (code actions, code lenses and palette entries whose id the server
 * itself registers): prompts for the reason a lifecycle command needs when the server did not supply one.
 */
const middleware: Middleware = {
  executeCommand: async (command, given, next) => {
    let args = given;
    if (command === 'memzoi.preview') {
      // Preview (code action): the planned files in the diff editor; nothing is written.
      const arg = given[0] && typeof given[0] === 'object' ? { ...(given[0] as Record<string, unknown>) } : {};
      return preview(historyExecute, arg);
    }
    if (command === 'memzoi.history') {
      // Memory History: a quick pick of the changes with Open Diff and Undo (not a count of results).
      return showHistory(historyExecute, vscode.window.activeTextEditor?.document.uri);
    }
    if (command === RESIDENT_REVIEW) {
      // The code lens "N pending candidates: Review" opens them in the Memory Inbox.
      await inbox.refresh();
      await vscode.commands.executeCommand('memzoi.inbox.focus');
      const pending: unknown = await next(command, args);
      return pending;
    }
    if (command === 'memzoi.resident.reject' && !argsHaveReason(args)) {
      const reason = await vscode.window.showInputBox({ title: 'Memzoi: reject resident-memory candidate', prompt: 'Reason (optional)', ignoreFocusOut: true });
      if (reason === undefined) return undefined;
      if (reason.trim()) args = withReason(args, reason.trim());
    }
    const spec = specForServerCommand(command);
    let finalArgs = args;
    if (spec && args.length === 0) {
      const ctx = await gatherContext(spec, undefined);
      if (!ctx) return undefined;
      finalArgs = buildArguments(ctx, spec);
    } else if (spec?.reason && !argsHaveReason(args)) {
      const reason = await promptReason(spec);
      if (reason === undefined) return undefined;
      finalArgs = withReason(args, reason);
    }
    try {
      const result: unknown = await next(command, finalArgs);
      void reportResult(spec, command, result);
      return result;
    } catch (err) {
      // A refusal is a JSON-RPC error response: one toast with its first line, the details in the output.
      const msg = err instanceof Error ? err.message : String(err);
      output.error(`${command} refused: ${msg}`);
      void vscode.window.showErrorMessage(`Memzoi: ${msg.split('\n')[0]}`);
      return undefined;
    } finally {
      void inbox.refresh();
    }
  },
  workspace: {
    // Answer workspace/configuration for `memzoi` with the normalised settings object.
    configuration: (params, token, next) => {
      if (params.items.some((i) => i.section === SECTION)) {
        return params.items.map((i) => (i.section === SECTION ? buildServerSettings((k) => readConfig().get(k)) : null));
      }
      return next(params, token);
    },
  },
};

async function startClient(): Promise<void> {
  const cfg = readConfig();
  const bundledLibs = vscode.Uri.joinPath(extensionUri, 'bundled', 'libs').fsPath;
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
  output.info(`Starting ${located.command} ${located.args.join(' ')} (found via ${located.source})`);
  const serverOptions: ServerOptions = {
    command: located.command,
    args: located.args,
    transport: TransportKind.stdio,
    options: { env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: errors are surfaced as messages instead
    initializationOptions: buildServerSettings((k) => readConfig().get(k)),
    middleware,
  };
  client = new LanguageClient('memzoi', 'Memzoi Language Server', serverOptions, clientOptions);
  scanned = false;
  client.onDidChangeState(() => updateStatus());
  // The server's log (window/logMessage) goes to the output at its level; the end of the first workspace scan ends
  // the "starting…" state of the status bar.
  client.onNotification('window/logMessage', (p: { type: number; message: string }) => {
    if (p.type === 1) output.error(p.message);
    else if (p.type === 2) output.warn(p.message);
    else if (p.type === 3) output.info(p.message);
    else output.debug(p.message);
    if (!scanned && /\bscanned\b/.test(p.message)) {
      scanned = true;
      void inbox.refresh();
    }
  });
  try {
    await client.start();
  } catch (err) {
    output.error(`The language server did not start: ${String(err)}`);
    updateStatus();
    void vscode.window.showErrorMessage(
      `Memzoi: the language server (${located.command}) did not start. See the Memzoi output for its error.`,
      'Show Output',
    ).then((c) => (c ? output.show() : undefined));
    return;
  }
  output.info(`Server commands: ${advertisedCommands().join(', ') || '(none)'}`);
  await inbox.refresh();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (err) {
      output.warn(`stopping the language server: ${String(err)}`);
    }
    await c.dispose();
  }
}

async function restart(): Promise<void> {
  output.info('Restarting the language server');
  await stopClient();
  await startClient();
}

/** Extension entry point. Returns a small API (used by tests and other extensions). */
export async function activate(context: vscode.ExtensionContext): Promise<{ inboxItems(): InboxItem[]; refreshInbox(): Promise<void> }> {
  extensionUri = context.extensionUri;
  output = vscode.window.createOutputChannel('Memzoi', { log: true });
  inbox = new InboxProvider();
  statusItem = vscode.window.createStatusBarItem('memzoi.status', vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'Memzoi';
  statusItem.command = 'memzoi.inbox.focus';
  context.subscriptions.push(output, statusItem);
  context.subscriptions.push(vscode.window.registerTreeDataProvider('memzoi.inbox', inbox));
  registerChangeDocuments(context);

  const reg = (id: string, fn: (...a: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };
  // Palette commands have their own ids (memzoi.palette.*), registered once: the server's command ids are
  // vscode-languageclient's, for code actions and lenses, and never clash with these.
  for (const spec of COMMANDS) reg(spec.id, (arg: unknown) => runPaletteCommand(spec, arg));
  reg('memzoi.restart', () => restart());
  reg('memzoi.showOutput', () => output.show());
  reg('memzoi.inbox.refresh', () => inbox.refresh());
  reg('memzoi.runServerCommand', async () => {
    // Every command the server registers, including ones this client has no dedicated palette entry for.
    const advertised = advertisedCommands();
    if (!client || client.state !== State.Running || advertised.length === 0) {
      void vscode.window.showWarningMessage('Memzoi: the language server is not running or offers no commands.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      advertised.map((c) => ({ label: c, description: specForServerCommand(c)?.title })),
      { title: 'Memzoi: run a server command' },
    );
    if (!picked) return undefined;
    const spec = specForServerCommand(picked.label);
    if (spec) return runPaletteCommand(spec, undefined);
    return executeOnServer(undefined, picked.label, []);
  });
  reg('memzoi.inbox.open', async (item: unknown) => {
    const row = item as InboxItem | undefined;
    if (row?.uri) await vscode.window.showTextDocument(vscode.Uri.parse(row.uri), { preview: false });
  });
  reg('memzoi.inbox.apply', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.apply', item));
  reg('memzoi.inbox.reject', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.reject', item));
  reg('memzoi.inbox.recover', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.recover', item));
  reg('memzoi.inbox.approveResident', (item: unknown) => decideResident(item as InboxItem | undefined, 'approve'));
  reg('memzoi.inbox.rejectResident', (item: unknown) => decideResident(item as InboxItem | undefined, 'reject'));
  reg('memzoi.inbox.approveLocal', (item: unknown) => decideLocal(item as InboxItem | undefined, 'approve'));
  reg('memzoi.inbox.rejectLocal', (item: unknown) => decideLocal(item as InboxItem | undefined, 'reject'));
  reg('memzoi.inbox.showLocal', (item: unknown) => showLocal(item as InboxItem | undefined));

  context.subscriptions.push(
    vscode.languages.onDidChangeDiagnostics(() => inbox.schedule()),
    vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.path.includes('/.memzoi/') || d.uri.path.endsWith('/.zuno/RULES.md')) inbox.schedule();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (RESTART_SETTING_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        await restart();
      } else if (SERVER_SETTING_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`)) && client?.state === State.Running) {
        // The server re-reads the section through workspace/configuration (answered by the middleware).
        await client.sendNotification('workspace/didChangeConfiguration', { settings: null });
      }
    }),
  );
  const watcher = vscode.workspace.createFileSystemWatcher('**/.memzoi/proposals/**/*.md');
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => inbox.schedule()),
    watcher.onDidDelete(() => inbox.schedule()),
    watcher.onDidChange(() => inbox.schedule()),
  );
  updateStatus();
  await startClient();
  return { inboxItems: () => inbox.items, refreshInbox: () => inbox.refresh() };
}

/** Approves or rejects (asking for an optional reason) the resident-memory candidate of an inbox row. */
async function decideResident(row: InboxItem | undefined, verb: 'approve' | 'reject'): Promise<unknown> {
  if (!row || row.kind !== 'resident' || !client || client.state !== State.Running) return undefined;
  const arg: Record<string, string> = { uri: row.uri, candidate_id: row.id };
  if (verb === 'reject') {
    const reason = await vscode.window.showInputBox({ title: `Memzoi: reject candidate ${row.id.slice(0, 12)}`, prompt: 'Reason (optional)', ignoreFocusOut: true });
    if (reason === undefined) return undefined;
    if (reason.trim()) arg.reason = reason.trim();
  }
  return executeOnServer(undefined, `memzoi.resident.${verb}`, [arg]);
}

/** Approves or rejects (asking for the required reason) the local-memory candidate of an inbox row. */
async function decideLocal(row: InboxItem | undefined, verb: 'approve' | 'reject'): Promise<unknown> {
  if (!row || row.kind !== 'local' || !client || client.state !== State.Running) return undefined;
  const arg: Record<string, string> = { root: row.root ?? '', candidate_id: row.id };
  if (verb === 'reject') {
    const reason = await vscode.window.showInputBox({
      title: `Memzoi: reject local candidate ${row.id}`, prompt: 'Reason (required)', ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'A reason is required'),
    });
    if (reason === undefined) return undefined;
    arg.reason = reason.trim();
  }
  const result = await executeOnServer(undefined, `memzoi.local.${verb}`, [arg]);
  void inbox.refresh();
  return result;
}

/** Shows a local candidate (it has no file) as a read-only Markdown preview: title, body, reason, proposer. */
async function showLocal(row: InboxItem | undefined): Promise<void> {
  if (!row || row.kind !== 'local') return;
  const content = [`# ${row.title}`, '', row.body ?? '', '', `- candidate: ${row.id}`, `- proposed by: ${row.actor ?? '?'}`,
    `- confidence: ${row.confidence ?? '?'}`, `- reason: ${row.reason ?? ''}`].join('\n');
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** Stops the language server when the extension host shuts down. */
export function deactivate(): Thenable<void> | undefined {
  return stopClient();
}
