// Memzoi for VS Code: starts the memzoi-lsp language server and adds the Memory Inbox view, the status bar
// counts, the Memory History and palette commands around it. Its parts: client.ts (the server's life), inbox.ts,
// status.ts, palette.ts (commands and middleware), history.ts (history and previews), state.ts (what they share).
// Logic that needs no `vscode` API lives in ./logic (unit-tested).
import * as vscode from 'vscode';
import { State } from 'vscode-languageclient/node';
import { restart, startClient, stopClient } from './client';
import { registerChangeDocuments } from './history';
import { InboxProvider } from './inbox';
import { COMMANDS, specForServerCommand } from './logic/commands';
import type { InboxItem } from './logic/inbox';
import { RESTART_SETTING_KEYS, SERVER_SETTING_KEYS } from './logic/settings';
import { advertisedCommands, SECTION, state } from './state';
import { decideLocal, decideResident, executeOnServer, recoverResident, runPaletteCommand, showLocal } from './palette';
import { updateStatus } from './status';

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
    return executeOnServer(undefined, picked.label, []);
  });
  reg('memzoi.inbox.open', async (item: unknown) => {
    const row = item as InboxItem | undefined;
    if (row?.uri) await vscode.window.showTextDocument(vscode.Uri.parse(row.uri), { preview: false });
  });
  reg('memzoi.inbox.apply', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.apply', item));
  reg('memzoi.inbox.reject', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.reject', item));
  reg('memzoi.inbox.routeLocal', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.routeLocal', item));
  reg('memzoi.inbox.recover', (item: unknown) => vscode.commands.executeCommand<unknown>('memzoi.palette.recover', item));
  reg('memzoi.inbox.recoverResident', (item: unknown) => recoverResident(item as InboxItem | undefined));
  reg('memzoi.inbox.approveResident', (item: unknown) => decideResident(item as InboxItem | undefined, 'approve'));
  reg('memzoi.inbox.rejectResident', (item: unknown) => decideResident(item as InboxItem | undefined, 'reject'));
  reg('memzoi.inbox.approveLocal', (item: unknown) => decideLocal(item as InboxItem | undefined, 'approve'));
  reg('memzoi.inbox.rejectLocal', (item: unknown) => decideLocal(item as InboxItem | undefined, 'reject'));
  reg('memzoi.inbox.showLocal', (item: unknown) => showLocal(item as InboxItem | undefined));

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
