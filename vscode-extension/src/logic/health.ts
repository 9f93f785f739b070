// The Memory health view: the server's `memzoi.memoryHealth` answer (the repository maintenance plan grouped by
// kind) as a tree of groups, findings and records, each record opening its file. Pure logic (no `vscode` import):
// the server decides every finding; nothing here judges a record.

/** A node of the Memory health tree. */
export type HealthNode =
  | { type: 'group'; key: string; label: string; children: HealthNode[] }
  | { type: 'finding'; label: string; description: string; children: HealthNode[] }
  | { type: 'record'; id: string; uri?: string; description: string };

/** The groups shown, in order, with their labels (contradictions name their full set: no winner is chosen). */
export const HEALTH_GROUPS: readonly (readonly [string, string])[] = [
  ['duplicates', 'Duplicates'],
  ['contradictions', 'Contradictions (no winner chosen)'],
  ['expiring', 'Expiring soon'],
  ['expired', 'Expired'],
  ['stale', 'Stale'],
];

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The tree of `memzoi.memoryHealth`'s answer (`{projects: [{root, duplicates|contradictions|expiring|expired|stale:
 * [{record_ids, uris, boundary?, evidence?}]}]}`): one group per kind that has findings; a group's findings, each
 * with its records. Anything else gives an empty tree.
 */
export function healthTree(answer: unknown): HealthNode[] {
  if (!answer || typeof answer !== 'object') return [];
  const projects = (answer as { projects?: unknown }).projects;
  if (!Array.isArray(projects)) return [];
  const out: HealthNode[] = [];
  for (const [key, label] of HEALTH_GROUPS) {
    const findings: HealthNode[] = [];
    for (const rawProject of projects) {
      const list = ((rawProject ?? {}) as Record<string, unknown>)[key];
      for (const raw of Array.isArray(list) ? list : []) {
        const f = (raw ?? {}) as Record<string, unknown>;
        const ids = strings(f.record_ids);
        if (ids.length === 0) continue;
        const uris = (f.uris ?? {}) as Record<string, unknown>;
        const boundary = typeof f.boundary === 'string' ? f.boundary : undefined;
        const records: HealthNode[] = ids.map((id) => ({
          type: 'record', id, uri: typeof uris[id] === 'string' ? uris[id] : undefined,
          description: boundary ? `until ${boundary}` : '',
        }));
        findings.push(ids.length === 1 ? records[0] : {
          type: 'finding', label: ids.join(', '), description: `${ids.length} records`, children: records,
        });
      }
    }
    if (findings.length > 0) out.push({ type: 'group', key, label, children: findings });
  }
  return out;
}

/** A one-line summary of the answer's first project (`2 duplicate sets, 1 contradiction set, 0 stale, 1 expired`). */
export function healthSummary(answer: unknown): string {
  const p = ((answer as { projects?: unknown[] } | undefined)?.projects ?? [])[0] as Record<string, unknown> | undefined;
  const s = (p?.summary ?? {}) as Record<string, unknown>;
  const n = (k: string): number => (typeof s[k] === 'number' ? s[k] : 0);
  return `${n('exact_duplicates')} duplicate set(s), ${n('contradictions')} contradiction set(s), ${n('stale')} stale, ${n('expired')} expired`;
}

/**
 * The Memory health view's message when the server refused the plan (`memzoi.memoryHealth`'s refusal text, which
 * names the file and what to do): the view then lists nothing, and says why instead of "no findings".
 */
export function healthRefusal(message: string): string {
  const text = message.replace(/\s+/g, ' ').trim() || 'the server gave no reason';
  return `No maintenance plan: ${text}`;
}
