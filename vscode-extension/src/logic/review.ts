// Review, then write, as one flow (issue 28, contract §3/§4): which preview a write has, what the Apply/Cancel
// question says, the one-line message after a write, and the files a change touched. Pure logic (no `vscode`).
import { describeTarget, type Target } from './targets';

/** The `memzoi.preview` operation of a server write command (`undefined`: the write has no preview). */
export const PREVIEW_OF: Readonly<Record<string, string>> = {
  'memzoi.apply': 'apply',
  'memzoi.supersede': 'supersede',
  'memzoi.tombstone': 'tombstone',
  'memzoi.materialize': 'materialize',
  'memzoi.reattest': 'reattest',
  'memzoi.resident.approve': 'approve',
  // Approve with edited content previews as an approve carrying the `content`; removal as `remove_entry`.
  'memzoi.resident.edit': 'approve',
  'memzoi.resident.remove': 'remove_entry',
};

/** The write arguments `memzoi.preview` also takes (the resident edit's `content`, the removal's `scope` and `locator`). */
const PREVIEW_KEYS = ['uri', 'reason', 'title', 'body', 'content', 'scope', 'locator'] as const;

/**
 * The `memzoi.preview` argument of `operation` for the write arguments `arg`: the keys the preview takes, and the
 * candidate id under both spellings (`candidateId`, `candidate_id`).
 */
export function previewArg(operation: string, arg: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { operation };
  for (const k of PREVIEW_KEYS) if (arg[k] !== undefined) out[k] = arg[k];
  const cid = arg.candidate_id ?? arg.candidateId;
  if (cid !== undefined) {
    out.candidateId = cid;
    out.candidate_id = cid;
  }
  return out;
}

/**
 * The write arguments `arg` with the fingerprint of the preview the user saw (`previewed` of the `memzoi.preview`
 * answer `result`): the server then acts on exactly what the diff showed, or refuses (`preview_stale`) when a file
 * changed since. `arg` as it is when the answer carries none (an older server).
 */
export function withPreviewed(arg: Record<string, unknown>, result: unknown): Record<string, unknown> {
  const previewed = result && typeof result === 'object' ? (result as { previewed?: unknown }).previewed : undefined;
  return typeof previewed === 'string' && previewed ? { ...arg, previewed } : arg;
}

/** Whether a refusal's reason code says a file changed since the preview (the flow then offers a new one). */
export function isStale(code: unknown): boolean {
  return code === 'preview_stale';
}

/**
 * The one notice of a stale refusal, shown with *Preview again* (the refusal is not also shown as an error): the
 * server's first line, which names the files that changed; undefined for any other refusal.
 */
export function staleNotice(code: unknown, message: string): string | undefined {
  if (!isStale(code)) return undefined;
  const first = message.split('\n')[0].trim();
  return `Memzoi: ${first || 'the files changed since the preview; nothing was written.'}`;
}

/** One file of a preview: its path, URI and texts (`null`: absent on that side). */
export interface PreviewFile {
  path: string;
  uri?: string;
  before: string | null;
  after: string | null;
  /** The server's word for what the change does to the file (`created`, `deleted`, `modified`, `unchanged`). */
  change?: string;
}

/** The files of a `memzoi.preview` (or `memzoi.changeFiles`) answer; `[]` for another shape. */
export function previewFiles(result: unknown): PreviewFile[] {
  const files = (result as { files?: unknown } | undefined)?.files;
  if (!Array.isArray(files)) return [];
  return files.filter((f): f is PreviewFile => !!f && typeof (f as PreviewFile).path === 'string');
}

/**
 * What a change does to one file, in the words the CLI prints: the server's `change` (`created`, `deleted`,
 * `modified`, `unchanged`: one file absent before and after is `unchanged`). An older server sends no word: it is
 * then read from the two texts.
 */
export function fileChange(f: PreviewFile): string {
  if (typeof f.change === 'string' && f.change !== '') return f.change;
  if (f.before === f.after) return 'unchanged';
  return f.before === null ? 'created' : f.after === null ? 'deleted' : 'modified';
}

/** The files a write will touch, as `memzoi/changed` lists them (`deleted`: the file is gone afterwards). */
export function touchedOf(files: readonly PreviewFile[]): { uri: string; deleted: boolean }[] {
  return files.filter((f) => typeof f.uri === 'string').map((f) => ({ uri: f.uri as string, deleted: f.after === null }));
}

/** A refusal of `memzoi.preview` that only says this server has no preview of the operation (an older server). */
export function previewUnsupported(message: string): boolean {
  return /`operation` is one of|unknown operation|no preview/i.test(message);
}

const VERB: Readonly<Record<string, string>> = {
  'memzoi.apply': 'Apply',
  'memzoi.reject': 'Reject',
  'memzoi.routeLocal': 'Route to local memory',
  'memzoi.supersede': 'Propose superseding',
  'memzoi.tombstone': 'Propose tombstoning',
  'memzoi.materialize': 'Materialize',
  'memzoi.materialize.decide': 'Record the decision to write',
  'memzoi.reattest': 'Re-attest',
  'memzoi.undo': 'Undo',
  'memzoi.recover': 'Recover',
  'memzoi.resident.approve': 'Approve',
  'memzoi.resident.edit': 'Approve edited',
  'memzoi.resident.remove': 'Remove',
  'memzoi.resident.reject': 'Reject',
  'memzoi.resident.undo': 'Undo',
  'memzoi.resident.recover': 'Recover',
};

const DONE: Readonly<Record<string, string>> = {
  'memzoi.apply': 'Applied',
  'memzoi.reject': 'Rejected',
  'memzoi.routeLocal': 'Routed to local memory:',
  'memzoi.supersede': 'Proposed superseding',
  'memzoi.tombstone': 'Proposed tombstoning',
  'memzoi.materialize': 'Materialized',
  'memzoi.materialize.decide': 'Recorded the decision to write',
  'memzoi.reattest': 'Re-attested',
  'memzoi.undo': 'Undone:',
  'memzoi.recover': 'Recovered',
  'memzoi.resident.approve': 'Approved',
  'memzoi.resident.reject': 'Rejected',
  'memzoi.resident.undo': 'Undid',
  'memzoi.resident.recover': 'Recovered',
};

/** The verb a question about `command` starts with (`Apply`, `Reject`, …). */
export function verbOf(command: string): string {
  return VERB[command] ?? command.replace(/^memzoi\./, '');
}

/**
 * The Apply/Cancel question after a review: names the target and lists every file with what happens to it
 * (`{message, detail}`; the files go in `detail`). `previewed` false: the server offered no diff of it.
 */
export function reviewQuestion(command: string, target: Target, files: readonly PreviewFile[], roots: readonly string[] = [],
  previewed = true): { message: string; detail: string } {
  const what = command.startsWith('memzoi.resident.') && target.candidateId
    ? `resident-memory candidate ${describeTarget({ ...target, uri: undefined }, roots)} in ${describeTarget({ uri: target.uri }, roots)}`
    : describeTarget(target, roots);
  const lines = files.map((f) => `${fileChange(f)}: ${f.path}`);
  const detail = !previewed
    ? 'This memzoi-lsp shows no diff of it yet.'
    : lines.length > 0 ? `It writes:\n${lines.join('\n')}` : 'It writes no file.';
  return { message: `${verbOf(command)} ${what}?`, detail };
}

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/**
 * The message after a write: its first line says what happened and to what. The server's `message` when it sends
 * one (contract §6); otherwise built here: `Applied “Title” (path) -> records/x.md`. `detail` (change id, statuses)
 * goes to the output. `undefined` for results that are not a change.
 */
export function writeMessage(command: string, target: Target | undefined, result: unknown, roots: readonly string[] = []):
  { text: string; detail: string } | undefined {
  if (!result || typeof result !== 'object' || Array.isArray(result)) return undefined;
  const r = result as Record<string, unknown>;
  const detail = [r.detail, r.change_id ? `change ${text(r.change_id)}` : undefined, r.id && !r.change_id ? `candidate ${text(r.id)}` : undefined,
    r.status ? `status ${text(r.status)}` : undefined].filter(Boolean).map(text).join(' · ');
  if (typeof r.message === 'string' && r.message.trim()) return { text: r.message.trim().split('\n')[0], detail };
  if (r.change_id === undefined && r.status === undefined) return undefined;
  const done = DONE[command] ?? verbOf(command);
  // The target by its title when it has one (its path otherwise); after the arrow the files the change wrote that
  // people look for (records, resident files), not the packet's own move to resolved/.
  // An undo names the change it undid and every file it restored (a pending packet included).
  const undo = command === 'memzoi.undo' || command === 'memzoi.recover';
  const change = r.change_id !== undefined ? `change ${text(r.change_id).slice(0, 12)}` : '';
  const who = undo ? `${typeof r.operation === 'string' ? `the ${r.operation} ` : ''}(${change})`
    : target ? (target.title ? `“${target.title}”` : describeTarget(target, roots)) : '';
  const files = Array.isArray(r.files)
    ? (r.files as Record<string, unknown>[]).filter((f) => f && f.after !== 'absent' && f.after !== null)
      .map((f) => text(f.path))
      .filter((p) => undo || (!p.includes('.memzoi/proposals/') && !(target?.uri && target.uri.endsWith(`/${p}`))))
    : [];
  const status = typeof r.status === 'string' && !['applied', 'rejected', 'undone', 'recorded'].includes(r.status) ? ` (${r.status})` : '';
  return { text: `${done} ${who}${files.length > 0 ? ` -> ${files.join(', ')}` : ''}${status}`.replace(/\s+/g, ' ').trim(), detail };
}
