// *Plan memory routing*: an agent's session-end file or an import manifest. The server's preview names, per
// candidate, the packet or runtime row it would create or the codes that block it; one modal question lists them;
// the routing is applied (one ledgered change) only on its button, with what the preview saw; a file changed since
// refuses it (`preview_stale`) and a new preview is offered, as for every reviewed write.
import * as vscode from 'vscode';
import { isStale } from './logic/review';
import { routingApplyArg, routingPreview, routingQuestion } from './logic/routing';
import { ask, reportRefusal } from './run';
import { state } from './state';

/** Preview the routing of the input file `uri`, then apply it on confirmation. */
export async function routeFile(uri: string): Promise<unknown> {
  const answer = await ask('memzoi.routing.preview', [{ uri }]);
  if (!answer.ok) return reportRefusal('memzoi.routing.preview', answer.message);
  const preview = routingPreview(answer.result);
  if (!preview) return undefined;
  const file = vscode.Uri.parse(uri).path.split('/').pop() ?? uri;
  const q = routingQuestion(preview, file);
  state.output.info(`routing preview of ${file}:\n${q.detail}`);
  const choice = await vscode.window.showInformationMessage(q.message, { modal: true, detail: q.detail }, 'Apply');
  if (choice !== 'Apply') return undefined;
  const applied = await ask('memzoi.routing.apply', [routingApplyArg(uri, preview)]);
  if (!applied.ok && isStale(applied.code)) {
    const again = 'Preview again';
    const pick = await vscode.window.showWarningMessage(`Memzoi: ${applied.message.split('\n')[0]}`, again);
    return pick === again ? routeFile(uri) : undefined;
  }
  if (!applied.ok) return reportRefusal('memzoi.routing.apply', applied.message);
  const changeId = (applied.result as { change_id?: string } | undefined)?.change_id;
  void vscode.window.showInformationMessage(`Memzoi: routed ${file}${changeId ? ` as change ${changeId}` : ' (nothing to write)'}`);
  await state.inbox.refresh();
  return applied.result;
}
