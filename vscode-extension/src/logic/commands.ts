// The palette commands the extension contributes and how each maps onto a server command
// (`workspace/executeCommand`). Pure logic (no `vscode` import).

/** What a command acts on, which decides the argument the client supplies. */
export type Target =
  | 'none' // workspace-wide (rebuild, doctor, check, reconcile)
  | 'proposal' // a pending proposal packet (active editor or inbox row)
  | 'record' // a canonical record
  | 'memzoiFile' // any file under .memzoi (history)
  | 'candidate' // a materialization candidate JSON
  | 'change'; // a ledger change id (undo, recover)

/** One palette command. */
export interface CommandSpec {
  /**
   * VS Code command id contributed in package.json (`memzoi.palette.*`): distinct from the server's
   * `workspace/executeCommand` ids, which vscode-languageclient registers itself for code actions and lenses.
   */
  id: string;
  /** Palette title (shown as `Memzoi: <title>`). */
  title: string;
  /** Server command ids that implement it, in order of preference; the first one the server advertises is used. */
  server: readonly string[];
  target: Target;
  /** Whether the client prompts for a reason before running it. */
  reason?: 'required' | 'optional';
  /** Asks for the replacement's title too (required: a supersede needs an id of its own). */
  newTitle?: 'optional';
  /** A free-text input other than the reason (e.g. the search query). */
  query?: { prompt: string; placeHolder?: string };
  /** Asks for confirmation with this text before running (modal). */
  confirm?: string;
  /** The `memzoi.preview` operation the confirmation offers to show first (the planned files, nothing written). */
  preview?: 'apply' | 'supersede' | 'tombstone' | 'materialize';
  /** Argument shape: `object` (default) sends `[{uri, reason, change_id, mode}]`; `query` sends `[query]`. */
  args?: 'object' | 'query';
  /** The user picks one of these as `mode` (recovering an uncertain change). */
  modes?: readonly { mode: string; label: string }[];
}

/** How an uncertain ledger change can be settled (SPEC §6: explicit, audited recovery). */
export const RECOVERY_MODES = [
  { mode: 'restore-before', label: 'Restore the files as they were before the change' },
  { mode: 'complete-after', label: 'Complete the change (write the files as it intended)' },
  { mode: 'accept', label: 'Accept the files as they are now' },
] as const;

/** The commands, in palette order. Client-only commands (restart, show output, refresh inbox) are not listed. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    id: 'memzoi.palette.apply',
    title: 'Apply Proposal',
    server: ['memzoi.apply'],
    target: 'proposal',
    confirm: 'Apply this proposal? It writes the record and resolves the packet (one ledgered change you can undo).',
    preview: 'apply',
  },
  {
    id: 'memzoi.palette.reject',
    title: 'Reject Proposal…',
    server: ['memzoi.reject'],
    target: 'proposal',
    reason: 'required',
  },
  {
    id: 'memzoi.palette.routeLocal',
    title: 'Route Proposal to Local Memory',
    server: ['memzoi.routeLocal'],
    target: 'proposal',
  },
  {
    id: 'memzoi.palette.supersede',
    title: 'Supersede Record…',
    server: ['memzoi.supersede'],
    target: 'record',
    reason: 'required',
    newTitle: 'optional',
    confirm: 'Create a supersede proposal for this record? It writes a pending packet for review (one ledgered change you can undo).',
    preview: 'supersede',
  },
  {
    id: 'memzoi.palette.tombstone',
    title: 'Tombstone Record…',
    server: ['memzoi.tombstone'],
    target: 'record',
    reason: 'required',
    confirm: 'Create a tombstone proposal for this record? It writes a pending packet for review (one ledgered change you can undo).',
    preview: 'tombstone',
  },
  { id: 'memzoi.palette.reattest', title: 'Re-attest Record', server: ['memzoi.reattest'], target: 'record', reason: 'optional' },
  { id: 'memzoi.palette.materializePlan', title: 'Plan Materialization', server: ['memzoi.materialize.plan'], target: 'candidate' },
  {
    id: 'memzoi.palette.materializeDecide',
    title: 'Decide Materialization',
    server: ['memzoi.materialize.decide'],
    target: 'candidate',
    confirm: 'Record the explicit decision to write this planned record to the repository?',
  },
  {
    id: 'memzoi.palette.materialize',
    title: 'Materialize Candidate',
    server: ['memzoi.materialize'],
    target: 'candidate',
    confirm: 'Write the decided record with its attestation? (one ledgered change you can undo)',
    preview: 'materialize',
  },
  {
    id: 'memzoi.palette.undo',
    title: 'Undo Change…',
    server: ['memzoi.undo'],
    target: 'change',
    confirm: 'Undo this change? The files it wrote are restored to their exact previous bytes.',
  },
  {
    id: 'memzoi.palette.recover',
    title: 'Recover Uncertain Change…',
    server: ['memzoi.recover'],
    target: 'change',
    reason: 'optional',
    modes: RECOVERY_MODES,
  },
  { id: 'memzoi.palette.history', title: 'Show Change History', server: ['memzoi.history'], target: 'memzoiFile' },
  { id: 'memzoi.palette.reconcile', title: 'Reconcile Ledger', server: ['memzoi.reconcile'], target: 'none' },
  { id: 'memzoi.palette.rebuild', title: 'Rebuild Index', server: ['memzoi.rebuild'], target: 'none' },
  { id: 'memzoi.palette.doctor', title: 'Doctor', server: ['memzoi.doctor'], target: 'none' },
  { id: 'memzoi.palette.check', title: 'Check Workspace', server: ['memzoi.checkWorkspace'], target: 'none' },
  {
    id: 'memzoi.palette.search',
    title: 'Search Records…',
    server: ['memzoi.search'],
    target: 'none',
    query: { prompt: 'Search Memzoi records (title and body)', placeHolder: 'e.g. session validation' },
    args: 'query',
  },
];

/** The command spec with this VS Code id. */
export function specById(id: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.id === id);
}

/** The spec one of whose server commands is `serverCommand` (used to prompt for reasons on code-action commands). */
export function specForServerCommand(serverCommand: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.server.includes(serverCommand));
}

/** The first of the spec's server commands that the server advertises (`executeCommandProvider.commands`). */
export function resolveServerCommand(spec: CommandSpec, advertised: readonly string[]): string | undefined {
  return spec.server.find((s) => advertised.includes(s));
}

/** What the client gathered for one invocation. */
export interface InvocationContext {
  /** The target file URI (proposal, record, candidate, or any .memzoi file). */
  uri?: string;
  /** Ledger change id for undo / recover. */
  changeId?: string;
  reason?: string;
  /** The replacement's title (supersede). */
  title?: string;
  query?: string;
  /** Recovery mode (see RECOVERY_MODES). */
  mode?: string;
}

/**
 * The `arguments` of `workspace/executeCommand`: for `args: 'query'` specs the query string alone, otherwise one
 * object with the gathered fields (`uri`, `reason`, `change_id`), omitting what was not gathered.
 */
export function buildArguments(ctx: InvocationContext, spec?: Pick<CommandSpec, 'args'>): unknown[] {
  if (spec?.args === 'query') return [ctx.query ?? ''];
  const arg: Record<string, string> = {};
  if (ctx.uri !== undefined) arg.uri = ctx.uri;
  if (ctx.changeId !== undefined) arg.change_id = ctx.changeId;
  if (ctx.mode !== undefined) arg.mode = ctx.mode;
  if (ctx.reason !== undefined) arg.reason = ctx.reason;
  if (ctx.title !== undefined && ctx.title.trim()) arg.title = ctx.title.trim();
  return [arg];
}

/**
 * The `memzoi.preview` argument that checks a confirmed command before its confirmation is shown: the server
 * refuses a preview as it would refuse the change (a blocked packet, a git-ignored file), so the user sees the
 * refusal instead of a confirmation that cannot succeed. `undefined` when the command has no preview, has no
 * target yet, or the server does not offer `memzoi.preview`.
 */
export function previewArgument(ctx: InvocationContext, spec: Pick<CommandSpec, 'preview'>,
  advertised: readonly string[]): Record<string, string> | undefined {
  if (!spec.preview || ctx.uri === undefined || !advertised.includes('memzoi.preview')) return undefined;
  const arg: Record<string, string> = { uri: ctx.uri, operation: spec.preview };
  if (ctx.reason !== undefined) arg.reason = ctx.reason;
  if (ctx.title !== undefined && ctx.title.trim()) arg.title = ctx.title.trim();
  return arg;
}

/** A ledger change as `memzoi.history` lists it (the fields the picker shows). */
export interface ChangeSummary {
  change_id: string;
  /** Operation and status, e.g. `apply · applied`. */
  label: string;
  /** Time, actor, short id and whether undo is available. */
  description: string;
  /** The files with what the change did to each, in the server's word (`path (created)`; an older server's
   * states: `path (absent → present)`). */
  detail: string;
  /** The server's `undo_available`: the ledger would undo it now (applied, its files as it left them). */
  undoable: boolean;
}

/** The changes of a history result, newest first as the server sends them; `undefined` for another shape. */
export function historyChanges(result: unknown): ChangeSummary[] | undefined {
  if (!Array.isArray(result)) return undefined;
  const out: ChangeSummary[] = [];
  for (const raw of result) {
    if (!raw || typeof raw !== 'object') return undefined;
    const c = raw as Record<string, unknown>;
    if (typeof c.change_id !== 'string' && typeof c.change_id !== 'number') return undefined;
    const files = Array.isArray(c.files)
      ? (c.files as Record<string, unknown>[]).map(historyFile).join(', ')
      : '';
    const op = typeof c.operation === 'string' ? c.operation : '';
    const when = typeof c.applied_at === 'string' ? c.applied_at : typeof c.created_at === 'string' ? c.created_at : '';
    const undoable = c.undo_available === true;
    out.push({
      change_id: text(c.change_id),
      label: [op, text(c.status)].filter(Boolean).join(' · ') || text(c.change_id),
      description: [when.replace('T', ' ').replace(/\.\d+Z$|Z$/, ''), typeof c.actor === 'string' ? c.actor : '',
        text(c.change_id).slice(0, 12), undoable ? 'undo available' : ''].filter(Boolean).join(' · '),
      detail: files,
      undoable,
    });
  }
  return out;
}

/** One file of a history entry: `path (word)` with the server's `change`, else `path (before → after)`. */
function historyFile(f: Record<string, unknown>): string {
  if (typeof f.change === 'string' && f.change !== '') return `${text(f.path)} (${f.change})`;
  return f.before !== undefined ? `${text(f.path)} (${text(f.before)} → ${text(f.after)})` : text(f.path);
}

/** Text of a JSON scalar (objects as JSON, never `[object Object]`). */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return v === undefined ? '' : JSON.stringify(v);
}

/** A search hit as the server returns it (`memzoi.search`). */
export interface SearchHit {
  id: string;
  title: string;
  uri: string;
}

/** The hits of a search result, or `undefined` when `result` is not a list of `{id, title, uri}`. */
export function searchHits(result: unknown): SearchHit[] | undefined {
  if (!Array.isArray(result)) return undefined;
  const hits: SearchHit[] = [];
  for (const r of result) {
    if (!r || typeof r !== 'object' || typeof (r as SearchHit).uri !== 'string') return undefined;
    const h = r as Record<string, unknown>;
    hits.push({ id: text(h.id), title: typeof h.title === 'string' ? h.title : text(h.id), uri: h.uri as string });
  }
  return hits;
}

/**
 * One line for the user about a command result, in the CLI's `--json` shapes: a change
 * (`{change_id, status, files}`), a refusal (`{error: {code, message}}`), a check report
 * (`{files_checked, counts}`), or a list. Returns `undefined` for results with nothing to say.
 */
export function describeResult(title: string, result: unknown): { level: 'info' | 'error'; text: string } | undefined {
  const name = title.replace(/…$/, '');
  if (result === null || result === undefined) return undefined;
  if (Array.isArray(result)) return { level: 'info', text: `${name}: ${result.length} result${result.length === 1 ? '' : 's'}` };
  if (typeof result !== 'object') return { level: 'info', text: `${name}: ${text(result)}` };
  const r = result as Record<string, unknown>;
  if (r.error && typeof r.error === 'object') {
    const e = r.error as Record<string, unknown>;
    return { level: 'error', text: `${name} refused: ${typeof e.message === 'string' ? e.message : JSON.stringify(e)}` };
  }
  if (r.change_id !== undefined) {
    const files = Array.isArray(r.files)
      ? (r.files as Record<string, unknown>[]).map((f) => `${text(f.path)} (${text(f.before)} → ${text(f.after)})`)
      : [];
    return { level: 'info', text: `${name}: change ${text(r.change_id)} ${typeof r.status === 'string' ? r.status : ''}${files.length ? ': ' + files.join(', ') : ''}` };
  }
  if (typeof r.files_checked === 'number') {
    const c = (r.counts ?? {}) as Record<string, number>;
    return { level: 'info', text: `${name}: ${r.files_checked} files, ${c.error ?? 0} errors, ${c.warning ?? 0} warnings` };
  }
  return undefined;
}

/**
 * True when server-supplied `args` (from a code action or code lens) already carry a non-empty reason, so the
 * client must not prompt. Accepts the object form (`{reason}`) and the positional form (`[uri, reason]`).
 */
export function argsHaveReason(args: readonly unknown[]): boolean {
  for (const a of args) {
    if (a && typeof a === 'object' && typeof (a as { reason?: unknown }).reason === 'string') {
      return ((a as { reason: string }).reason).trim().length > 0;
    }
  }
  return args.length >= 2 && typeof args[1] === 'string' && args[1].trim().length > 0;
}

/** Adds `reason` to server-supplied `args`: into the first object argument, or as the second positional one. */
export function withReason(args: readonly unknown[], reason: string): unknown[] {
  const out = [...args];
  const i = out.findIndex((a) => a !== null && typeof a === 'object' && !Array.isArray(a));
  if (i >= 0) {
    out[i] = { ...(out[i] as Record<string, unknown>), reason };
    return out;
  }
  if (out.length === 0) return [{ reason }];
  if (out.length === 1) return [out[0], reason];
  out[1] = reason;
  return out;
}

/** Adds `key: value` to the first object argument of `args` (or as a new one). */
export function withField(args: readonly unknown[], key: string, value: string): unknown[] {
  const out = [...args];
  const i = out.findIndex((a) => a !== null && typeof a === 'object' && !Array.isArray(a));
  if (i >= 0) out[i] = { ...(out[i] as Record<string, unknown>), [key]: value };
  else out.unshift({ [key]: value });
  return out;
}

/** Validates a reason typed by the user: `undefined` when acceptable, else the message to show. */
export function validateReason(value: string, required: boolean): string | undefined {
  const v = value.trim();
  if (required && v.length === 0) return 'A reason is required: it is recorded with the change and shown to reviewers.';
  if (v.length > 2000) return 'Keep the reason under 2000 characters.';
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) return 'The reason must not contain control characters.';
  return undefined;
}
