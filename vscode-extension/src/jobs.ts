// Opens a reflection job's records (its request exactly as sent and its outcome, secrets screened by the server)
// in a read-only Markdown document: from a reflection row of the Memory Inbox, or from a candidate row a
// reflection job proposed ("Open Reflection Job").
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import type { InboxItem } from './logic/inbox';
import { ROW_GONE } from './logic/targets';
import { RESIDENT_JOB, state } from './state';

/** The inbox row of a tree node or a row passed directly. */
function rowOf(arg: unknown): InboxItem | undefined {
  const node = arg as { type?: string; item?: InboxItem } | undefined;
  return node?.type === 'row' ? node.item : (arg as InboxItem | undefined);
}

/** Opens the job of `arg` (a reflection row, or a resident candidate row with `job`). */
export async function openJob(arg: unknown): Promise<void> {
  const row = rowOf(arg);
  if (!row) {
    void vscode.window.showWarningMessage(`Memzoi: ${ROW_GONE}`);
    return;
  }
  const jobId = row.job;
  if (!jobId) {
    void vscode.window.showInformationMessage('Memzoi: this candidate was not proposed by a reflection review.');
    return;
  }
  if (!state.client) return;
  try {
    const detail = await state.client.sendRequest(ExecuteCommandRequest.type, { command: RESIDENT_JOB, arguments: [{ job_id: jobId }] }) as { text?: string } | undefined;
    const content = `# Reflection job ${jobId}\n\n\`\`\`json\n${detail?.text ?? '(no records)'}\n\`\`\`\n`;
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    await vscode.window.showTextDocument(doc, { preview: true });
  } catch (err) {
    void vscode.window.showErrorMessage(`Memzoi: reflection job ${jobId}: ${String(err)}`);
  }
}
