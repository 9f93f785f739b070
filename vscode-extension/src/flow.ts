// Review, then write, as one flow (issue 28, contract §3/§4), and the pickers a command started without a target
// uses. The reason and title are asked once, before the preview; the diff of every file the change writes opens
// (before on the left); one question names the target and offers the write; the write is sent with exactly the
// previewed arguments. With `memzoi.confirmWrites` off, writes go without the review.
import * as vscode from 'vscode';
import { closeDiffs, newDiffKey, showDiffs } from './history';
import { type CommandSpec, validateReason } from './logic/commands';
import type { InboxItem } from './logic/inbox';
import { PREVIEW_OF, previewArg, type PreviewFile, previewFiles, previewUnsupported, reviewQuestion, staleNotice, verbOf,
  withPreviewed } from './logic/review';
import { describeTarget, DONE, pickerRows, type RowVerb, type Target, targetOfItem } from './logic/targets';
import { ask, executeOnServer, reportRefusal, roots } from './run';
import { readConfig, state } from './state';

/** The `memzoi.confirmWrites` setting (default on): writes go through the review flow. */
export function confirmWrites(): boolean {
  return readConfig().get<boolean>('confirmWrites') !== false;
}

/** Asks for a reason naming the target: `undefined` when cancelled. */
export function promptReason(verb: string, target: Target | undefined, required: boolean): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Memzoi: ${verb}${target ? ` ${describeTarget(target, roots())}` : ''}`,
    prompt: required ? 'Reason (required; recorded with the change)' : 'Reason (optional; recorded with the change)',
    validateInput: (v) => validateReason(v, required),
    ignoreFocusOut: true,
  }).then((v) => (v === undefined ? undefined : v.trim()));
}

/**
 * Asks for the replacement's title (supersede), required: the replacement's id is its title's slug and must differ
 * from the record's (Memzoi refuses a supersede that keeps it), so the record's own title is never a default.
 * `undefined` cancels.
 */
export function promptTitle(target: Target | undefined): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Memzoi: supersede${target ? ` ${describeTarget(target, roots())}` : ''}`,
    prompt: 'New title (say what changed: the replacement needs an id of its own)',
    validateInput: (v) => (v.trim() ? undefined : 'The replacement needs a title of its own'),
    ignoreFocusOut: true,
  }).then((v) => (v === undefined ? undefined : v.trim()));
}

/**
 * The review flow of the write `command` with its final arguments `arg` on `target`: the preview's diffs, then
 * one modal question naming the target and listing the files; the write runs only on its button. Without
 * `memzoi.confirmWrites` the write runs at once, unless `force` (a Review the user asked for). A preview the server refuses is reported once and ends the flow
 * (the write would be refused alike); an older server without a preview of the operation gets the question alone.
 * The write carries the preview's fingerprint (`previewed`): a file changed since the diff was shown refuses it
 * (`preview_stale`, reported once), and a new review is offered.
 */
export async function reviewThenWrite(spec: CommandSpec | undefined, command: string, target: Target,
  arg: Record<string, unknown>, force = false): Promise<unknown> {
  if (!force && !confirmWrites()) return executeOnServer(spec, command, [arg], target);
  const operation = PREVIEW_OF[command];
  const key = newDiffKey();
  let files: PreviewFile[] = [];
  let previewed = operation === undefined;
  let shown: unknown;
  if (operation !== undefined) {
    const answer = await ask('memzoi.preview', [previewArg(operation, arg)]);
    if (!answer.ok && !previewUnsupported(answer.message)) return reportRefusal('memzoi.preview', answer.message);
    if (answer.ok) {
      files = previewFiles(answer.result);
      previewed = true;
      shown = answer.result;
      await showDiffs(`Review ${operation}`, answer.result, key);
    } else {
      state.output.info(`memzoi.preview has no "${operation}" in this memzoi-lsp: asking without a diff`);
    }
  }
  const q = reviewQuestion(command, target, files, roots(), previewed);
  const verb = verbOf(command);
  const choice = await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, verb);
  await closeDiffs(key);
  if (choice !== verb) return undefined;
  let stale: string | undefined;
  const result = await executeOnServer(spec, command, [withPreviewed(arg, shown)], target, files, (code, message) => {
    stale = staleNotice(code, message);
    return stale !== undefined; // told once below, with Preview again
  });
  if (stale === undefined) return result;
  const again = 'Preview again';
  const pick = await vscode.window.showWarningMessage(stale, again);
  return pick === again ? reviewThenWrite(spec, command, target, arg, true) : undefined;
}

/** `memzoi.review` `[{uri}]`: the review of a pending proposal, then Apply or Cancel. */
export async function reviewProposal(arg: unknown, target: Target | undefined): Promise<unknown> {
  const t = target ?? (await pickInboxItem('proposal', 'Review which proposal?'));
  if (!t?.uri) return undefined;
  const given = arg && typeof arg === 'object' ? (arg as Record<string, unknown>) : {};
  return reviewThenWrite(undefined, 'memzoi.apply', t, { ...given, uri: t.uri }, true);
}

/** `memzoi.reviewCandidate` `[{uri, candidateId}]`: the review of a resident candidate, then Approve or Cancel. */
export async function reviewCandidate(target: Target | undefined): Promise<unknown> {
  const t = target?.candidateId ? target : await pickInboxItem('resident', 'Review which resident-memory candidate?', 'approve');
  if (!t?.uri || !t.candidateId) return undefined;
  const row = state.inbox.items.find((i) => i.kind === 'resident' && i.id === t.candidateId);
  const named = row ? { ...targetOfItem(row), ...t, title: t.title ?? row.title } : t;
  return reviewThenWrite(undefined, 'memzoi.resident.approve', named, { uri: t.uri, candidate_id: t.candidateId }, true);
}

/** A modal question naming the target; true when the user chose `verb`. Skipped (true) with confirmWrites off. */
export async function confirmTarget(message: string, verb: string, detail?: string): Promise<boolean> {
  if (!confirmWrites()) return true;
  return (await vscode.window.showWarningMessage(message, { modal: true, detail }, verb)) === verb;
}

/**
 * Lets the user pick an inbox row of `kind` (a command started without a target), among those that accept `verb`
 * now when it is given. The active editor's file, when it is one of them, is listed first and marked; nothing is
 * chosen without the user.
 */
export async function pickInboxItem(kind: InboxItem['kind'], title: string, verb?: RowVerb): Promise<Target | undefined> {
  await state.inbox.refresh();
  const active = vscode.window.activeTextEditor?.document.uri.toString();
  const rows = pickerRows(state.inbox.items, kind, active, verb);
  if (rows.length === 0) {
    void vscode.window.showInformationMessage(`Memzoi: the Memory Inbox has no ${kind === 'proposal' ? 'pending proposal' : `${kind} candidate`}${verb && kind !== 'proposal' ? ` that can be ${DONE[verb]}` : ''}.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    rows.map((r) => ({ label: r.item.title, description: [r.active ? 'open in the editor' : '', vscode.workspace.asRelativePath(vscode.Uri.parse(r.item.uri))].filter(Boolean).join(' · '), item: r.item })),
    { title: `Memzoi: ${title}`, matchOnDescription: true, ignoreFocusOut: true },
  );
  return picked ? targetOfItem(picked.item) : undefined;
}

/** Lets the user pick a file matching `glob` (records, materialization candidates), the active one first. */
export async function pickFile(glob: string, title: string): Promise<Target | undefined> {
  const found = await vscode.workspace.findFiles(glob, '**/node_modules/**', 2000);
  if (found.length === 0) {
    void vscode.window.showInformationMessage(`Memzoi: no file matches ${glob}.`);
    return undefined;
  }
  const active = vscode.window.activeTextEditor?.document.uri.toString();
  const sorted = [...found].sort((a, b) => Number(b.toString() === active) - Number(a.toString() === active)
    || a.path.localeCompare(b.path));
  const picked = await vscode.window.showQuickPick(
    sorted.map((u) => ({ label: vscode.workspace.asRelativePath(u), description: u.toString() === active ? 'open in the editor' : undefined, uri: u })),
    { title: `Memzoi: ${title}`, matchOnDescription: true, ignoreFocusOut: true },
  );
  return picked ? { uri: picked.uri.toString() } : undefined;
}
