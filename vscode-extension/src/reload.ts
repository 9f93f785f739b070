// Nothing stale after a write (issue 28, contract §1): after a change the server made, every open TextDocument of a
// touched file (shown in an editor or not) that the user has not modified is reverted to the disk text, and the
// diagnostics held for a file the change deleted are dropped. Driven by `memzoi/changed`, and by the client itself
// after its own writes (so that an older server without the notification leaves nothing stale either). The two run
// one after the other, never together (see reloadTouched).
import * as vscode from 'vscode';
import { serial } from './logic/serial';
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

/** True when `doc` is open, unmodified, and its text differs from its file's (a file that cannot be read: false). */
async function isStale(doc: vscode.TextDocument): Promise<boolean> {
  if (doc.isDirty || doc.isClosed) return false;
  const disk = await diskText(doc.uri);
  return disk !== undefined && norm(disk) !== norm(doc.getText());
}

/**
 * Re-reads from disk every open, unmodified TextDocument of `touched` whose text differs from its file, and drops
 * the diagnostics of deleted files. VS Code reverts only through its editor (`workbench.action.files.revert` acts
 * on the active editor): each stale document is shown in the group that has it (or briefly in the active group,
 * then closed), reverted, and the editor that was active is shown again. Each document is checked again just
 * before it is shown: one VS Code reloaded meanwhile (its file watcher) or the person began to edit is left alone.
 * Returns the reloaded URIs.
 *
 * One reload at a time (`serial`): one change asks twice (its `memzoi/changed` notification, then the command's
 * result). Run together, their show-revert-show steps interleaved: the written file was in front, with the
 * keyboard, twice as long, and the second could take the document the first had brought to the front as "the
 * editor that was active" and leave it there. A person's next keystrokes then went into the file just written (a
 * modified buffer, which the next change refused as unsaved). Now the second finds nothing stale and moves nothing.
 */
export const reloadTouched = serial(reloadNow);

async function reloadNow(touched: readonly Touched[]): Promise<string[]> {
  const deleted = new Set(touched.filter((t) => t.deleted).map((t) => t.uri));
  for (const uri of deleted) dropDiagnostics(vscode.Uri.parse(uri));
  const wanted = new Set(touched.filter((t) => !t.deleted).map((t) => vscode.Uri.parse(t.uri).toString()));
  const stale: vscode.TextDocument[] = [];
  for (const doc of vscode.workspace.textDocuments) {
    if (wanted.has(doc.uri.toString()) && (await isStale(doc))) stale.push(doc);
  }
  if (stale.length === 0) return [];
  const before = vscode.window.activeTextEditor;
  const done: string[] = [];
  let moved = false;
  for (const doc of stale) {
    if (!(await isStale(doc))) continue;
    const column = columnOf(doc.uri);
    moved = true;
    try {
      await vscode.window.showTextDocument(doc, { viewColumn: column ?? vscode.ViewColumn.Active, preview: column === undefined, preserveFocus: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
      if (column === undefined) await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      done.push(doc.uri.toString());
    } catch (err) {
      state.output.warn(`reloading ${doc.uri.toString()}: ${String(err)}`);
    }
  }
  if (!moved) return done;
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
