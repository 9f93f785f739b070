// Shared state of the extension (the language client, the output channel, the inbox and the status item) and the
// small helpers every part uses. Set up by extension.ts's activate.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { InboxItem, ResidentUsage } from './logic/inbox';
import type { Unreadable } from './logic/inboxView';
import type { RowVerb } from './logic/targets';

export const SECTION = 'memzoi';
/** Server command listing both resident memory files and their candidates. */
export const RESIDENT_LIST = 'memzoi.resident.list';
/** Server command of the resident files' "N pending candidates: Review" code lens. */
export const RESIDENT_REVIEW = 'memzoi.resident.review';
/** Server command giving the cap usage of resident files (`{uri}` -> `{files: [{uri, used, cap, entries}]}`). */
export const RESIDENT_STATUS = 'memzoi.residentStatus';
/** Server command returning the WorkStateProjection (entries, candidates with their job, reflection jobs). */
export const RESIDENT_STATE = 'memzoi.resident.state';
/** Server command returning one reflection job's request and outcome (`{job_id}` -> `{job, request, outcome, text}`). */
export const RESIDENT_JOB = 'memzoi.resident.job';
/** Server command listing the pending local-memory candidates agents proposed. */
export const LOCAL_LIST = 'memzoi.local.list';
/** Server command listing the session checkpoints with the actions each accepts now. */
export const CHECKPOINTS_LIST = 'memzoi.checkpoints.list';
/** Server command giving the Memory health view (the repository maintenance plan, grouped). */
export const MEMORY_HEALTH = 'memzoi.memoryHealth';
/** Server command listing the pending proposals with the core's can-apply verdict on each. */
export const PROPOSALS_LIST = 'memzoi.proposals.list';

/** What the Memory Inbox offers the other parts. */
export interface Inbox {
  items: InboxItem[];
  usage: ResidentUsage[];
  statuses: Map<string, string>;
  /** Sections whose listing the server refused, with its reason. */
  unreadable: Unreadable;
  refresh(): Promise<void>;
  /** The row an inbox button acts on, freshly listed, or `undefined` after saying why not (see InboxProvider). */
  current(arg: unknown, kind: InboxItem['kind'], verb: RowVerb): Promise<InboxItem | undefined>;
  schedule(): void;
}

export const state: {
  client: LanguageClient | undefined;
  output: vscode.LogOutputChannel;
  extensionUri: vscode.Uri;
  inbox: Inbox;
  statusItem: vscode.StatusBarItem;
  /** False until the server is ready and no scan is running (the status bar says "starting…" meanwhile). */
  scanned: boolean;
  /** The server said `memzoi-lsp ready`: it has registered the workspace's projects. */
  ready: boolean;
  /** A "scanned" log line came (what ends "starting…" with a server that cannot list proposals). */
  scannedLine: boolean;
  /** Registers the client's review commands the running server does not advertise (once each). */
  registerReviewCommands: () => void;
  /**
   * Asks the server for the Memory health view again when it is shown (set by the view's owner): once the server
   * is ready (a view shown before that asked a server that was not there yet) and after each change it wrote.
   */
  refreshHealth: () => void;
} = {
  client: undefined,
  scanned: false,
  ready: false,
  scannedLine: false,
  registerReviewCommands: () => undefined,
  refreshHealth: () => undefined,
} as unknown as typeof state;

export function readConfig(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function advertisedCommands(): string[] {
  return state.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
}
