// Routing of an agent's session-end file or an import manifest (issue 33): the lines of the preview the server
// gives (`memzoi.routing.preview`) and the Apply/Cancel question, then the arguments of `memzoi.routing.apply`
// (what the preview saw: the import `plan_id`, the session-end `expected_version` and `previewed`, the fingerprint
// of the file and the plan the preview showed, so an edit since is refused: `preview_stale`). Pure logic (no `vscode`).

/** One candidate of a routing preview: its index, destination, outcome and where it goes or why not. */
export interface RoutingCandidate {
  index: number;
  destination: string;
  outcome: string;
  path?: string;
  route?: string;
  reasons?: string[];
  matches?: { kind: string; id: string }[];
}

/** The server's routing preview (the fields the client uses). */
export interface RoutingPreview {
  kind: string;
  blocked: boolean;
  candidates: RoutingCandidate[];
  plan_id?: string;
  expected_version?: number;
  previewed?: string;
  actor?: string;
}

/** The preview of a `memzoi.routing.preview` answer; `undefined` for another shape. */
export function routingPreview(result: unknown): RoutingPreview | undefined {
  const r = result as Partial<RoutingPreview> | undefined;
  if (!r || typeof r.kind !== 'string' || !Array.isArray(r.candidates)) return undefined;
  return { kind: r.kind, blocked: r.blocked === true, candidates: r.candidates, plan_id: r.plan_id,
    expected_version: r.expected_version, actor: r.actor,
    previewed: typeof r.previewed === 'string' && r.previewed ? r.previewed : undefined };
}

/** One line per candidate: `[0] repo → create_proposal .memzoi/proposals/pending/x.md`, or the blocking codes. */
export function routingLines(preview: RoutingPreview): string[] {
  return preview.candidates.map((c) => {
    const where = c.reasons?.length ? c.reasons.join(', ')
      : c.matches?.length ? c.matches.map((m) => `${m.kind} ${m.id}`).join(', ')
        : (c.path ?? c.route ?? '');
    return `[${c.index}] ${c.destination} → ${c.outcome}${where ? ` ${where}` : ''}`;
  });
}

/** The modal question before anything is written: how many candidates write, and whether some are blocked. */
export function routingQuestion(preview: RoutingPreview, file: string): { message: string; detail: string } {
  const writes = preview.candidates.filter((c) => c.outcome === 'create_proposal' || c.outcome === 'create_runtime').length;
  const what = preview.kind === 'import' ? 'import' : 'session-end routing';
  const blocked = preview.blocked ? ' Some candidates are blocked and write nothing.' : '';
  return {
    message: `Apply the ${what} of ${file}: ${writes} of ${preview.candidates.length} candidate(s) write?${blocked}`,
    detail: routingLines(preview).join('\n'),
  };
}

/** The `memzoi.routing.apply` argument: the file and exactly what its preview saw. */
export function routingApplyArg(uri: string, preview: RoutingPreview): Record<string, unknown> {
  const arg: Record<string, unknown> = { uri };
  if (preview.plan_id !== undefined) arg.plan_id = preview.plan_id;
  if (preview.expected_version !== undefined) arg.expected_version = preview.expected_version;
  if (preview.previewed !== undefined) arg.previewed = preview.previewed;
  if (preview.actor !== undefined) arg.actor = preview.actor;
  return arg;
}
