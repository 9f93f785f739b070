// Palette commands and the middleware of server commands run from code actions and lenses. Every command acts on
// the target it was started with (an inbox row, a code action's or lens's argument, a URI) and asks with a picker
// when it has none; it never substitutes the active editor (issue 28). What each needs is asked once (reason,
// title), writes go through the review flow (flow.ts), and the result or refusal is reported once (run.ts).
import * as vscode from 'vscode';
import { type Middleware, State } from 'vscode-languageclient/node';
import { confirmTarget, pickFile, pickInboxItem, promptReason, promptTitle, reviewCandidate, reviewProposal, reviewThenWrite } from './flow';
import { showHistory } from './history';
import { argsHaveReason, type CommandSpec, historyChanges, RECOVERY_MODES, resolveServerCommand, specForServerCommand } from './logic/commands';
import { PREVIEW_OF, verbOf } from './logic/review';
import { changeFacts, describeTarget, type Need, resolveTarget, type Target, targetOfItem, targetProblem, undoConfirmation } from './logic/targets';
import { buildServerSettings } from './logic/settings';
import { ask, executeOnServer, requestServer, roots } from './run';
import { routeFile } from './routing';
import { advertisedCommands, readConfig, RESIDENT_REVIEW, SECTION, state } from './state';

const NEED: Readonly<Record<string, Need>> = { proposal: 'proposal', record: 'record', candidate: 'candidate', memzoiFile: 'file', change: 'change' };

/** Asks for the target of a command started without one: a picker, never the active editor on its own. */
async function pickTarget(spec: CommandSpec): Promise<Target | undefined> {
  const what = spec.title.replace(/…$/, '');
  if (spec.target === 'proposal') return pickInboxItem('proposal', `${what}: which proposal?`);
  if (spec.target === 'record') return pickFile('**/.memzoi/records/**/*.md', `${what}: which record?`);
  if (spec.target === 'candidate') return pickFile('**/*candidate*.json', `${what}: which candidate?`);
  return pickFile('**/.memzoi/**/*.md', `${what}: which file?`);
}

/** The inbox's title of a proposal packet, so confirmations name it even when the target is a bare URI. */
function named(target: Target): Target {
  if (target.title || !target.uri) return target;
  const row = state.inbox.items.find((i) => i.uri === target.uri && i.kind === 'proposal');
  return row ? { ...targetOfItem(row), ...target, title: row.title } : target;
}

/**
 * Gathers what a command needs: its target (given, else picked), the ledger change for undo/recover, the query,
 * the reason and new title (each asked once, unless `given` carries it). Returns the target and the final argument
 * object (`given`'s fields kept), or `undefined` when the user cancelled or the target does not fit.
 */
async function gather(spec: CommandSpec, given: Target | undefined, givenArg: Record<string, unknown>):
  Promise<{ target: Target; arg: Record<string, unknown> } | undefined> {
  const arg: Record<string, unknown> = { ...givenArg };
  let target: Target = given ?? {};
  const what = spec.title.replace(/…$/, '');
  if (spec.target === 'change') {
    const changeId = target.changeId ?? (await pickChange(spec, target.uri));
    if (!changeId) return undefined;
    target = { ...target, changeId: changeId.trim() };
    arg.change_id = target.changeId;
    if (target.uri?.startsWith('file:')) arg.uri = target.uri;
    if (spec.modes && typeof arg.mode !== 'string') {
      const picked = await vscode.window.showQuickPick(
        spec.modes.map((m) => ({ label: m.label, description: m.mode, mode: m.mode })),
        { title: `Memzoi: recover change ${changeId.slice(0, 12)}`, ignoreFocusOut: true },
      );
      if (!picked) return undefined;
      arg.mode = picked.mode;
    }
  } else if (spec.target !== 'none') {
    const picked = given?.uri ? given : await pickTarget(spec);
    if (!picked) return undefined;
    target = named(picked);
    const problem = targetProblem(target, NEED[spec.target] ?? 'file', what);
    if (problem) {
      void vscode.window.showWarningMessage(`Memzoi: ${problem}`);
      return undefined;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.uri);
    if (doc?.isDirty) {
      // Lifecycle commands are disk transactions: the server refuses unsaved files, so say it up front.
      void vscode.window.showWarningMessage(`Memzoi: save ${vscode.workspace.asRelativePath(doc.uri)} first; lifecycle commands work on the file on disk.`);
      return undefined;
    }
    arg.uri = target.uri;
  }
  if (spec.query) {
    const q = await vscode.window.showInputBox({ title: `Memzoi: ${spec.title}`, ...spec.query, ignoreFocusOut: true });
    if (q === undefined) return undefined;
    arg.query = q;
  }
  if (spec.reason && !argsHaveReason([arg])) {
    const reason = await promptReason(what, spec.target === 'none' ? undefined : target, spec.reason === 'required');
    if (reason === undefined) return undefined;
    if (reason) arg.reason = reason;
  }
  if (spec.newTitle && arg.title === undefined) {
    const title = await promptTitle(target);
    if (title === undefined) return undefined;
    if (title) arg.title = title;
  }
  return { target, arg };
}

/**
 * Sends a gathered command: a write with a preview goes through the review flow; undo names the change's
 * operation, files and time; other confirmed commands name their target.
 */
async function send(spec: CommandSpec, command: string, target: Target, arg: Record<string, unknown>): Promise<unknown> {
  if (spec.args === 'query') return executeOnServer(spec, command, [arg.query ?? '']);
  if (PREVIEW_OF[command]) return reviewThenWrite(spec, command, target, arg);
  if (command === 'memzoi.undo' && target.changeId) {
    const history = await ask('memzoi.history', [target.uri ? { uri: target.uri } : {}]);
    const facts = changeFacts(history.ok ? history.result : undefined, target.changeId);
    if (!(await confirmTarget(undoConfirmation(facts), 'Undo'))) return undefined;
  } else if (spec.confirm || command === 'memzoi.routeLocal') {
    const verb = verbOf(command);
    if (!(await confirmTarget(`${verb} ${describeTarget(target, roots())}?`, verb, spec.confirm))) return undefined;
  }
  return executeOnServer(spec, command, [arg], target);
}

/** Lets the user pick a ledger change from the history (of `uri` when given), else type its id. */
async function pickChange(spec: CommandSpec, uri: string | undefined): Promise<string | undefined> {
  if (advertisedCommands().includes('memzoi.history')) {
    const answer = await ask('memzoi.history', [uri?.startsWith('file:') ? { uri } : {}]);
    const changes = answer.ok ? historyChanges(answer.result) : undefined;
    if (!answer.ok) state.output.warn(`history for the change picker failed: ${answer.message}`);
    if (changes && changes.length > 0) {
      const picked = await vscode.window.showQuickPick(
        changes.map((c) => ({ label: c.label, description: c.description, detail: c.detail, id: c.change_id })),
        { title: `Memzoi: ${spec.title.replace(/…$/, '')}: choose a change`, ignoreFocusOut: true, matchOnDescription: true },
      );
      return picked?.id;
    }
  }
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title}`,
    prompt: 'Ledger change id (see Memzoi: Show Change History)',
    validateInput: (v) => (v.trim() ? undefined : 'A change id is required.'),
    ignoreFocusOut: true,
  });
}

function serverRunning(): boolean {
  if (state.client && state.client.state === State.Running) return true;
  void vscode.window.showErrorMessage('Memzoi: the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.');
  return false;
}

/** Runs a palette or inbox command on its explicit target (`arg`: a row, URI, or none: then a picker). */
export async function runPaletteCommand(spec: CommandSpec, arg: unknown): Promise<unknown> {
  if (!serverRunning()) return undefined;
  const serverCommand = resolveServerCommand(spec, advertisedCommands());
  if (!serverCommand) {
    void vscode.window.showWarningMessage(`Memzoi: this memzoi-lsp does not offer "${spec.title}"; update memzoi-lsp.`);
    return undefined;
  }
  if (serverCommand === 'memzoi.history') {
    // Memory History (read-only): of the given file, else of the active editor's, else of the whole ledger.
    const t = resolveTarget(arg);
    return showHistory(historyExecute, t?.uri ? vscode.Uri.parse(t.uri) : vscode.window.activeTextEditor?.document.uri);
  }
  const got = await gather(spec, resolveTarget(arg), {});
  return got ? send(spec, serverCommand, got.target, got.arg) : undefined;
}

/** Memory History and previews send their commands through here; an undo is reported like a palette Undo. */
const historyExecute = (command: string, args: unknown[]): Promise<unknown> =>
  command === 'memzoi.undo' ? executeOnServer(specForServerCommand(command), command, args, resolveTarget(args)) : requestServer(command, args);

/** The first object argument of a server command (code action, lens), copied. */
function firstObject(args: readonly unknown[]): Record<string, unknown> {
  const o = args.find((a) => a !== null && typeof a === 'object' && !Array.isArray(a));
  return o ? { ...(o as Record<string, unknown>) } : {};
}

/**
 * Middleware for server-registered commands (code actions, code lenses): they carry their target; what is missing
 * (reason, title) is asked once; writes go through the review flow; the result is reported once.
 */
export const middleware: Middleware = {
  executeCommand: async (command, given, next) => {
    const arg = firstObject(given);
    const target = resolveTarget(arg);
    if (command === 'memzoi.preview') {
      // A preview code action is the review of its operation: the diff, then the write or nothing.
      const op = typeof arg.operation === 'string' ? arg.operation : 'apply';
      const write = op === 'approve' ? 'memzoi.resident.approve' : `memzoi.${op}`;
      const spec = specForServerCommand(write);
      const { operation: _op, ...rest } = arg;
      void _op;
      const got = spec ? await gather(spec, target, rest) : { target: target ?? {}, arg: rest };
      return got ? reviewThenWrite(spec, write, got.target, got.arg, true) : undefined;
    }
    // *Plan memory routing*: the preview per candidate, then Apply or nothing (src/routing.ts).
    if (command === 'memzoi.routing.preview' && typeof arg.uri === 'string') return routeFile(arg.uri);
    // A server that advertises the review commands: they still run the client's review flow.
    if (command === 'memzoi.review') return reviewProposal(arg, target);
    if (command === 'memzoi.reviewCandidate') return reviewCandidate(target);
    if (command === 'memzoi.history') return showHistory(historyExecute, target?.uri ? vscode.Uri.parse(target.uri) : undefined);
    if (command === RESIDENT_REVIEW) {
      // The code lens "N pending candidates: Review" opens them in the Memory Inbox.
      await state.inbox.refresh();
      await vscode.commands.executeCommand('memzoi.inbox.focus');
      const listed: unknown = await next(command, given);
      return listed;
    }
    if (command === 'memzoi.resident.approve' || command === 'memzoi.resident.reject' || command === 'memzoi.resident.undo') {
      return decideResident(target, command.slice('memzoi.resident.'.length) as 'approve' | 'reject' | 'undo');
    }
    const spec = specForServerCommand(command);
    if (spec) {
      const got = await gather(spec, target, arg);
      return got ? send(spec, command, got.target, got.arg) : undefined;
    }
    const result = await requestServer(command, given);
    void state.inbox.refresh();
    return result;
  },
  workspace: {
    // Answer workspace/configuration for `memzoi` with the normalised settings object.
    configuration: (params, token, next) => {
      if (params.items.some((i) => i.section === SECTION)) {
        return params.items.map((i) => (i.section === SECTION ? buildServerSettings((k) => readConfig().get(k)) : null));
      }
      return next(params, token);
    },
  },
};

/** When the candidate was applied, from the inbox's listing (for the undo confirmation). */
function whenApplied(target: Target): string | undefined {
  const row = target.item ?? state.inbox.items.find((i) => i.kind === 'resident' && i.id === target.candidateId);
  return row?.when;
}

/** The server command of each decision (named in full, so a search of the source finds every command it calls). */
const RESIDENT_COMMANDS = { approve: 'memzoi.resident.approve', reject: 'memzoi.resident.reject', undo: 'memzoi.resident.undo' } as const;
const LOCAL_COMMANDS = { approve: 'memzoi.local.approve', reject: 'memzoi.local.reject' } as const;

/**
 * Approves (review flow), rejects (asking the required reason) or undoes (naming the candidate, its file and
 * time) the resident-memory candidate `arg` names (an inbox row, or the server's `{uri, candidate_id}`). Started
 * from an inbox row (`fromRow`), it acts on that row as the inbox lists it now or says it is gone or was decided
 * elsewhere; otherwise, without a target, the user picks among the candidates that accept `verb`. Each gives one
 * message and reloads the resident file.
 */
export async function decideResident(arg: unknown, verb: 'approve' | 'reject' | 'undo', fromRow = false): Promise<unknown> {
  if (!serverRunning()) return undefined;
  let target: Target | undefined;
  if (fromRow) {
    const fresh = await state.inbox.current(arg, 'resident', verb);
    target = fresh && targetOfItem(fresh);
  } else {
    target = resolveTarget(arg) ?? (await pickInboxItem('resident', `${verb} which resident-memory candidate?`, verb));
  }
  if (!target) return undefined;
  if (target.kind && target.kind !== 'resident') {
    void vscode.window.showWarningMessage(`Memzoi: ${verb} works on a resident-memory candidate; ${describeTarget(target, roots())} is not one.`);
    return undefined;
  }
  const row = state.inbox.items.find((i) => i.kind === 'resident' && i.id === target?.candidateId);
  if (row && !target.item) target = { ...targetOfItem(row), ...target };
  const problem = targetProblem(target, 'resident', `${verb[0].toUpperCase()}${verb.slice(1)}`);
  if (problem) {
    void vscode.window.showWarningMessage(`Memzoi: ${problem}`);
    return undefined;
  }
  const command = RESIDENT_COMMANDS[verb];
  const args: Record<string, unknown> = { uri: target.uri, candidate_id: target.candidateId };
  const name = `resident-memory candidate ${describeTarget({ ...target, uri: undefined }, roots())} in ${describeTarget({ uri: target.uri }, roots())}`;
  if (verb === 'approve') return reviewThenWrite(undefined, command, target, args);
  if (verb === 'reject') {
    const reason = await promptReason('Reject', { title: target.title, uri: target.uri }, true);
    if (!reason) return undefined;
    args.reason = reason;
  } else {
    const when = whenApplied(target);
    if (!(await confirmTarget(`Undo ${name}${when ? `, approved ${when}` : ''}?`, 'Undo', 'The entries from before it are restored.'))) return undefined;
  }
  return executeOnServer(undefined, command, [args], target);
}

/** Settles the uncertain resident-memory candidate of an inbox row: the user picks the recovery. */
export async function recoverResident(arg: unknown): Promise<unknown> {
  if (!serverRunning()) return undefined;
  const row = await state.inbox.current(arg, 'resident', 'recover');
  if (!row) return undefined;
  const picked = await vscode.window.showQuickPick(
    RECOVERY_MODES.map((m) => ({ label: m.label, description: m.mode, mode: m.mode })),
    { title: `Memzoi: recover candidate ${row.id.slice(0, 12)}`, ignoreFocusOut: true },
  );
  if (!picked) return undefined;
  const result = await executeOnServer(undefined, 'memzoi.resident.recover', [{ uri: row.uri, candidate_id: row.id, mode: picked.mode }], targetOfItem(row));
  await state.inbox.refresh();
  return result;
}

/** Approves or rejects (asking for the required reason) the local-memory candidate of an inbox row. */
export async function decideLocal(arg: unknown, verb: 'approve' | 'reject'): Promise<unknown> {
  if (!serverRunning()) return undefined;
  const row = await state.inbox.current(arg, 'local', verb);
  if (!row) return undefined;
  const args: Record<string, string> = { root: row.root ?? '', candidate_id: row.id };
  if (verb === 'reject') {
    const reason = await vscode.window.showInputBox({
      title: `Memzoi: reject local candidate “${row.title}” (${row.id})`, prompt: 'Reason (required)', ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'A reason is required'),
    });
    if (reason === undefined) return undefined;
    args.reason = reason.trim();
  }
  const result = await executeOnServer(undefined, LOCAL_COMMANDS[verb], [args], { title: row.title, candidateId: row.id });
  await state.inbox.refresh();
  return result;
}

/** Shows a local candidate (it has no file) as a read-only Markdown preview: title, body, reason, proposer. */
export async function showLocal(arg: unknown): Promise<void> {
  const row = await state.inbox.current(arg, resolveTarget(arg)?.kind === 'checkpoint' ? 'checkpoint' : 'local', 'show');
  if (!row) return;
  if (row.kind === 'checkpoint') {
    const text = [`# ${row.title}`, '', row.body ?? '', '', `- checkpoint: ${row.id} (version ${row.version ?? '?'})`,
      '- provenance: runtime (a session checkpoint, never repository truth)', `- retention boundary: ${row.when ?? '?'}`,
      `- accepts now: ${(row.actions ?? []).join(', ') || 'nothing'}`].join('\n');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'markdown', content: text }), { preview: true });
    return;
  }
  const content = [`# ${row.title}`, '', row.body ?? '', '', `- candidate: ${row.id}`, `- proposed by: ${row.actor ?? '?'}`,
    `- confidence: ${row.confidence ?? '?'}`, `- reason: ${row.reason ?? ''}`].join('\n');
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: true });
}
