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
  /** VS Code command id contributed in package.json. */
  id: string;
  /** Palette title (shown as `Memzoi: <title>`). */
  title: string;
  /** Server command ids that implement it, in order of preference; the first one the server advertises is used. */
  server: readonly string[];
  target: Target;
  /** Whether the client prompts for a reason before running it. */
  reason?: 'required' | 'optional';
  /** A free-text input other than the reason (e.g. the search query). */
  query?: { prompt: string; placeHolder?: string };
  /** Asks for confirmation with this text before running (modal). */
  confirm?: string;
}

/** The commands, in palette order. Client-only commands (restart, show output, refresh inbox) are not listed. */
export const COMMANDS: readonly CommandSpec[] = [
  { id: 'memzoi.apply', title: 'Apply Proposal', server: ['memzoi.apply', 'memzoi.proposals.apply'], target: 'proposal' },
  {
    id: 'memzoi.reject',
    title: 'Reject Proposal…',
    server: ['memzoi.reject', 'memzoi.proposals.reject'],
    target: 'proposal',
    reason: 'required',
  },
  {
    id: 'memzoi.routeLocal',
    title: 'Route Proposal to Local Memory',
    server: ['memzoi.routeLocal', 'memzoi.route_local', 'memzoi.proposals.routeLocal'],
    target: 'proposal',
  },
  { id: 'memzoi.supersede', title: 'Supersede Record…', server: ['memzoi.supersede'], target: 'record', reason: 'required' },
  { id: 'memzoi.tombstone', title: 'Tombstone Record…', server: ['memzoi.tombstone'], target: 'record', reason: 'required' },
  { id: 'memzoi.reattest', title: 'Re-attest Record', server: ['memzoi.reattest'], target: 'record', reason: 'optional' },
  {
    id: 'memzoi.materialize',
    title: 'Materialize Candidate',
    server: ['memzoi.materialize', 'memzoi.materialize.apply'],
    target: 'candidate',
  },
  {
    id: 'memzoi.undo',
    title: 'Undo Change…',
    server: ['memzoi.undo'],
    target: 'change',
    confirm: 'Undo this change? The files it wrote are restored to their exact previous bytes.',
  },
  { id: 'memzoi.recover', title: 'Recover Uncertain Change…', server: ['memzoi.recover'], target: 'change' },
  { id: 'memzoi.history', title: 'Show Change History', server: ['memzoi.history'], target: 'memzoiFile' },
  { id: 'memzoi.reconcile', title: 'Reconcile Ledger', server: ['memzoi.reconcile'], target: 'none' },
  { id: 'memzoi.rebuild', title: 'Rebuild Index', server: ['memzoi.rebuild', 'memzoi.rebuildIndex'], target: 'none' },
  { id: 'memzoi.doctor', title: 'Doctor', server: ['memzoi.doctor'], target: 'none' },
  { id: 'memzoi.check', title: 'Check Workspace', server: ['memzoi.check', 'memzoi.checkWorkspace'], target: 'none' },
  {
    id: 'memzoi.search',
    title: 'Search Records…',
    server: ['memzoi.search'],
    target: 'none',
    query: { prompt: 'Search Memzoi records (title and body)', placeHolder: 'e.g. session validation' },
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
  query?: string;
}

/**
 * The `arguments` of `workspace/executeCommand`: one object with the gathered fields (`uri`, `reason`,
 * `change_id`, `query`), omitting what was not gathered.
 */
export function buildArguments(ctx: InvocationContext): unknown[] {
  const arg: Record<string, string> = {};
  if (ctx.uri !== undefined) arg.uri = ctx.uri;
  if (ctx.changeId !== undefined) arg.change_id = ctx.changeId;
  if (ctx.reason !== undefined) arg.reason = ctx.reason;
  if (ctx.query !== undefined) arg.query = ctx.query;
  return [arg];
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

/** Validates a reason typed by the user: `undefined` when acceptable, else the message to show. */
export function validateReason(value: string, required: boolean): string | undefined {
  const v = value.trim();
  if (required && v.length === 0) return 'A reason is required: it is recorded with the change and shown to reviewers.';
  if (v.length > 2000) return 'Keep the reason under 2000 characters.';
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) return 'The reason must not contain control characters.';
  return undefined;
}
