// The status bar item (pending proposals, uncertain changes, blocking findings; "starting…" until the first scan).
import * as vscode from 'vscode';
import { State } from 'vscode-languageclient/node';
import { countInbox, type DiagnosticSummary, statusBarText } from './logic/inbox';
import { state } from './state';

function severityName(s: vscode.DiagnosticSeverity): string {
  return ['error', 'warning', 'information', 'hint'][s] ?? 'hint';
}

export function allDiagnostics(): DiagnosticSummary[] {
  const out: DiagnosticSummary[] = [];
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    for (const d of diags) {
      const code = typeof d.code === 'object' && d.code !== null ? String(d.code.value) : d.code === undefined ? undefined : String(d.code);
      out.push({
        uri: uri.toString(),
        code,
        source: d.source,
        severity: severityName(d.severity),
        message: d.message,
        data: (d as vscode.Diagnostic & { data?: unknown }).data,
      });
    }
  }
  return out;
}

export function updateStatus(): void {
  const counts = countInbox(state.inbox.items, allDiagnostics());
  const { text, tooltip } = statusBarText(counts);
  if (state.client && state.client.state !== State.Stopped && !state.scanned) {
    // Until the first scan ends, counts of 0 would read as a false all-clear.
    state.statusItem.text = '$(sync~spin) Memzoi starting…';
    state.statusItem.tooltip = 'Memzoi: the language server is starting and scanning the workspace';
    state.statusItem.show();
    return;
  }
  state.statusItem.text = state.client?.state === State.Running ? text : `${text} $(debug-disconnect)`;
  state.statusItem.tooltip = state.client?.state === State.Running ? tooltip : `${tooltip} (language server not running)`;
  state.statusItem.show();
}
