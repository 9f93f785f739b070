// Session checkpoints in the Memory Inbox (continue and close through the preview-then-apply flow) and the Memory
// health view (the repository maintenance plan's duplicates, contradictions and expiring records, each record
// opening its file). The server decides everything (memzoi.checkpoints.*, memzoi.memoryHealth; see
// logic/inbox.ts checkpointRows and logic/health.ts).
import * as vscode from 'vscode';
import { confirmWrites } from './flow';
import { healthRefusal, healthSummary, type HealthNode, healthTree } from './logic/health';
import { ask, reportRefusal } from './run';
import { advertisedCommands, MEMORY_HEALTH, state } from './state';

/**
 * Continue or close the checkpoint of an inbox row: the server previews the change (nothing written), the user
 * confirms its summary (with `memzoi.confirmWrites` on), and the apply carries the previewed version, so a
 * checkpoint that changed in between is refused rather than overwritten. Returns the apply's result.
 */
export async function transitionCheckpoint(arg: unknown, operation: 'continue' | 'close'): Promise<unknown> {
  const row = await state.inbox.current(arg, 'checkpoint', operation);
  if (!row) return undefined;
  const base = { root: row.root ?? '', checkpoint_id: row.id, operation };
  const preview = await ask('memzoi.checkpoints.preview', [base]);
  if (!preview.ok) return reportRefusal('memzoi.checkpoints.preview', preview.message);
  const pre = preview.result as { summary?: string; expected_version?: number };
  if (confirmWrites()) {
    const choice = await vscode.window.showWarningMessage(`Memzoi: ${pre.summary ?? operation}`, { modal: true }, 'Apply');
    if (choice !== 'Apply') return undefined;
  }
  const done = await ask('memzoi.checkpoints.apply', [{ ...base, expected_version: pre.expected_version }]);
  await state.inbox.refresh();
  if (!done.ok) return reportRefusal('memzoi.checkpoints.apply', done.message);
  void vscode.window.showInformationMessage(`Memzoi: checkpoint ${row.id} ${operation === 'close' ? 'closed' : 'continued'}`);
  return done.result;
}

/** The Memory health tree view (`memzoi.health`). */
export class HealthProvider implements vscode.TreeDataProvider<HealthNode> {
  private readonly changed = new vscode.EventEmitter<HealthNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  nodes: HealthNode[] = [];
  summary = '';
  /** The tree view showing this provider: its message says why the plan could not be made. */
  view: vscode.TreeView<HealthNode> | undefined;

  getTreeItem(node: HealthNode): vscode.TreeItem {
    if (node.type === 'record') {
      const t = new vscode.TreeItem(node.id, vscode.TreeItemCollapsibleState.None);
      t.description = node.description;
      t.iconPath = new vscode.ThemeIcon('file');
      if (node.uri) {
        t.resourceUri = vscode.Uri.parse(node.uri);
        t.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.parse(node.uri)] };
      }
      return t;
    }
    const t = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
    t.description = node.type === 'group' ? String(node.children.length) : node.description;
    t.iconPath = new vscode.ThemeIcon(node.type === 'group' ? 'pulse' : 'files');
    return t;
  }

  getChildren(node?: HealthNode): HealthNode[] {
    return node ? (node.type === 'record' ? [] : node.children) : this.nodes;
  }

  /** Asks the server for the plan again (the view's Refresh button, and once the server has started). */
  async refresh(): Promise<void> {
    if (!advertisedCommands().includes(MEMORY_HEALTH)) return;
    const answer = await ask(MEMORY_HEALTH, [{}]);
    if (!answer.ok) {
      // A refused plan (e.g. a record that is not admitted) is said in the view, never shown as "no findings".
      state.output.warn(`Memory health: ${answer.message}`);
      this.nodes = [];
      this.summary = '';
      if (this.view) this.view.message = healthRefusal(answer.message);
      this.changed.fire(undefined);
      return;
    }
    this.nodes = healthTree(answer.result);
    this.summary = healthSummary(answer.result);
    if (this.view) this.view.message = undefined;
    this.changed.fire(undefined);
  }
}
