// Palette commands and the middleware of server commands run from code actions and lenses: what each needs is
// asked for (target, change, reason), the command is sent, and its result or refusal is reported once.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, type Middleware, State } from 'vscode-languageclient/node';
import { preview, showHistory } from './history';
import {
  argsHaveReason,
  buildArguments,
  describeResult,
  historyChanges,
  previewArgument,
  searchHits,
  type CommandSpec,
  type InvocationContext,
  RECOVERY_MODES,
  resolveServerCommand,
  specForServerCommand,
  validateReason,
  withField,
  withReason,
} from './logic/commands';
import { type InboxItem, isPendingProposalUri } from './logic/inbox';
import { buildServerSettings } from './logic/settings';
import { advertisedCommands, readConfig, RESIDENT_REVIEW, SECTION, state } from './state';

/** Gathers the target of a command: the inbox row it was invoked on, else the active editor's file. */
async function gatherContext(spec: CommandSpec, arg: unknown): Promise<InvocationContext | undefined> {
  const ctx: InvocationContext = {};
  const row = arg && typeof arg === 'object' && 'kind' in arg && 'uri' in arg ? (arg as InboxItem) : undefined;
  const argUri = arg instanceof vscode.Uri ? arg : row ? vscode.Uri.parse(row.uri) : undefined;
  const uri = argUri ?? vscode.window.activeTextEditor?.document.uri;
  if (spec.target === 'change') {
    const changeId = row?.kind === 'uncertain' && row.changeId ? row.changeId : await pickChange(spec, uri);
    if (changeId === undefined) return undefined;
    ctx.changeId = changeId.trim();
    if (uri?.scheme === 'file') ctx.uri = uri.toString();
    if (spec.modes) {
      const picked = await vscode.window.showQuickPick(
        spec.modes.map((m) => ({ label: m.label, description: m.mode, mode: m.mode })),
        { title: `Memzoi: recover change ${changeId.slice(0, 12)}`, ignoreFocusOut: true },
      );
      if (!picked) return undefined;
      ctx.mode = picked.mode;
    }
  } else if (spec.target !== 'none') {
    if (!uri || uri.scheme !== 'file') {
      void vscode.window.showWarningMessage(`Memzoi: ${spec.title} needs a ${spec.target === 'candidate' ? 'materialization candidate' : 'Memzoi file'}: open it first.`);
      return undefined;
    }
    if (spec.target === 'proposal' && !isPendingProposalUri(uri.toString())) {
      void vscode.window.showWarningMessage(`Memzoi: ${spec.title} works on a pending proposal (.memzoi/proposals/pending/*.md).`);
      return undefined;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc?.isDirty) {
      // Lifecycle commands are disk transactions: the server refuses unsaved files, so say it up front.
      void vscode.window.showWarningMessage(`Memzoi: save ${vscode.workspace.asRelativePath(uri)} first; lifecycle commands work on the file on disk.`);
      return undefined;
    }
    ctx.uri = uri.toString();
  }
  if (spec.query) {
    const q = await vscode.window.showInputBox({ title: `Memzoi: ${spec.title}`, ...spec.query, ignoreFocusOut: true });
    if (q === undefined) return undefined;
    ctx.query = q;
  }
  if (spec.reason) {
    const reason = await promptReason(spec);
    if (reason === undefined) return undefined;
    ctx.reason = reason;
  }
  if (spec.newTitle) {
    const title = await promptTitle(spec);
    if (title === undefined) return undefined;
    if (title) ctx.title = title;
  }
  if (spec.confirm) {
    const dryRun = previewArgument(ctx, spec, advertisedCommands());
    // Ask the server first: a change it would refuse is reported now, never after a confirmation.
    const planned = dryRun ? await requestServer('memzoi.preview', [dryRun]) : undefined;
    if (dryRun && planned === undefined) return undefined;
    const ok = await vscode.window.showWarningMessage(spec.confirm, { modal: true }, 'Continue', ...(spec.preview ? ['Preview…'] : []));
    if (ok === 'Preview…' && spec.preview && ctx.uri) {
      // The planned files in the diff editor; the user applies after looking (nothing is written here).
      const again = dryRun ?? { uri: ctx.uri, operation: spec.preview, ...(ctx.reason ? { reason: ctx.reason } : {}),
        ...(ctx.title ? { title: ctx.title } : {}) };
      await preview(historyExecute, again);
      return undefined;
    }
    if (ok !== 'Continue') return undefined;
  }
  return ctx;
}

/** Lets the user pick a ledger change from the history (of `uri` when given), else type its id. */
async function pickChange(spec: CommandSpec, uri: vscode.Uri | undefined): Promise<string | undefined> {
  const historyCommand = advertisedCommands().includes('memzoi.history') ? 'memzoi.history' : undefined;
  if (state.client && historyCommand) {
    try {
      const arg = uri?.scheme === 'file' ? { uri: uri.toString() } : {};
      const changes = historyChanges(await state.client.sendRequest(ExecuteCommandRequest.type, { command: historyCommand, arguments: [arg] }));
      if (changes && changes.length > 0) {
        const picked = await vscode.window.showQuickPick(
          changes.map((c) => ({ label: c.label, description: c.description, id: c.change_id })),
          { title: `Memzoi: ${spec.title.replace(/…$/, '')}: choose a change`, ignoreFocusOut: true, matchOnDescription: true },
        );
        return picked?.id;
      }
    } catch (err) {
      state.output.warn(`history for the change picker failed: ${String(err)}`);
    }
  }
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title}`,
    prompt: 'Ledger change id (see Memzoi: Show Change History)',
    validateInput: (v) => (v.trim() ? undefined : 'A change id is required.'),
    ignoreFocusOut: true,
  });
}

function promptReason(spec: CommandSpec): Thenable<string | undefined> {
  const required = spec.reason === 'required';
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title.replace(/…$/, '')}`,
    prompt: required ? 'Reason (required; recorded with the change)' : 'Reason (optional; recorded with the change)',
    validateInput: (v) => validateReason(v, required),
    ignoreFocusOut: true,
  }).then((v) => (v === undefined ? undefined : v.trim()));
}

/** Asks for a new title (supersede): `''` keeps the record's, `undefined` cancels. */
function promptTitle(spec: CommandSpec): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Memzoi: ${spec.title.replace(/…$/, '')}`,
    prompt: "New title (optional; empty keeps the record's title)",
    ignoreFocusOut: true,
  }).then((v) => (v === undefined ? undefined : v.trim()));
}

/** Runs a palette command: gathers its target and reason, then asks the server to execute it. */
export async function runPaletteCommand(spec: CommandSpec, arg: unknown): Promise<unknown> {
  if (!state.client || state.client.state !== State.Running) {
    void vscode.window.showErrorMessage('Memzoi: the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.');
    return undefined;
  }
  const serverCommand = resolveServerCommand(spec, advertisedCommands());
  if (!serverCommand) {
    void vscode.window.showWarningMessage(`Memzoi: this memzoi-lsp does not offer "${spec.title}"; update memzoi-lsp.`);
    return undefined;
  }
  if (serverCommand === 'memzoi.history') {
    // Memory History: a quick pick of the changes with Open Diff and Undo (not a count of results).
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    return showHistory(historyExecute, uri);
  }
  const ctx = await gatherContext(spec, arg);
  if (!ctx) return undefined;
  return executeOnServer(spec, serverCommand, buildArguments(ctx, spec));
}

/** Tells the user what a command did (and opens a chosen search hit). */
async function reportResult(spec: CommandSpec | undefined, command: string, result: unknown): Promise<void> {
  state.output.info(`${command} -> ${JSON.stringify(result)}`);
  const hits = spec?.args === 'query' ? searchHits(result) : undefined;
  if (hits) {
    if (hits.length === 0) {
      void vscode.window.showInformationMessage('Memzoi: no matching records.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      hits.map((h) => ({ label: h.title, description: h.id, uri: h.uri })),
      { title: 'Memzoi: search results', matchOnDescription: true },
    );
    if (pick) await vscode.window.showTextDocument(vscode.Uri.parse(pick.uri));
    return;
  }
  const said = describeResult(spec?.title ?? command, result);
  if (said?.level === 'error') void vscode.window.showErrorMessage(`Memzoi: ${said.text}`);
  else if (said) void vscode.window.showInformationMessage(`Memzoi: ${said.text}`);
}

export async function executeOnServer(spec: CommandSpec | undefined, command: string, args: unknown[]): Promise<unknown> {
  const result = await requestServer(command, args);
  if (result !== undefined) void reportResult(spec, command, result);
  void state.inbox.refresh();
  return result;
}

/**
 * Sends one server command. A refusal (a JSON-RPC error response) is reported once: its first line in a toast, the
 * details in the output; the result is then `undefined`.
 */
async function requestServer(command: string, args: unknown[]): Promise<unknown> {
  if (!state.client || state.client.state !== State.Running) {
    void vscode.window.showErrorMessage('Memzoi: the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.');
    return undefined;
  }
  try {
    const result: unknown = await state.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    if (command === 'memzoi.undo') void state.inbox.refresh();
    return result;
  } catch (err) {
    return reportRefusal(command, err);
  }
}

/** A refusal is a JSON-RPC error response: one toast with its first line, the details in the output. */
function reportRefusal(command: string, err: unknown): undefined {
  const msg = err instanceof Error ? err.message : String(err);
  state.output.error(`${command} refused: ${msg}`);
  void vscode.window.showErrorMessage(`Memzoi: ${msg.split('\n')[0]}`);
  return undefined;
}

/** Memory History and previews send their commands through here; an undo is reported like a palette Undo. */
const historyExecute = (command: string, args: unknown[]): Promise<unknown> =>
  command === 'memzoi.undo' ? executeOnServer(specForServerCommand(command), command, args) : requestServer(command, args);

/**
 * Middleware for server-registered commands (code actions, code lenses and palette entries whose id the server
 * itself registers): prompts for the reason a lifecycle command needs when the server did not supply one.
 */
export const middleware: Middleware = {
  executeCommand: async (command, given, next) => {
    let args = given;
    if (command === 'memzoi.preview') {
      // Preview (code action): the planned files in the diff editor; nothing is written. A supersede or tombstone
      // preview needs what the change itself would (the reason, and for supersede an optional new title).
      const arg = given[0] && typeof given[0] === 'object' ? { ...(given[0] as Record<string, unknown>) } : {};
      const of = typeof arg.operation === 'string' ? specForServerCommand(`memzoi.${arg.operation}`) : undefined;
      if (of?.reason && !argsHaveReason([arg])) {
        const reason = await promptReason(of);
        if (reason === undefined) return undefined;
        if (reason) arg.reason = reason;
      }
      if (of?.newTitle && arg.title === undefined) {
        const title = await promptTitle(of);
        if (title === undefined) return undefined;
        if (title) arg.title = title;
      }
      return preview(historyExecute, arg);
    }
    if (command === 'memzoi.history') {
      // Memory History: a quick pick of the changes with Open Diff and Undo (not a count of results).
      return showHistory(historyExecute, vscode.window.activeTextEditor?.document.uri);
    }
    if (command === RESIDENT_REVIEW) {
      // The code lens "N pending candidates: Review" opens them in the Memory Inbox.
      await state.inbox.refresh();
      await vscode.commands.executeCommand('memzoi.inbox.focus');
      const pending: unknown = await next(command, args);
      return pending;
    }
    if (command === 'memzoi.resident.reject' && !argsHaveReason(args)) {
      const reason = await vscode.window.showInputBox({ title: 'Memzoi: reject resident-memory candidate', prompt: 'Reason (optional)', ignoreFocusOut: true });
      if (reason === undefined) return undefined;
      if (reason.trim()) args = withReason(args, reason.trim());
    }
    const spec = specForServerCommand(command);
    let finalArgs = args;
    if (spec && args.length === 0) {
      const ctx = await gatherContext(spec, undefined);
      if (!ctx) return undefined;
      finalArgs = buildArguments(ctx, spec);
    } else if (spec?.reason && !argsHaveReason(args)) {
      const reason = await promptReason(spec);
      if (reason === undefined) return undefined;
      finalArgs = withReason(args, reason);
      if (spec.newTitle) {
        const title = await promptTitle(spec);
        if (title === undefined) return undefined;
        if (title) finalArgs = withField(finalArgs, 'title', title);
      }
    }
    try {
      const result: unknown = await next(command, finalArgs);
      void reportResult(spec, command, result);
      return result;
    } catch (err) {
      return reportRefusal(command, err);
    } finally {
      void state.inbox.refresh();
    }
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

/** Approves or rejects (asking for an optional reason) the resident-memory candidate of an inbox row. */
export async function decideResident(row: InboxItem | undefined, verb: 'approve' | 'reject'): Promise<unknown> {
  if (!row || row.kind !== 'resident' || !state.client || state.client.state !== State.Running) return undefined;
  const arg: Record<string, string> = { uri: row.uri, candidate_id: row.id };
  if (verb === 'reject') {
    const reason = await vscode.window.showInputBox({ title: `Memzoi: reject candidate ${row.id.slice(0, 12)}`, prompt: 'Reason (optional)', ignoreFocusOut: true });
    if (reason === undefined) return undefined;
    if (reason.trim()) arg.reason = reason.trim();
  }
  const result = await executeOnServer(undefined, `memzoi.resident.${verb}`, [arg]);
  await state.inbox.refresh(); // the row leaves (or changes state) before the command returns
  return result;
}

/** Settles the uncertain resident-memory candidate of an inbox row: the user picks the recovery. */
export async function recoverResident(row: InboxItem | undefined): Promise<unknown> {
  if (!row || row.kind !== 'resident' || !state.client || state.client.state !== State.Running) return undefined;
  const picked = await vscode.window.showQuickPick(
    RECOVERY_MODES.map((m) => ({ label: m.label, description: m.mode, mode: m.mode })),
    { title: `Memzoi: recover candidate ${row.id.slice(0, 12)}`, ignoreFocusOut: true },
  );
  if (!picked) return undefined;
  const result = await executeOnServer(undefined, 'memzoi.resident.recover', [{ uri: row.uri, candidate_id: row.id, mode: picked.mode }]);
  await state.inbox.refresh();
  return result;
}

/** Approves or rejects (asking for the required reason) the local-memory candidate of an inbox row. */
export async function decideLocal(row: InboxItem | undefined, verb: 'approve' | 'reject'): Promise<unknown> {
  if (!row || row.kind !== 'local' || !state.client || state.client.state !== State.Running) return undefined;
  const arg: Record<string, string> = { root: row.root ?? '', candidate_id: row.id };
  if (verb === 'reject') {
    const reason = await vscode.window.showInputBox({
      title: `Memzoi: reject local candidate ${row.id}`, prompt: 'Reason (required)', ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'A reason is required'),
    });
    if (reason === undefined) return undefined;
    arg.reason = reason.trim();
  }
  const result = await executeOnServer(undefined, `memzoi.local.${verb}`, [arg]);
  await state.inbox.refresh();
  return result;
}

/** Shows a local candidate (it has no file) as a read-only Markdown preview: title, body, reason, proposer. */
export async function showLocal(row: InboxItem | undefined): Promise<void> {
  if (!row || row.kind !== 'local') return;
  const content = [`# ${row.title}`, '', row.body ?? '', '', `- candidate: ${row.id}`, `- proposed by: ${row.actor ?? '?'}`,
    `- confidence: ${row.confidence ?? '?'}`, `- reason: ${row.reason ?? ''}`].join('\n');
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: true });
}
