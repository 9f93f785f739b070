// Memory History (a quick pick of the ledger's changes with Open Diff and Undo) and previews (the planned files of a
// change before it is written), both shown in VS Code's diff editor through a virtual document provider.
import * as vscode from 'vscode';
import { historyChanges, type ChangeSummary } from './logic/commands';
import { fileChange, previewFiles, type PreviewFile } from './logic/review';

/** Scheme of the read-only before/after documents of a change or a preview. */
export const SCHEME = 'memzoi-change';


/** Sends a server command and returns its result (`undefined` after a refusal, which the caller already reported). */
export type Execute = (command: string, args: unknown[]) => Promise<unknown>;

const contents = new Map<string, string>();
let serial = 0;

/** Registers the virtual document provider serving the texts that diffs show. */
export function registerChangeDocuments(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      provideTextDocumentContent: (uri) => contents.get(uri.toString()) ?? '',
    }),
  );
}

function virtual(key: string, side: 'before' | 'after', f: PreviewFile): vscode.Uri {
  // The path keeps its extension, so the diff editor highlights Markdown as Markdown.
  const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${key}/${side}/${f.path}` });
  contents.set(uri.toString(), (side === 'before' ? f.before : f.after) ?? '');
  return uri;
}

/**
 * Opens every file of `result` (a preview or a ledgered change) in the diff editor, before on the left and after on
 * the right (an absent side is empty). Returns the number of diffs opened.
 */
export async function showDiffs(title: string, result: unknown, key = newDiffKey()): Promise<number> {
  const files = previewFiles(result);
  for (const f of files) {
    await vscode.commands.executeCommand('vscode.diff', virtual(key, 'before', f), virtual(key, 'after', f),
      `${title}: ${f.path} (${fileChange(f)})`, { preview: false });
  }
  return files.length;
}

/** A fresh key for the virtual documents of one preview or change (see closeDiffs). */
export function newDiffKey(): string {
  return `${Date.now().toString(36)}-${(serial++).toString(36)}`;
}

/** Closes the diff editors `showDiffs` opened under `key` (a review's, once the user decided). */
export async function closeDiffs(key: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff
    && t.input.modified.scheme === SCHEME && t.input.modified.path.startsWith(`/${key}/`));
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
}

/** Asks the server for the preview of `arg` (`{uri, operation}`) and shows it; nothing is written. */
export async function preview(execute: Execute, arg: Record<string, unknown>): Promise<unknown> {
  const result = await execute('memzoi.preview', [arg]);
  if (result === undefined) return undefined;
  const n = await showDiffs(`Preview ${typeof arg.operation === 'string' ? arg.operation : ''}`, result);
  if (n === 0) void vscode.window.showInformationMessage('Memzoi: the preview has no files.');
  return result;
}

type HistoryItem = vscode.QuickPickItem & { change: ChangeSummary };

const OPEN_DIFF: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('diff'), tooltip: 'Open Diff' };
const UNDO: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('discard'), tooltip: 'Undo' };

/**
 * The Memory History quick pick: each change with its time, actor, operation, status, files and whether undo is
 * available; *Open Diff* and *Undo* as item buttons, or chosen after picking an entry. `uri` limits it to one file.
 */
export async function showHistory(execute: Execute, uri: vscode.Uri | undefined): Promise<void> {
  const arg = uri?.scheme === 'file' ? { uri: uri.toString() } : {};
  const changes = historyChanges(await execute('memzoi.history', [arg]));
  if (!changes) return;
  if (changes.length === 0) {
    void vscode.window.showInformationMessage('Memzoi: the ledger has no changes yet.');
    return;
  }
  const qp = vscode.window.createQuickPick<HistoryItem>();
  qp.title = 'Memzoi: Memory History';
  qp.placeholder = 'A change: Enter for its actions, or use the Open Diff / Undo buttons';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.items = changes.map((c) => ({ label: c.label, description: c.description, detail: c.detail, change: c,
    buttons: c.undoable ? [OPEN_DIFF, UNDO] : [OPEN_DIFF] }));
  const act = async (c: ChangeSummary, what: 'diff' | 'undo'): Promise<void> => {
    qp.hide();
    if (what === 'diff') {
      const files = await execute('memzoi.changeFiles', [{ change_id: c.change_id, ...arg }]);
      if (files !== undefined) await showDiffs(`Change ${c.change_id.slice(0, 12)}`, files);
    } else {
      await execute('memzoi.undo', [{ change_id: c.change_id, ...arg }]);
    }
  };
  qp.onDidTriggerItemButton((e) => void act(e.item.change, e.button === UNDO ? 'undo' : 'diff'));
  qp.onDidAccept(async () => {
    const c = qp.selectedItems[0]?.change;
    if (!c) return;
    qp.hide();
    const choices: { label: string; what: 'diff' | 'undo' }[] = [{ label: '$(diff) Open Diff', what: 'diff' }];
    if (c.undoable) choices.push({ label: '$(discard) Undo', what: 'undo' });
    const picked = await vscode.window.showQuickPick(choices, { title: `Memzoi: change ${c.change_id.slice(0, 12)} (${c.label})` });
    if (picked) await act(c, picked.what);
  });
  qp.onDidHide(() => qp.dispose());
  qp.show();
}
