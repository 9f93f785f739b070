// Resident memory's edit-and-approve and one-step removal (issue 34), through the same review flow as every
// write: the preview's diff of the resident file, one modal question, then the write or nothing. The server
// decides and writes (`memzoi.resident.edit`, `memzoi.resident.remove`; Zuno's rules in memzoi.resident.decisions).
import * as vscode from 'vscode';
import { reviewThenWrite } from './flow';
import { residentEntries } from './logic/resident';
import { targetOfItem } from './logic/targets';
import { ask, reportRefusal } from './run';
import { RESIDENT_STATE, state } from './state';

/** Approves the resident candidate of an inbox row with content the user edits (both versions are kept). */
export async function editResident(arg: unknown): Promise<unknown> {
  const item = await state.inbox.current(arg, 'resident', 'edit');
  if (!item) return undefined;
  const content = await vscode.window.showInputBox({
    title: `Memzoi: approve “${item.title}” edited`,
    prompt: 'The entry as it will be written (the proposed text is kept beside it)',
    value: item.title,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'The entry cannot be empty'),
  });
  if (content === undefined) return undefined;
  return reviewThenWrite(undefined, 'memzoi.resident.edit', targetOfItem(item), { uri: item.uri, candidate_id: item.id, content }, true);
}

/** Removes one resident entry the user picks, as one audited step (previewed first). */
export async function removeResidentEntry(): Promise<unknown> {
  const answer = await ask(RESIDENT_STATE, [{}]);
  if (!answer.ok) return reportRefusal(RESIDENT_STATE, answer.message);
  const entries = residentEntries(answer.result);
  if (entries.length === 0) {
    void vscode.window.showInformationMessage('Memzoi: there is no resident-memory entry to remove.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(entries.map((e) => ({ label: e.content, description: e.scope, entry: e })),
    { title: 'Memzoi: remove which resident-memory entry?', ignoreFocusOut: true });
  if (!picked) return undefined;
  const { scope, content, uri } = picked.entry;
  return reviewThenWrite(undefined, 'memzoi.resident.remove', { uri, title: content },
    { ...(uri ? { uri } : {}), scope, locator: content }, true);
}
