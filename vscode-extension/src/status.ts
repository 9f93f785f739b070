// The status bar item (pending proposals, those the server says cannot be applied, uncertain changes; "starting…"
// until the server is ready and has nothing left to scan).
import * as vscode from 'vscode';
import { State } from 'vscode-languageclient/node';
import { countInbox, type DiagnosticSummary, usageText } from './logic/inbox';
import { statusBarText } from './logic/inboxView';
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
  const counts = countInbox(state.inbox.items);
  const { text, tooltip } = statusBarText(counts, state.inbox.unreadable);
  if (state.client && state.client.state !== State.Stopped && !state.scanned) {
    // Until the server is ready and its scans have ended, counts of 0 would read as a false all-clear.
    state.statusItem.text = '$(sync~spin) Memzoi starting…';
    state.statusItem.tooltip = 'Memzoi: the language server is starting and scanning the workspace';
    state.statusItem.show();
    return;
  }
  // Resident memory's cap usage (the fullest file) beside the counts; every file's in the tooltip.
  const usage = state.inbox.usage ?? [];
  const fullest = [...usage].sort((a, b) => b.used / (b.cap || 1) - a.used / (a.cap || 1))[0];
  const cap = fullest && fullest.cap > 0 ? ` $(database) ${Math.round((100 * fullest.used) / fullest.cap)}%` : '';
  const capTip = usage.length > 0 ? `\nResident memory: ${usage.map(usageText).join('; ')}` : '';
  state.statusItem.text = state.client?.state === State.Running ? `${text}${cap}` : `${text}${cap} $(debug-disconnect)`;
  state.statusItem.tooltip = (state.client?.state === State.Running ? tooltip : `${tooltip} (language server not running)`) + capTip;
  state.statusItem.show();
}
