// Sending server commands and reporting them: one message per command, whose first line says what happened and to
// what (the server's `message`, or one built from the target); ids and details go to the Memzoi output. After a
// write the touched files are reloaded (reload.ts) and the inbox is refreshed.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';
import { type CommandSpec, describeResult, searchHits } from './logic/commands';
import { type PreviewFile, touchedOf, writeMessage } from './logic/review';
import type { Target } from './logic/targets';
import { reloadTouched, type Touched } from './reload';
import { state } from './state';

/** The workspace folders' URIs (paths in messages are relative to them). */
export function roots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
}

/** The answer of one server command: its result, or the refusal's message and reason code (when it has one). */
export type Answer = { ok: true; result: unknown } | { ok: false; message: string; code?: string };

/** Sends one server command and returns its answer (nothing is shown to the user). */
export async function ask(command: string, args: unknown[]): Promise<Answer> {
  if (!state.client || state.client.state !== State.Running) {
    return { ok: false, message: 'the language server is not running. Use "Memzoi: Restart Language Server" and see the Memzoi output.' };
  }
  try {
    return { ok: true, result: await state.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) };
  } catch (err) {
    const data = err && typeof err === 'object' ? (err as { data?: { code?: unknown } }).data : undefined;
    const code = typeof data?.code === 'string' ? data.code : undefined;
    return { ok: false, message: err instanceof Error ? err.message : String(err), code };
  }
}

/** A refusal is a JSON-RPC error response: one toast with its first line, the details in the output. */
export function reportRefusal(command: string, message: string): undefined {
  state.output.error(`${command} refused: ${message}`);
  void vscode.window.showErrorMessage(`Memzoi: ${message.split('\n')[0]}`);
  return undefined;
}

/**
 * Sends one server command. A refusal is reported once (see reportRefusal), unless `onRefused` answers true (the
 * caller tells the user itself, e.g. a stale preview with *Preview again*); the result is then `undefined`.
 */
export async function requestServer(command: string, args: unknown[],
  onRefused?: (code: string | undefined, message: string) => boolean | void): Promise<unknown> {
  const answer = await ask(command, args);
  if (!answer.ok) {
    if (onRefused?.(answer.code, answer.message) === true) state.output.error(`${command} refused: ${answer.message}`);
    else reportRefusal(command, answer.message);
    return undefined;
  }
  if (command === 'memzoi.undo') void state.inbox.refresh();
  return answer.result;
}

/** Tells the user what a command did (and opens a chosen search hit). */
export async function reportResult(spec: CommandSpec | undefined, command: string, result: unknown, target?: Target): Promise<void> {
  const said = writeMessage(command, target, result, roots());
  state.output.info(`${command} -> ${said ? `${said.text} [${said.detail}] ` : ''}${JSON.stringify(result)}`);
  if (said) {
    void vscode.window.showInformationMessage(`Memzoi: ${said.text}`);
    return;
  }
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
  const described = describeResult(spec?.title ?? command, result);
  if (described?.level === 'error') void vscode.window.showErrorMessage(`Memzoi: ${described.text}`);
  else if (described) void vscode.window.showInformationMessage(`Memzoi: ${described.text}`);
}

/**
 * Runs a server command and reports it; after a write, reloads the files it touched (`touched`, e.g. from its
 * preview, plus the target's file) and refreshes the inbox. Returns the result (`undefined` after a refusal).
 */
export async function executeOnServer(spec: CommandSpec | undefined, command: string, args: unknown[], target?: Target,
  touched: readonly PreviewFile[] = [], onRefused?: (code: string | undefined, message: string) => boolean | void): Promise<unknown> {
  const result = await requestServer(command, args, onRefused);
  if (result !== undefined) {
    // Nothing stale when the message comes: the touched files reloaded, the inbox without the decided row.
    const files: Touched[] = touchedOf(touched);
    if (target?.uri && !files.some((f) => f.uri === target.uri)) files.push({ uri: target.uri, deleted: false });
    await reloadTouched(files);
    await state.inbox.refresh();
    void reportResult(spec, command, result, target);
  } else {
    void state.inbox.refresh();
  }
  return result;
}
