// The Memory Inbox model: pending proposals, resident-memory and local-memory candidates waiting for a decision
// and uncertain ledger changes, with counts for the status bar.
// Pure logic (no `vscode` import). Every verdict comes from the server: whether a packet can be applied and why not
// (`memzoi.proposals.list`, the core's can-apply rule), whether a resident candidate can be decided
// (`memzoi.resident.list`), which ledger changes are uncertain (`ledger_uncertain` diagnostics). Nothing here
// judges a file itself.

/** One reason a packet cannot be applied now, as the core names it. */
export interface Blocker {
  code: string;
  message: string;
}

/** One row of the inbox. `uri` is the file to open (a proposal packet, or the file an uncertain change touched). */
export interface InboxItem {
  kind: 'proposal' | 'uncertain' | 'resident' | 'local' | 'checkpoint' | 'reflection';
  /** Proposal id (frontmatter `id`), candidate id or ledger change id. */
  id: string;
  /** Human title: the proposal's `title`, the candidate's text, or the diagnostic message of an uncertain change. */
  title: string;
  uri: string;
  /** Proposal action (`create`, `supersede`, `tombstone`, …), or the resident candidate's action. */
  action?: string;
  /** Proposals: the server's verdict. `canApply` false comes with every blocker and a one-line statement. */
  canApply?: boolean;
  blockers?: Blocker[];
  statement?: string;
  /** Proposals: routing to local memory is the fitting alternative (the gate blocks, nothing forbids it). */
  canRouteLocal?: boolean;
  /** The full ledger change id of an uncertain change, when the server supplied it (else the user picks it). */
  changeId?: string;
  /** Resident-memory candidates: the candidate's scope (`global`/`project`) and status. */
  scope?: string;
  status?: string;
  /** Resident candidates: approve and reject apply to it now (the server's `decidable`). */
  decidable?: boolean;
  /** Resident candidates: the server's diagnostic text (what happened, how to recover). */
  diagnostic?: string;
  /** Resident candidates: the newest applied candidate of its file, which Undo restores. */
  undoable?: boolean;
  /** Resident candidates: when it was applied (`YYYY-MM-DD HH:MM UTC`). */
  when?: string;
  /** Resident candidates: the reflection job that proposed it; reflection rows: their own job id. */
  job?: string;
  /** Reflection rows: the trigger (`periodic`, `recovery`, `periodic-recovery`) and the candidates it proposed. */
  trigger?: string;
  candidates?: string[];
  /** Local candidates: the project root (the server commands need it), who proposed it, and its text. */
  root?: string;
  actor?: string;
  confidence?: number;
  body?: string;
  reason?: string;
  /** Session checkpoints: the transitions the server says it accepts now (`continue`, `close`), its version. */
  actions?: string[];
  version?: number;
}

/** Counts shown in the status bar. */
export interface InboxCounts {
  pending: number;
  /** Pending packets the core says cannot be applied now. */
  blocked: number;
  uncertain: number;
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

/** The file name without directories and the `.md` suffix. */
export function stemOf(uri: string): string {
  const last = decodeURIComponent(uri.split(/[\\/]/).pop() ?? uri);
  return last.replace(/\.md$/i, '');
}

/** True when `uri` is a pending proposal packet (`…/.memzoi/proposals/pending/<id>.md`). */
export function isPendingProposalUri(uri: string): boolean {
  return /\/\.memzoi\/proposals\/pending\/[^/]+\.md$/i.test(uri.replace(/\\/g, '/'));
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

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
const oneLine = (v: string): string => v.replace(/\s+/g, ' ').trim();

/**
 * Rows for the pending proposals from the server's `memzoi.proposals.list` answer (`{scanning, proposals: [{id,
 * title, action, uri, can_apply, statement, blockers: [{code, message}], can_route_local}]}`), in the server's
 * order, with whether a scan is still running. `undefined` for any other shape (a refusal, an older server).
 */
export function proposalRows(answer: unknown): { rows: InboxItem[]; scanning: boolean } | undefined {
  if (!answer || typeof answer !== 'object') return undefined;
  const { scanning, proposals } = answer as { scanning?: unknown; proposals?: unknown };
  if (!Array.isArray(proposals) || typeof scanning !== 'boolean') return undefined;
  const rows: InboxItem[] = [];
  for (const raw of proposals) {
    const p = (raw ?? {}) as Record<string, unknown>;
    if (typeof p.uri !== 'string' || typeof p.can_apply !== 'boolean') continue;
    const blockers = (Array.isArray(p.blockers) ? p.blockers : [])
      .map((b) => (b ?? {}) as Record<string, unknown>)
      .filter((b) => typeof b.code === 'string')
      .map((b) => ({ code: b.code as string, message: typeof b.message === 'string' ? oneLine(b.message) : '' }));
    rows.push({
      kind: 'proposal',
      id: str(p.id) ?? stemOf(p.uri),
      title: oneLine(str(p.title) ?? stemOf(p.uri)),
      uri: p.uri,
      action: str(p.action),
      canApply: p.can_apply,
      blockers,
      statement: str(p.statement),
      canRouteLocal: p.can_route_local === true,
    });
  }
  return { rows, scanning };
}

/**
 * Rows for the uncertain ledger changes: one per distinct change named by a `ledger_uncertain` diagnostic (without
 * the id in `data`, one per file and message; the change is then picked from the history), sorted by id.
 */
export function uncertainRows(diagnostics: readonly DiagnosticSummary[]): InboxItem[] {
  const seen = new Set<string>();
  const rows: InboxItem[] = [];
  for (const d of diagnostics) {
    if (d.source !== 'memzoi' || d.code !== 'ledger_uncertain') continue;
    const changeId = changeIdOf(d);
    const key = changeId ?? `${stemOf(d.uri)}: ${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push({ kind: 'uncertain', id: changeId ?? stemOf(d.uri), title: d.message, uri: d.uri, changeId });
  }
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

/** Candidate statuses the inbox lists: waiting for a decision, or for an explicit recovery. */
const RESIDENT_OPEN = ['pending', 'failed', 'uncertain'];

/**
 * Rows for the Resident memory section from the server's `memzoi.resident.list` answer
 * (`{scopes: [{scope, path, uri}], candidates: [{id, scope, action, content, locator, status, target_path,
 * decidable}]}`): one per pending, failed or uncertain candidate, opening its resident file. Anything else gives
 * no rows.
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
  const undoSeen = new Set<string>();
  for (const raw of candidates) {
    const c = (raw ?? {}) as Record<string, unknown>;
    if (typeof c.id !== 'string' || typeof c.status !== 'string') continue;
    const path = typeof c.target_path === 'string' ? c.target_path : '';
    // The newest applied candidate of each file is listed too, with Undo (the listing is newest first).
    const undoable = c.status === 'applied' && !undoSeen.has(path);
    if (c.status === 'applied') undoSeen.add(path);
    if (!RESIDENT_OPEN.includes(c.status) && !undoable) continue;
    const text = [c.content, c.locator, c.recovery_mode].find((v) => typeof v === 'string' && v) as string | undefined;
    rows.push({
      kind: 'resident',
      id: c.id,
      title: oneLine(text ?? c.id),
      uri: uris.get(path) ?? `file://${path}`,
      action: str(c.action),
      scope: str(c.scope),
      status: c.status,
      decidable: c.decidable === true,
      diagnostic: str(c.diagnostic),
      ...(undoable ? { undoable: true, when: utc(c.time_applied) } : {}),
    });
  }
  return rows;
}

/** Every candidate's status in a `memzoi.resident.list` answer (`id` → `rejected`, `applied`, …), rows or not. */
export function candidateStatuses(answer: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const candidates = (answer as { candidates?: unknown } | null)?.candidates;
  for (const raw of Array.isArray(candidates) ? candidates : []) {
    const c = (raw ?? {}) as Record<string, unknown>;
    if (typeof c.id === 'string' && typeof c.status === 'string') out.set(c.id, c.status);
  }
  return out;
}

/**
 * Rows for the reflection jobs of the Resident memory section, from the server's `memzoi.resident.state` (the
 * WorkStateProjection: `{files: [{scope, path}], memory_candidates: [{id, job}], reflection_jobs: [{id,
 * source_message_id, trigger, status, error, outcome: {status, kind, error, candidates}}]}`): one row per job,
 * newest first, opening its request and outcome. Anything else gives no rows.
 */
export function reflectionRows(answer: unknown): InboxItem[] {
  if (!answer || typeof answer !== 'object') return [];
  const { files, reflection_jobs: jobs } = answer as { files?: unknown; reflection_jobs?: unknown };
  if (!Array.isArray(jobs)) return [];
  const project = (Array.isArray(files) ? files : []).map((f) => f as Record<string, unknown>).find((f) => f?.scope === 'project');
  const uri = typeof project?.path === 'string' ? `file://${project.path}` : 'file:///';
  const rows: InboxItem[] = [];
  for (const raw of jobs) {
    const j = (raw ?? {}) as Record<string, unknown>;
    if (typeof j.id !== 'string' || typeof j.status !== 'string') continue;
    const outcome = (j.outcome ?? {}) as Record<string, unknown>;
    const cands = Array.isArray(outcome.candidates) ? outcome.candidates.filter((c): c is string => typeof c === 'string') : [];
    rows.push({
      kind: 'reflection',
      id: j.id,
      job: j.id,
      title: `Reflection of message ${str(j.source_message_id) ?? '?'}`,
      uri,
      status: j.status,
      trigger: str(j.trigger),
      candidates: cands,
      diagnostic: str(j.error) ?? str(outcome.error),
      when: utc(j.time_created),
    });
  }
  return rows;
}

/**
 * The resident rows with `job` set on each candidate a reflection job proposed (from the WorkStateProjection's
 * `memory_candidates[].job`): the row links to that job.
 */
export function linkJobs(rows: InboxItem[], answer: unknown): InboxItem[] {
  const cands = (answer as { memory_candidates?: unknown } | undefined)?.memory_candidates;
  if (!Array.isArray(cands)) return rows;
  const jobs = new Map<string, string>();
  for (const raw of cands) {
    const c = (raw ?? {}) as Record<string, unknown>;
    if (typeof c.id === 'string' && typeof c.job === 'string') jobs.set(c.id, c.job);
  }
  return rows.map((r) => (r.kind === 'resident' && jobs.has(r.id) ? { ...r, job: jobs.get(r.id) } : r));
}

/** `YYYY-MM-DD HH:MM UTC` of a time in ms since the epoch, else `undefined`. */
function utc(ms: unknown): string | undefined {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return undefined;
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The cap usage of one resident file. */
export interface ResidentUsage {
  uri: string;
  scope?: string;
  /** Characters used and the cap (Zuno's character limit). */
  used: number;
  cap: number;
  entries: number;
}

/**
 * The cap usage of the resident files, from `memzoi.residentStatus` (`{files: [{uri, used, cap, entries}]}`) or
 * from `memzoi.resident.list`'s `scopes` (`[{scope, uri, used, cap, entries}]`, `entries` a count or a list).
 * Entries without numbers are skipped.
 */
export function residentUsage(answer: unknown): ResidentUsage[] {
  if (!answer || typeof answer !== 'object') return [];
  const a = answer as { files?: unknown; scopes?: unknown };
  const list = Array.isArray(a.files) ? a.files : Array.isArray(a.scopes) ? a.scopes : [];
  const out: ResidentUsage[] = [];
  for (const raw of list) {
    const f = (raw ?? {}) as Record<string, unknown>;
    if (typeof f.uri !== 'string' || typeof f.used !== 'number' || typeof f.cap !== 'number') continue;
    const entries = typeof f.entries === 'number' ? f.entries : Array.isArray(f.entries) ? f.entries.length : 0;
    out.push({ uri: f.uri, scope: str(f.scope), used: f.used, cap: f.cap, entries });
  }
  return out;
}

/** One line of cap usage: `project 9/10 chars (90%), 1 entry`. */
export function usageText(u: ResidentUsage): string {
  const pct = u.cap > 0 ? Math.round((100 * u.used) / u.cap) : 0;
  return `${u.scope ?? 'resident'} ${u.used}/${u.cap} chars (${pct}%), ${u.entries} ${u.entries === 1 ? 'entry' : 'entries'}`;
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
      title: oneLine(str(c.title) ?? c.id),
      uri: `file://${root.startsWith('/') ? '' : '/'}${root}/.memzoi`,
      status: 'pending',
      root: c.root,
      actor: str(c.actor),
      confidence: typeof c.confidence === 'number' ? c.confidence : undefined,
      body: typeof c.body === 'string' ? c.body : undefined,
      reason: typeof c.reason === 'string' ? c.reason : undefined,
    });
  }
  return rows;
}

/**
 * Rows for the Session checkpoints section from the server's `memzoi.checkpoints.list` answer (`{projects: [{root,
 * checkpoints: [{id, task, title, status, version, actions, retention_decision}]}]}`): one per open checkpoint,
 * with the actions the server says it accepts now (continue only while current; close while open). A checkpoint is
 * a runtime row with no file: `uri` is the project's `.memzoi` folder. Anything else gives no rows.
 */
export function checkpointRows(answer: unknown): InboxItem[] {
  if (!answer || typeof answer !== 'object') return [];
  const { projects } = answer as { projects?: unknown };
  if (!Array.isArray(projects)) return [];
  const rows: InboxItem[] = [];
  for (const rawProject of projects) {
    const p = (rawProject ?? {}) as Record<string, unknown>;
    if (typeof p.root !== 'string' || !Array.isArray(p.checkpoints)) continue;
    const root = p.root.replace(/\/+$/, '');
    for (const raw of p.checkpoints) {
      const c = (raw ?? {}) as Record<string, unknown>;
      if (typeof c.id !== 'string' || c.status !== 'open') continue;
      const actions = (Array.isArray(c.actions) ? c.actions : []).filter((a): a is string => typeof a === 'string');
      const boundary = ((c.retention_decision ?? {}) as Record<string, unknown>).effective_boundary;
      rows.push({
        kind: 'checkpoint',
        id: c.id,
        title: oneLine(`${str(c.task) ?? ''}${str(c.title) && c.title !== c.task ? `: ${c.title as string}` : ''}` || c.id),
        uri: `file://${root.startsWith('/') ? '' : '/'}${root}/.memzoi`,
        status: c.status,
        root: p.root,
        actions,
        version: typeof c.version === 'number' ? c.version : undefined,
        body: typeof c.body === 'string' ? c.body : undefined,
        when: typeof boundary === 'string' ? boundary : undefined,
      });
    }
  }
  return rows;
}

/** Status bar counts: pending proposals, those the server says cannot be applied, and uncertain changes. */
export function countInbox(items: readonly InboxItem[]): InboxCounts {
  const proposals = items.filter((i) => i.kind === 'proposal');
  return {
    pending: proposals.length,
    blocked: proposals.filter((i) => i.canApply === false).length,
    uncertain: items.filter((i) => i.kind === 'uncertain').length,
  };
}

/**
 * Whether the status bar leaves "starting…": with a server that lists proposals, once it has said it is ready
 * (`memzoi-lsp ready`, sent after it registered the workspace's projects) and its listing reports no scan running,
 * which is at once when there is nothing to scan; with an older server, at its first "scanned" log line.
 */
export function startupOver(f: { ready: boolean; listing?: { scanning: boolean }; scannedLine: boolean }): boolean {
  if (f.listing) return f.ready && !f.listing.scanning;
  return f.scannedLine;
}
