// The Memory Inbox model: pending proposals, resident-memory and local-memory candidates waiting for a decision
// and uncertain ledger changes, with counts for the status bar.
// Pure logic (no `vscode` import). The extension feeds it either the server's inbox answer or, when the
// server does not offer one, the pending proposal files and the published diagnostics.

/** One row of the inbox. `uri` is the file to open (a proposal packet, or the file an uncertain change touched). */
export interface InboxItem {
  kind: 'proposal' | 'uncertain' | 'resident' | 'local';
  /** Proposal id (frontmatter `id`) or ledger change id. */
  id: string;
  /** Human title: the proposal's `title`, or the diagnostic message of an uncertain change. */
  title: string;
  uri: string;
  /** Proposal action (`create`, `supersede`, `tombstone`, …) when known. */
  action?: string;
  /** Number of error-severity findings on the file: a blocked proposal cannot be applied as it is. */
  blocking: number;
  /** The full ledger change id of an uncertain change, when the server supplied it (else the user picks it). */
  changeId?: string;
  /** Resident-memory candidates: the candidate's scope (`global`/`project`) and status. */
  scope?: string;
  status?: string;
  /** Local candidates: the project root (the server commands need it), who proposed it, and its text. */
  root?: string;
  actor?: string;
  confidence?: number;
  body?: string;
  reason?: string;
}

/** Counts shown in the status bar. */
export interface InboxCounts {
  pending: number;
  uncertain: number;
  /** Error-severity memzoi findings across the workspace. */
  blocking: number;
}

/** A published diagnostic reduced to what the inbox needs (VS Code and LSP shapes both map onto it). */
export interface DiagnosticSummary {
  uri: string;
  code?: string;
  source?: string;
  /** 'error' | 'warning' | 'information' | 'hint'. */
  severity: string;
  message: string;
  /** `Diagnostic.data`, where the server puts e.g. the ledger change id. */
  data?: unknown;
}

/** The fields of a proposal packet's frontmatter that the inbox shows. */
export interface ProposalSummary {
  id?: string;
  title?: string;
  status?: string;
  action?: string;
  target?: string;
}

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) {
    try {
      return JSON.parse(v) as string;
    } catch {
      return v.slice(1, -1);
    }
  }
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).split("''").join("'");
  return v;
}

function stripComment(value: string): string {
  // A `#` starts a comment only after whitespace (YAML 1.2); quoted scalars are returned whole.
  const v = value.trim();
  if (v.startsWith('"') || v.startsWith("'")) return v;
  const m = /\s#/.exec(v);
  return m ? v.slice(0, m.index).trimEnd() : v;
}

/**
 * Reads the display fields of a proposal packet's YAML frontmatter with a line scanner: top-level
 * `id`, `title`, `status` and `proposal.action` / `proposal.target`. This is for display only: the
 * server is the judge of validity, so anything it cannot read is simply left undefined (never throws).
 */
export function summarizeProposal(text: string): ProposalSummary {
  const out: ProposalSummary = {};
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  if (lines[0]?.trimEnd() !== '---') return out;
  let inProposal = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trimEnd() === '---' || line.trimEnd() === '...') break;
    const top = /^([A-Za-z_][\w-]*):(?:\s+(.*))?$/.exec(line);
    if (top) {
      const [, key, rawValue] = top;
      inProposal = key === 'proposal' && !(rawValue ?? '').trim();
      const value = rawValue === undefined ? '' : unquote(stripComment(rawValue));
      if (!value) continue;
      if (key === 'id') out.id = value;
      else if (key === 'title') out.title = value;
      else if (key === 'status') out.status = value;
      continue;
    }
    if (inProposal) {
      const nested = /^\s+([A-Za-z_][\w-]*):(?:\s+(.*))?$/.exec(line);
      if (nested) {
        const value = nested[2] === undefined ? '' : unquote(stripComment(nested[2]));
        if (nested[1] === 'action' && value) out.action = value;
        else if (nested[1] === 'target' && value) out.target = value;
      } else if (line.trim() && !/^\s/.test(line)) {
        inProposal = false;
      }
    }
  }
  return out;
}

/** The file name without directories and the `.md` suffix (a proposal's id when its frontmatter lacks one). */
export function stemOf(uri: string): string {
  const last = decodeURIComponent(uri.split(/[\\/]/).pop() ?? uri);
  return last.replace(/\.md$/i, '');
}

/** True when `uri` is a pending proposal packet (`…/.memzoi/proposals/pending/<id>.md`). */
export function isPendingProposalUri(uri: string): boolean {
  return /\/\.memzoi\/proposals\/pending\/[^/]+\.md$/i.test(uri.replace(/\\/g, '/'));
}

function countErrors(uri: string, diagnostics: readonly DiagnosticSummary[]): number {
  return diagnostics.filter((d) => d.uri === uri && d.source === 'memzoi' && d.severity === 'error').length;
}

/** The ledger change id carried by a `ledger_uncertain` diagnostic, when the server put one in `data`. */
export function changeIdOf(d: DiagnosticSummary): string | undefined {
  const data = d.data;
  if (data && typeof data === 'object') {
    const rec = data as Record<string, unknown>;
    for (const key of ['change_id', 'changeId']) {
      const v = rec[key];
      if (typeof v === 'string' || typeof v === 'number') return String(v);
    }
  }
  return undefined;
}

/**
 * Builds the inbox from pending proposal files (`uri` and text) and the published diagnostics:
 * one row per pending packet, then one per distinct uncertain ledger change (`ledger_uncertain`).
 * Rows are sorted: proposals by id, then uncertain changes by id.
 */
export function buildInbox(
  proposals: readonly { uri: string; text: string }[],
  diagnostics: readonly DiagnosticSummary[],
): InboxItem[] {
  const rows: InboxItem[] = proposals
    .filter((p) => isPendingProposalUri(p.uri))
    .map((p) => {
      const s = summarizeProposal(p.text);
      return {
        kind: 'proposal' as const,
        id: s.id ?? stemOf(p.uri),
        title: s.title ?? stemOf(p.uri),
        uri: p.uri,
        action: s.action,
        blocking: countErrors(p.uri, diagnostics),
      };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
  const seen = new Set<string>();
  const uncertain: InboxItem[] = [];
  for (const d of diagnostics) {
    if (d.source !== 'memzoi' || d.code !== 'ledger_uncertain') continue;
    // Without the id in `data`, one row per file and message (the change is then picked from the history).
    const changeId = changeIdOf(d);
    const id = changeId ?? `${stemOf(d.uri)}: ${d.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    uncertain.push({ kind: 'uncertain', id: changeId ?? stemOf(d.uri), title: d.message, uri: d.uri, blocking: 0, changeId });
  }
  uncertain.sort((a, b) => a.id.localeCompare(b.id));
  return [...rows, ...uncertain];
}

/** Candidate statuses the inbox lists: waiting for a decision, or for an explicit recovery. */
const RESIDENT_OPEN = ['pending', 'failed', 'uncertain'];

/**
 * Rows for the Resident memory section from the server's `memzoi.resident.list` answer
 * (`{scopes: [{scope, path, uri}], candidates: [{id, scope, action, content, locator, status, target_path}]}`):
 * one per pending, failed or uncertain candidate, opening its resident file. Anything else gives no rows.
 */
export function residentRows(answer: unknown): InboxItem[] {
  if (!answer || typeof answer !== 'object') return [];
  const { scopes, candidates } = answer as { scopes?: unknown; candidates?: unknown };
  if (!Array.isArray(candidates)) return [];
  const uris = new Map<string, string>();
  for (const s of Array.isArray(scopes) ? scopes : []) {
    const r = s as Record<string, unknown>;
    if (typeof r?.path === 'string' && typeof r.uri === 'string') uris.set(r.path, r.uri);
  }
  const rows: InboxItem[] = [];
  for (const raw of candidates) {
    const c = (raw ?? {}) as Record<string, unknown>;
    if (typeof c.id !== 'string' || typeof c.status !== 'string' || !RESIDENT_OPEN.includes(c.status)) continue;
    const path = typeof c.target_path === 'string' ? c.target_path : '';
    const text = [c.content, c.locator, c.recovery_mode].find((v) => typeof v === 'string' && v) as string | undefined;
    rows.push({
      kind: 'resident',
      id: c.id,
      title: (text ?? c.id).replace(/\s+/g, ' '),
      uri: uris.get(path) ?? `file://${path}`,
      action: typeof c.action === 'string' ? c.action : undefined,
      blocking: 0,
      scope: typeof c.scope === 'string' ? c.scope : undefined,
      status: c.status,
    });
  }
  return rows;
}

/**
 * Rows for the Local memory section from the server's `memzoi.local.list` answer (`{candidates: [{id, title,
 * body, reason, confidence, actor, root, state}]}`): one per pending candidate an agent proposed for private local
 * memory. Such a candidate has no file: `uri` is the project's `.memzoi` folder. Anything else gives no rows.
 */
export function localRows(answer: unknown): InboxItem[] {
  if (!answer || typeof answer !== 'object') return [];
  const { candidates } = answer as { candidates?: unknown };
  if (!Array.isArray(candidates)) return [];
  const rows: InboxItem[] = [];
  for (const raw of candidates) {
    const c = (raw ?? {}) as Record<string, unknown>;
    if (typeof c.id !== 'string' || typeof c.root !== 'string' || (c.state !== undefined && c.state !== 'pending')) continue;
    const root = c.root.replace(/\/+$/, '');
    rows.push({
      kind: 'local',
      id: c.id,
      title: (typeof c.title === 'string' && c.title.trim() ? c.title : c.id).replace(/\s+/g, ' '),
      uri: `file://${root.startsWith('/') ? '' : '/'}${root}/.memzoi`,
      blocking: 0,
      status: 'pending',
      root: c.root,
      actor: typeof c.actor === 'string' ? c.actor : undefined,
      confidence: typeof c.confidence === 'number' ? c.confidence : undefined,
      body: typeof c.body === 'string' ? c.body : undefined,
      reason: typeof c.reason === 'string' ? c.reason : undefined,
    });
  }
  return rows;
}

/** Status bar counts: pending and uncertain rows of the inbox, and error findings across the workspace. */
export function countInbox(items: readonly InboxItem[], diagnostics: readonly DiagnosticSummary[]): InboxCounts {
  return {
    pending: items.filter((i) => i.kind === 'proposal').length,
    uncertain: items.filter((i) => i.kind === 'uncertain').length,
    blocking: diagnostics.filter((d) => d.source === 'memzoi' && d.severity === 'error').length,
  };
}

/** Status bar text (codicons) and tooltip for the counts. */
export function statusBarText(c: InboxCounts): { text: string; tooltip: string } {
  const parts = [`$(inbox) ${c.pending}`];
  if (c.uncertain > 0) parts.push(`$(warning) ${c.uncertain}`);
  parts.push(`$(error) ${c.blocking}`);
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const tooltip = [
    `Memzoi: ${plural(c.pending, 'pending proposal')}`,
    c.uncertain > 0 ? plural(c.uncertain, 'uncertain change') + ' to recover' : undefined,
    `${plural(c.blocking, 'blocking finding')} (errors)`,
  ]
    .filter(Boolean)
    .join(', ');
  return { text: `Memzoi ${parts.join(' ')}`, tooltip };
}

/** Label and description for an inbox row in the tree view. */
export function describeItem(item: InboxItem): { label: string; description: string } {
  if (item.kind === 'uncertain') return { label: `Change ${item.id}`, description: 'uncertain: needs recovery' };
  if (item.kind === 'local') {
    const bits = ['local memory', item.confidence === undefined ? undefined : `confidence ${item.confidence}`,
      item.actor ? `by ${item.actor}` : undefined];
    return { label: item.title, description: bits.filter(Boolean).join(' · ') };
  }
  if (item.kind === 'resident') {
    const bits = ['resident memory', item.scope, item.action, item.status === 'pending' ? undefined : item.status];
    return { label: item.title, description: bits.filter(Boolean).join(' · ') };
  }
  const bits = [item.action, item.id, item.blocking > 0 ? `${item.blocking} blocking` : undefined].filter(Boolean);
  return { label: item.title, description: bits.join(' · ') };
}
