// Memzoi for VS Code: starts the memzoi-lsp language server and adds the Memory Inbox view, the status bar
// counts, the Memory History and palette commands around it. Its parts: client.ts (the server's life), inbox.ts,
// status.ts, palette.ts (commands and middleware), history.ts (history and previews), state.ts (what they share).
// Logic that needs no `vscode` API lives in ./logic (unit-tested).
import * as vscode from 'vscode';
import { State } from 'vscode-languageclient/node';
import { restart, startClient, stopClient } from './client';
import { registerChangeDocuments } from './history';
import { HealthProvider, transitionCheckpoint } from './checkpoints';
import { InboxProvider } from './inbox';
import { COMMANDS, specForServerCommand } from './logic/commands';
import type { InboxItem } from './logic/inbox';
import { RESTART_SETTING_KEYS, SERVER_SETTING_KEYS } from './logic/settings';
import { advertisedCommands, SECTION, state } from './state';
import { reviewCandidate, reviewProposal } from './flow';
import { resolveTarget, type RowVerb } from './logic/targets';
import { decideLocal, decideResident, recoverResident, runPaletteCommand, showLocal } from './palette';
import { openJob } from './jobs';
import { editResident, removeResidentEntry } from './residentEdit';
import { executeOnServer } from './run';
import { updateStatus } from './status';

const reviewRegistered = new Set<string>();

/** Extension entry point. Returns a small API (used by tests and other extensions). */
export async function activate(context: vscode.ExtensionContext): Promise<{ inboxItems(): InboxItem[]; refreshInbox(): Promise<void> }> {
  state.extensionUri = context.extensionUri;
  state.output = vscode.window.createOutputChannel('Memzoi', { log: true });
  // The first line of the output: tests measure start-up from it (activation to the first Problems row).
  state.output.info(`Memzoi extension ${String((context.extension.packageJSON as { version?: unknown }).version)} activated`);
  const inbox = new InboxProvider();
  state.inbox = inbox;
  state.statusItem = vscode.window.createStatusBarItem('memzoi.status', vscode.StatusBarAlignment.Left, 10);
  state.statusItem.name = 'Memzoi';
  state.statusItem.command = 'memzoi.inbox.focus';
  context.subscriptions.push(state.output, state.statusItem);
  context.subscriptions.push(vscode.window.registerTreeDataProvider('memzoi.inbox', inbox));
  registerChangeDocuments(context);

  const reg = (id: string, fn: (...a: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };
  // Palette commands have their own ids (memzoi.palette.*), registered once: the server's command ids are
  // vscode-languageclient's, for code actions and lenses, and never clash with these.
  for (const spec of COMMANDS) reg(spec.id, (arg: unknown) => runPaletteCommand(spec, arg));
  reg('memzoi.restart', () => restart());
  reg('memzoi.showOutput', () => state.output.show());
  reg('memzoi.inbox.refresh', () => state.inbox.refresh());
  reg('memzoi.runServerCommand', async () => {
    // Every command the server registers, including ones this client has no dedicated palette entry for.
    const advertised = advertisedCommands();
    if (!state.client || state.client.state !== State.Running || advertised.length === 0) {
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
    return executeOnServer(undefined, picked.label, [{}]);
  });
  // Inbox buttons: VS Code passes the row's tree node (`{type: 'row', item}`), or nothing when the tree redrew
  // under the click. Every handler acts on exactly that row as the inbox lists it now (state.inbox.current), or says
  // it is gone or was decided elsewhere; never on the active editor, never through a picker of other rows.
  reg('memzoi.inbox.open', async (node: unknown) => {
    const given = resolveTarget(node);
    // A resident file outlives its candidate: opening it needs no fresh row; a packet or change may be gone.
    const uri = given?.kind === 'resident' ? given.uri : (await state.inbox.current(node, given?.kind ?? 'proposal', 'open'))?.uri;
    if (uri) await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: false });
  });
  const onRow = (kind: InboxItem['kind'], verb: RowVerb, palette: string) => async (node: unknown): Promise<unknown> => {
    const row = await state.inbox.current(node, kind, verb);
    return row ? vscode.commands.executeCommand<unknown>(palette, row) : undefined;
  };
  reg('memzoi.inbox.apply', onRow('proposal', 'apply', 'memzoi.palette.apply'));
  reg('memzoi.inbox.reject', onRow('proposal', 'reject', 'memzoi.palette.reject'));
  reg('memzoi.inbox.routeLocal', onRow('proposal', 'routeLocal', 'memzoi.palette.routeLocal'));
  reg('memzoi.inbox.recover', onRow('uncertain', 'recover', 'memzoi.palette.recover'));
  reg('memzoi.inbox.recoverResident', (node: unknown) => recoverResident(node));
  reg('memzoi.inbox.approveResident', (node: unknown) => decideResident(node, 'approve', true));
  reg('memzoi.inbox.rejectResident', (node: unknown) => decideResident(node, 'reject', true));
  reg('memzoi.inbox.undoResident', (node: unknown) => decideResident(node, 'undo', true));
  reg('memzoi.inbox.approveLocal', (node: unknown) => decideLocal(node, 'approve'));
  reg('memzoi.inbox.rejectLocal', (node: unknown) => decideLocal(node, 'reject'));
  reg('memzoi.inbox.showLocal', (node: unknown) => showLocal(node));
  reg('memzoi.inbox.continueCheckpoint', (node: unknown) => transitionCheckpoint(node, 'continue'));
  reg('memzoi.inbox.closeCheckpoint', (node: unknown) => transitionCheckpoint(node, 'close'));
  const health = new HealthProvider();
  const healthView = vscode.window.createTreeView('memzoi.health', { treeDataProvider: health });
  health.view = healthView;
  // The plan is computed when the view is shown (and on Refresh), not on every inbox change.
  context.subscriptions.push(healthView, healthView.onDidChangeVisibility((e) => {
    if (e.visible) void health.refresh();
  }));
  reg('memzoi.health.refresh', () => health.refresh());
  // A view shown before the server was ready asked no one: it is asked again then, and after each write.
  state.refreshHealth = () => {
    if (healthView.visible) void health.refresh();
  };
  reg('memzoi.inbox.openJob', (node: unknown) => openJob(node));
  reg('memzoi.inbox.editResident', (node: unknown) => editResident(node));
  reg('memzoi.removeResidentEntry', () => removeResidentEntry());
  // Review first (contract §3): the server's preferred code action on a packet or a resident candidate runs
  // memzoi.review / memzoi.reviewCandidate, client commands registered once the server has started (see
  // registerReviewCommands: a server that advertised them would otherwise clash with vscode-languageclient).
  state.registerReviewCommands = () => {
    for (const [id, fn] of [['memzoi.review', (arg: unknown) => reviewProposal(arg, resolveTarget(arg))],
      ['memzoi.reviewCandidate', (arg: unknown) => reviewCandidate(resolveTarget(arg))]] as const) {
      if (reviewRegistered.has(id) || advertisedCommands().includes(id)) continue;
      reviewRegistered.add(id);
      reg(id, fn);
    }
  };

  context.subscriptions.push(
    vscode.languages.onDidChangeDiagnostics(() => state.inbox.schedule()),
    vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.path.includes('/.memzoi/') || d.uri.path.endsWith('/.zuno/RULES.md')) state.inbox.schedule();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (RESTART_SETTING_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        await restart();
      } else if (SERVER_SETTING_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`)) && state.client?.state === State.Running) {
        // The server re-reads the section through workspace/configuration (answered by the middleware).
        await state.client.sendNotification('workspace/didChangeConfiguration', { settings: null });
      }
    }),
  );
  const watcher = vscode.workspace.createFileSystemWatcher('**/.memzoi/proposals/**/*.md');
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => state.inbox.schedule()),
    watcher.onDidDelete(() => state.inbox.schedule()),
    watcher.onDidChange(() => state.inbox.schedule()),
  );
  updateStatus();
  await startClient();
  return { inboxItems: () => state.inbox.items, refreshInbox: () => state.inbox.refresh() };
}

/** Stops the language server when the extension host shuts down. */
export function deactivate(): Thenable<void> | undefined {
  return stopClient();
}
