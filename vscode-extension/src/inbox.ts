// The Memory Inbox tree: pending proposals, uncertain changes, resident-memory and local-memory candidates.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';
import { buildInbox, describeItem, type InboxItem, localRows, residentRows } from './logic/inbox';
import { advertisedCommands, LOCAL_LIST, RESIDENT_LIST, state } from './state';
import { allDiagnostics, updateStatus } from './status';

/** The Memory Inbox tree: pending proposals and uncertain changes. */
export class InboxProvider implements vscode.TreeDataProvider<InboxItem> {
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
          state.output.error(`Memory Inbox: ${String(err)}`);
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
  if (state.client?.state !== State.Running || !advertisedCommands().includes(command)) return [];
  try {
    return toRows(await state.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [{}] }));
  } catch (err) {
    state.output.warn(`Memory Inbox: ${what}: ${String(err)}`);
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
