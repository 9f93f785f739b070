// The Memory Inbox tree: pending proposals (with the server's verdict), uncertain changes, and the Resident memory
// and Local memory sections. Every row and button follows what the server answered (see logic/inbox.ts).
import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';
import { candidateStatuses, checkpointRows, type InboxItem, linkJobs, localRows, proposalRows, reflectionRows, residentRows, type ResidentUsage, residentUsage, startupOver, uncertainRows, usageText } from './logic/inbox';
import { childrenOf, contextValue, describeItem, iconOf, type InboxNode, inboxTree, nodeId, type SectionId, tooltipOf, type Unreadable, unreadableRow } from './logic/inboxView';
import { resolveTarget, type RowVerb, rowNow } from './logic/targets';
import { advertisedCommands, CHECKPOINTS_LIST, LOCAL_LIST, PROPOSALS_LIST, RESIDENT_LIST, RESIDENT_STATE, RESIDENT_STATUS, state } from './state';
import { allDiagnostics, updateStatus } from './status';

/** The Memory Inbox tree. */
export class InboxProvider implements vscode.TreeDataProvider<InboxNode> {
  private readonly changed = new vscode.EventEmitter<InboxNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  items: InboxItem[] = [];
  /** Cap usage of the resident files (the Resident memory header, the status bar tooltip). */
  usage: ResidentUsage[] = [];
  /** Every resident candidate's status in the last listing, rows or not (to say how a gone row was decided). */
  statuses = new Map<string, string>();
  /** The sections whose listing the server refused in the last refresh, and its reason (shown in the section). */
  unreadable: Unreadable = {};
  private pending: Promise<void> | undefined;
  private shown = '';
  private again = false;

  getTreeItem(node: InboxNode): vscode.TreeItem {
    if (node.type === 'section') {
      const t = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      t.id = nodeId(node);
      t.description = node.usage ? `${node.children.length} · ${node.usage}` : String(node.children.length);
      t.tooltip = node.usage ? `Cap usage: ${this.usage.map(usageText).join('; ')}` : undefined;
      t.contextValue = `memzoi.section.${node.id}`;
      t.iconPath = new vscode.ThemeIcon(node.id === 'local' ? 'lock' : node.id === 'checkpoint' ? 'history' : 'note');
      return t;
    }
    if (node.type === 'unreadable') {
      const row = unreadableRow(node.section, node.message);
      const t = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
      t.id = nodeId(node);
      t.description = row.description;
      t.tooltip = row.tooltip;
      t.iconPath = new vscode.ThemeIcon('error');
      t.contextValue = 'memzoi.unreadable';
      return t;
    }
    if (node.type === 'reason') {
      const t = new vscode.TreeItem(node.blocker.code, vscode.TreeItemCollapsibleState.None);
      t.id = nodeId(node);
      t.description = node.blocker.message;
      t.tooltip = `${node.blocker.code}: ${node.blocker.message}`;
      t.iconPath = new vscode.ThemeIcon('circle-slash');
      t.contextValue = 'memzoi.reason';
      return t;
    }
    const item = node.item;
    const { label, description } = describeItem(item);
    const blocked = childrenOf(node).length > 0;
    const t = new vscode.TreeItem(label, blocked ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    t.id = nodeId(node); // stable across refreshes: an inline button resolves to this row's node, see nodeId
    t.description = description;
    t.tooltip = tooltipOf(item);
    t.resourceUri = vscode.Uri.parse(item.uri);
    t.contextValue = contextValue(item);
    t.iconPath = new vscode.ThemeIcon(iconOf(item));
    t.command = item.kind === 'local' || item.kind === 'checkpoint'
      ? { command: 'memzoi.inbox.showLocal', title: 'Show', arguments: [item] }
      : item.kind === 'reflection'
        ? { command: 'memzoi.inbox.openJob', title: 'Open Reflection Job', arguments: [item] }
        : { command: 'memzoi.inbox.open', title: 'Open', arguments: [item] };
    return t;
  }

  /**
   * The row an inbox button acts on (`arg`: the node VS Code passed, `undefined` when the tree redrew under the
   * click), as a fresh listing shows it, when it still accepts `verb`; else `undefined` after saying why (it is
   * gone, or was decided elsewhere). A row's button never opens a picker of other rows.
   */
  async current(arg: unknown, kind: InboxItem['kind'], verb: RowVerb): Promise<InboxItem | undefined> {
    await this.refresh();
    const found = rowNow(resolveTarget(arg), this.items, kind, verb, this.statuses);
    if ('row' in found) return found.row;
    void vscode.window.showWarningMessage(`Memzoi: ${found.problem}`);
    return undefined;
  }

  getChildren(node?: InboxNode): InboxNode[] {
    return node ? childrenOf(node) : inboxTree(this.items, this.usage, this.unreadable);
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
          refused = {};
          const listing = await computeProposals();
          const resident = await computeResident();
          this.usage = resident.usage;
          this.items = [...(listing?.rows ?? []), ...uncertainRows(allDiagnostics()), ...resident.rows,
            ...(await computeLocalRows()), ...(await serverRows(CHECKPOINTS_LIST, checkpointRows, 'checkpoints', {}, 'checkpoint'))];
          this.unreadable = refused;
          if (!state.scanned && startupOver({ ready: state.ready, listing, scannedLine: state.scannedLine })) {
            state.scanned = true;
          }
        } catch (err) {
          state.output.error(`Memory Inbox: ${String(err)}`);
        }
      } while (this.again);
      // Redraw only when something changed: a redraw under the pointer can swallow a click on a row's button.
      const shown = JSON.stringify([this.items, this.usage, this.unreadable]);
      if (shown !== this.shown) this.changed.fire(undefined);
      this.shown = shown;
      updateStatus();
      this.pending = undefined;
    })();
    return this.pending;
  }
}

let warnedOld = false;

/** The pending proposals with the server's verdict on each (`undefined` when the server cannot say). */
async function computeProposals(): Promise<{ rows: InboxItem[]; scanning: boolean } | undefined> {
  if (state.client?.state !== State.Running) return undefined;
  if (!advertisedCommands().includes(PROPOSALS_LIST)) {
    if (!warnedOld) state.output.warn(`Memory Inbox: this memzoi-lsp has no ${PROPOSALS_LIST}; update memzoi-lsp to list proposals`);
    warnedOld = true;
    return undefined;
  }
  try {
    return proposalRows(await state.client.sendRequest(ExecuteCommandRequest.type, { command: PROPOSALS_LIST, arguments: [{}] }));
  } catch (err) {
    state.output.warn(`Memory Inbox: proposals: ${String(err)}`);
    return undefined;
  }
}

/**
 * The Resident memory section: candidates of the workspace's resident files and their cap usage, when the server
 * offers them (usage from `memzoi.residentStatus` when advertised, else from the listing's scopes).
 */
async function computeResident(): Promise<{ rows: InboxItem[]; usage: ResidentUsage[] }> {
  let usage: ResidentUsage[] = [];
  let rows = await serverRows(RESIDENT_LIST, (answer) => {
    usage = residentUsage(answer);
    state.inbox.statuses = candidateStatuses(answer);
    return residentRows(answer);
  }, 'resident memory', {}, 'resident');
  // Reflection jobs (and which candidate each proposed) from the WorkStateProjection, when the server offers it.
  const jobs = await serverRows(RESIDENT_STATE, (answer) => {
    rows = linkJobs(rows, answer);
    return reflectionRows(answer);
  }, 'reflection jobs', {}, 'resident');
  rows = [...rows, ...jobs];
  if (advertisedCommands().includes(RESIDENT_STATUS)) {
    for (const file of [...usage]) {
      await serverRows(RESIDENT_STATUS, (answer) => {
        const fresh = residentUsage(answer).find((x) => x.uri === file.uri);
        if (fresh) usage = usage.map((u) => (u.uri === file.uri ? { ...u, ...fresh, scope: u.scope } : u));
        return [];
      }, 'resident status', { uri: file.uri });
    }
  }
  return { rows, usage };
}

/** The Local memory section: candidates agents proposed for private local memory, when the server offers them. */
function computeLocalRows(): Promise<InboxItem[]> {
  return serverRows(LOCAL_LIST, localRows, 'local memory', {}, 'local');
}

/** The sections refused in the refresh under way (their first reason), kept by the provider when it ends. */
let refused: Partial<Record<SectionId, string>> = {};

/**
 * Rows from a listing command of the server (none when it is not running or does not offer the command). A
 * refusal is logged and, for the listing of a `section`, kept as its reason, which the section then shows.
 */
async function serverRows(command: string, toRows: (answer: unknown) => InboxItem[], what: string,
  arg: Record<string, unknown> = {}, section?: SectionId): Promise<InboxItem[]> {
  if (state.client?.state !== State.Running || !advertisedCommands().includes(command)) return [];
  try {
    return toRows(await state.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] }));
  } catch (err) {
    state.output.warn(`Memory Inbox: ${what}: ${String(err)}`);
    if (section && !refused[section]) refused[section] = err instanceof Error ? err.message : String(err);
    return [];
  }
}
