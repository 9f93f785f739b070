// Nothing stale after a write (issue 28, contract §1): after a change the server made, every open TextDocument of a
// touched file (shown in an editor or not) that the user has not modified is reverted to the disk text, and the
// diagnostics held for a file the change deleted are dropped. Driven by `memzoi/changed`, and by the client itself
// after its own writes (so that an older server without the notification leaves nothing stale either).
import * as vscode from 'vscode';
import { state } from './state';

/** One touched file of a `memzoi/changed` notification. */
export interface Touched {
  uri: string;
  deleted: boolean;
}

/** The `memzoi/changed` params (`{changeId, operation, message, touched: [{uri, deleted}]}`), checked. */
export interface Changed {
  changeId: string | null;
  operation: string;
  message: string;
  touched: Touched[];
}

/** `memzoi/changed` params as sent, reduced to what the client uses (anything malformed is dropped). */
export function parseChanged(params: unknown): Changed {
  const p = (params ?? {}) as Record<string, unknown>;
  const touched = (Array.isArray(p.touched) ? p.touched : [])
    .map((t) => (t ?? {}) as Record<string, unknown>)
    .filter((t) => typeof t.uri === 'string')
    .map((t) => ({ uri: t.uri as string, deleted: t.deleted === true }));
  return {
    changeId: typeof p.changeId === 'string' ? p.changeId : null,
    operation: typeof p.operation === 'string' ? p.operation : '',
    message: typeof p.message === 'string' ? p.message : '',
    touched,
  };
}

async function diskText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

const norm = (s: string): string => s.replace(/\r\n/g, '\n');

/** The tab group (view column) showing `uri`, when one does. */
function columnOf(uri: vscode.Uri): vscode.ViewColumn | undefined {
  for (const g of vscode.window.tabGroups.all) {
    if (g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString())) return g.viewColumn;
  }
  return undefined;
}

/**
 * Re-reads from disk every open, unmodified TextDocument of `touched` whose text differs from its file, and drops
 * the diagnostics of deleted files. VS Code reverts only through its editor (`workbench.action.files.revert` acts
 * on the active editor): each stale document is shown in the group that has it (or briefly in the active group,
 * then closed), reverted, and the editor that was active is shown again. Returns the reloaded URIs.
 */
export async function reloadTouched(touched: readonly Touched[]): Promise<string[]> {
  const deleted = new Set(touched.filter((t) => t.deleted).map((t) => t.uri));
  for (const uri of deleted) dropDiagnostics(vscode.Uri.parse(uri));
  const wanted = new Set(touched.filter((t) => !t.deleted).map((t) => vscode.Uri.parse(t.uri).toString()));
  const stale: vscode.TextDocument[] = [];
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.isDirty || doc.isClosed || !wanted.has(doc.uri.toString())) continue;
    const disk = await diskText(doc.uri);
    if (disk !== undefined && norm(disk) !== norm(doc.getText())) stale.push(doc);
  }
  if (stale.length === 0) return [];
  const before = vscode.window.activeTextEditor;
  const done: string[] = [];
  for (const doc of stale) {
    const column = columnOf(doc.uri);
    try {
      await vscode.window.showTextDocument(doc, { viewColumn: column ?? vscode.ViewColumn.Active, preview: column === undefined, preserveFocus: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
      if (column === undefined) await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      done.push(doc.uri.toString());
    } catch (err) {
      state.output.warn(`reloading ${doc.uri.toString()}: ${String(err)}`);
    }
  }
  if (before && !before.document.isClosed) {
    await vscode.window.showTextDocument(before.document, { viewColumn: before.viewColumn, preserveFocus: false });
  }
  state.output.info(`reloaded from disk: ${done.join(', ')}`);
  return done;
}

/** Drops what the client holds for a deleted file: its pushed diagnostics and its pulled ones. */
function dropDiagnostics(uri: vscode.Uri): void {
  state.client?.diagnostics?.delete(uri);
  // vscode-languageclient keeps pulled diagnostics in a collection per provider (DiagnosticFeatureProviderImpl's
  // diagnosticRequestor); it has no public way to forget a file, so reach it where it exists.
  try {
    const feature = state.client?.getFeature('textDocument/diagnostic') as unknown as
      { getAllProviders?: () => Iterable<unknown> } | undefined;
    for (const p of feature?.getAllProviders?.() ?? []) {
      (p as { diagnosticRequestor?: { diagnostics?: vscode.DiagnosticCollection } }).diagnosticRequestor?.diagnostics?.delete(uri);
    }
  } catch (err) {
    state.output.debug(`dropping pulled diagnostics of ${uri.toString()}: ${String(err)}`);
  }
}
