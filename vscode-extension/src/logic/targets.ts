// What a command acts on. Every command takes its target explicitly from what it was started from: an inbox row
// (the tree passes its node, `{type: 'row', item}`), a code action or lens (the server's `{uri, candidate_id}`
// argument), a URI, or a prompt. The active editor is never consulted here: a command given a target acts on it,
// one given none asks with a picker (issue 28, contract §5). Pure logic (no `vscode` import).
import { type InboxItem, isPendingProposalUri, stemOf } from './inbox';

/** The explicit target of one invocation. */
export interface Target {
  /** The file acted on: a proposal packet, a record, a resident file, or the file an uncertain change touched. */
  uri?: string;
  /** What the target is, when the argument says so (an inbox row does). */
  kind?: InboxItem['kind'];
  /** Human title (a proposal's title, a candidate's text), for confirmations. */
  title?: string;
  /** Proposal id, for confirmations. */
  id?: string;
  /** Resident or local candidate id. */
  candidateId?: string;
  /** Ledger change id (undo, recover). */
  changeId?: string;
  /** The inbox row it came from, when it came from one. */
  item?: InboxItem;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

function isItem(v: Record<string, unknown>): boolean {
  return typeof v.kind === 'string' && typeof v.uri === 'string' && typeof v.id === 'string';
}

/** The target of an inbox row. */
export function targetOfItem(item: InboxItem): Target {
  const t: Target = { uri: item.uri, kind: item.kind, title: item.title, item };
  if (item.kind === 'proposal') t.id = item.id;
  if (item.kind === 'resident' || item.kind === 'local') t.candidateId = item.id;
  if (item.kind === 'uncertain' && item.changeId) t.changeId = item.changeId;
  return t;
}

/**
 * The explicit target carried by a command argument, or `undefined` when there is none (the palette passes
 * nothing). Accepted: an inbox tree node (`{type: 'row', item}`, a blocker's `{type: 'reason', parent}`), an inbox
 * row itself, a `vscode.Uri` (any object with `scheme`, `path` and `toString`), a URI string, and a server
 * argument object `{uri?, candidate_id|candidateId?, change_id|changeId?, title?}` (code actions, lenses,
 * `memzoi.review`), alone or first in an argument list.
 */
export function resolveTarget(arg: unknown): Target | undefined {
  if (Array.isArray(arg)) return arg.length > 0 ? resolveTarget(arg[0]) : undefined;
  if (typeof arg === 'string') return /^[a-z][\w+.-]*:/i.test(arg) ? { uri: arg } : undefined;
  if (!arg || typeof arg !== 'object') return undefined;
  const o = arg as Record<string, unknown>;
  if (o.type === 'row' && o.item && typeof o.item === 'object') return resolveTarget(o.item);
  if (o.type === 'reason' && o.parent && typeof o.parent === 'object') return resolveTarget(o.parent);
  if (isItem(o)) return targetOfItem(arg as InboxItem);
  if (typeof o.scheme === 'string' && typeof o.path === 'string' && typeof o.toString === 'function') {
    return { uri: (arg as { toString(): string }).toString() };
  }
  const t: Target = {};
  const uri = str(o.uri);
  const candidateId = str(o.candidate_id) ?? str(o.candidateId);
  const changeId = str(o.change_id) ?? str(o.changeId);
  if (uri) t.uri = uri;
  if (candidateId) t.candidateId = candidateId;
  if (changeId) t.changeId = changeId;
  if (str(o.title)) t.title = str(o.title);
  return t.uri || t.candidateId || t.changeId ? t : undefined;
}

/** What a command needs as its target. */
export type Need = 'proposal' | 'record' | 'candidate' | 'resident' | 'change' | 'file';

/**
 * Whether `target` fits a command that needs `need`: `undefined` when it does, else the sentence to show (the
 * command then stops; it never substitutes another file).
 */
export function targetProblem(target: Target, need: Need, what: string): string | undefined {
  if (need === 'change') return target.changeId ? undefined : `${what} needs a ledger change.`;
  if (need === 'resident') {
    return target.candidateId && target.uri ? undefined : `${what} needs a resident-memory candidate.`;
  }
  if (!target.uri) return `${what} needs a file.`;
  if (need === 'proposal' && !isPendingProposalUri(target.uri)) {
    return `${what} works on a pending proposal; ${describeTarget(target)} is not one.`;
  }
  if (target.kind && target.kind !== 'proposal' && need === 'proposal') return `${what} works on a pending proposal.`;
  return undefined;
}

/** The workspace-relative path of a `file://` URI below `root` (a folder URI), else its decoded path. */
export function relativePath(uri: string, roots: readonly string[] = []): string {
  for (const r of roots) {
    const base = r.replace(/\/+$/, '') + '/';
    if (uri.startsWith(base)) return decodeURIComponent(uri.slice(base.length));
  }
  return decodeURIComponent(uri.replace(/^file:\/\//, ''));
}

/**
 * The target named for a person: `“Title” (path)` for a proposal or candidate, the path alone for a file, the
 * short change id for a change. Never empty.
 */
export function describeTarget(target: Target, roots: readonly string[] = []): string {
  const path = target.uri ? relativePath(target.uri, roots) : undefined;
  const title = target.title ?? (target.kind === 'proposal' && target.uri ? stemOf(target.uri) : undefined);
  if (title && path) return `“${title}” (${path})`;
  if (title) return `“${title}”`;
  if (path) return path;
  if (target.changeId) return `change ${target.changeId.slice(0, 12)}`;
  if (target.candidateId) return `candidate ${target.candidateId.slice(0, 12)}`;
  return 'the chosen item';
}

/** A change as an undo confirmation names it. */
export interface ChangeFacts {
  change_id: string;
  operation?: string;
  time?: string;
  files?: string[];
}

/** The undo confirmation: the change's operation, files and time (issue 28: every confirmation names its target). */
export function undoConfirmation(c: ChangeFacts): string {
  const op = c.operation || 'change';
  const when = c.time ? ` of ${c.time}` : '';
  const files = c.files && c.files.length > 0 ? `: ${c.files.join(', ')}` : '';
  return `Undo the ${op}${when}${files}? The files it wrote get their exact previous bytes back (change ${c.change_id.slice(0, 12)}).`;
}

/**
 * The facts of one change of a `memzoi.history` answer (operation, time, files), or only its id when the answer
 * does not list it.
 */
export function changeFacts(history: unknown, changeId: string): ChangeFacts {
  if (Array.isArray(history)) {
    for (const raw of history) {
      const c = (raw ?? {}) as Record<string, unknown>;
      if (String(c.change_id) !== changeId) continue;
      const when = str(c.applied_at) ?? str(c.created_at);
      const files = Array.isArray(c.files)
        ? (c.files as Record<string, unknown>[]).map((f) => (typeof f?.path === 'string' ? f.path : '')).filter(Boolean)
        : [];
      return { change_id: changeId, operation: str(c.operation), time: when?.replace('T', ' ').replace(/\.\d+Z$|Z$/, ''), files };
    }
  }
  return { change_id: changeId };
}

/** What an inbox row's button or a picker is for (the server command's verb; `open`/`show` only read). */
export type RowVerb = 'approve' | 'reject' | 'undo' | 'recover' | 'apply' | 'routeLocal' | 'continue' | 'close' | 'edit' | 'open' | 'show';

/**
 * Whether the inbox row `item` accepts `verb` now, by the server's own verdict: a resident candidate is approved,
 * rejected or edited only while `decidable` (pending or failed), undone only while `undoable`, recovered only while
 * `uncertain`; a checkpoint takes only the transitions in its `actions`. Every other row (a pending packet, a local
 * candidate, an uncertain change) takes its buttons while it is listed; the server still decides.
 */
export function rowAllows(item: InboxItem, verb: RowVerb): boolean {
  if (verb === 'open' || verb === 'show') return true;
  if (item.kind === 'resident') {
    if (verb === 'approve' || verb === 'reject' || verb === 'edit') {
      return item.decidable ?? (item.status === 'pending' || item.status === 'failed');
    }
    if (verb === 'undo') return item.undoable === true;
    if (verb === 'recover') return item.status === 'uncertain';
    return false;
  }
  if (item.kind === 'checkpoint' && (verb === 'continue' || verb === 'close')) return item.actions?.includes(verb) ?? true;
  return true;
}

/** What a button says when VS Code passed no row: the tree redrew under the click. */
export const ROW_GONE = 'the row you clicked is no longer in the Memory Inbox (it changed as you clicked); nothing was done. Look at the refreshed inbox.';

/** Each verb's past participle, for messages ("cannot be approved now"). */
export const DONE: Readonly<Record<RowVerb, string>> = {
  approve: 'approved', reject: 'rejected', undo: 'undone', recover: 'recovered', apply: 'applied', routeLocal: 'routed to local memory',
  continue: 'continued', close: 'closed', edit: 'edited', open: 'opened', show: 'shown',
};

function sameRow(a: InboxItem, t: Target): boolean {
  if (t.item) return a.id === t.item.id && (a.kind !== 'proposal' || a.uri === t.item.uri);
  return (t.candidateId !== undefined && a.id === t.candidateId) || (t.changeId !== undefined && a.changeId === t.changeId)
    || (a.kind === 'proposal' && t.uri !== undefined && a.uri === t.uri);
}

/**
 * The row a command started from an inbox row acts on: the row `given` names, as the freshly listed `items` show it
 * now, when it still accepts `verb`. Otherwise the sentence to show, and the command does nothing: it never falls
 * back to a picker of other rows (contract §5). `given` is `undefined` when the tree redrew under the click (VS Code
 * then passes no row); `states` maps candidate ids the inbox no longer lists to their status (`rejected`, …).
 */
export function rowNow(given: Target | undefined, items: readonly InboxItem[], kind: InboxItem['kind'], verb: RowVerb,
  states: ReadonlyMap<string, string> = new Map()): { row: InboxItem } | { problem: string } {
  if (!given || (given.kind && given.kind !== kind)) {
    return { problem: ROW_GONE };
  }
  const row = items.find((i) => i.kind === kind && sameRow(i, given));
  const id = given.item?.id ?? given.candidateId ?? given.changeId ?? given.id;
  const what = kind === 'proposal' ? `proposal ${describeTarget({ ...given, kind })}` : `${kind === 'uncertain' ? 'change' : kind === 'checkpoint' ? 'checkpoint' : 'candidate'} ${id ?? describeTarget(given)}`;
  if (!row) {
    const status = id ? states.get(id) : undefined;
    return { problem: `${what} was decided elsewhere: ${status ?? 'it is no longer in the Memory Inbox'}; nothing was done.` };
  }
  if (!rowAllows(row, verb)) {
    const status = row.kind === 'checkpoint' ? `it accepts ${(row.actions ?? []).join(', ') || 'nothing'} now` : row.status ?? 'it changed';
    return { problem: `${what} was decided elsewhere: ${status}; it cannot be ${DONE[verb]} now. Nothing was done.` };
  }
  return { row };
}

/**
 * Picker entries for a command started without a target: the inbox rows of `kind` that accept `verb` now (all of
 * them without one; see {@link rowAllows}), with the active editor's file (when it is one of them) first and marked,
 * so choosing it takes one Enter; nothing is preselected otherwise.
 */
export function pickerRows(items: readonly InboxItem[], kind: InboxItem['kind'], activeUri?: string, verb?: RowVerb): { item: InboxItem; active: boolean }[] {
  const rows = items.filter((i) => i.kind === kind && (!verb || rowAllows(i, verb)))
    .map((item) => ({ item, active: activeUri !== undefined && item.uri === activeUri }));
  return [...rows.filter((r) => r.active), ...rows.filter((r) => !r.active)];
}
