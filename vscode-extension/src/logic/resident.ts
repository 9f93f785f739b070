// Resident memory's entries as the removal picker lists them, from the server's `memzoi.resident.state` (the
// WorkStateProjection, issue 34). Pure logic (no `vscode` import).

/** One resident entry: its scope (`global` or `project`), its text and the URI of the file holding it. */
export interface ResidentEntry {
  scope: string;
  content: string;
  uri?: string;
}

/**
 * The entries of a `memzoi.resident.state` answer (`{memory_entries: [{scope, content}], files: [{scope, path}]}`),
 * in the prompt's order (global first), each with its file's URI; anything else gives none.
 */
export function residentEntries(answer: unknown): ResidentEntry[] {
  const a = (answer ?? {}) as { memory_entries?: unknown; files?: unknown };
  if (!Array.isArray(a.memory_entries)) return [];
  const paths = new Map<string, string>();
  for (const raw of Array.isArray(a.files) ? a.files : []) {
    const f = (raw ?? {}) as Record<string, unknown>;
    if (typeof f.scope === 'string' && typeof f.path === 'string') paths.set(f.scope, f.path);
  }
  const out: ResidentEntry[] = [];
  for (const raw of a.memory_entries) {
    const e = (raw ?? {}) as Record<string, unknown>;
    if (typeof e.scope !== 'string' || typeof e.content !== 'string' || !e.content.trim()) continue;
    const path = paths.get(e.scope);
    out.push({ scope: e.scope, content: e.content, ...(path ? { uri: `file://${path.startsWith('/') ? '' : '/'}${path}` } : {}) });
  }
  return out;
}
