// How the Memory Inbox shows its rows: labels, descriptions, tooltips, icons, the context values its menus match
// (so a button appears only where the server says the action applies) and the tree of sections, plus the status
// bar text. Pure logic (no `vscode` import).
import { type Blocker, type InboxCounts, type InboxItem, type ResidentUsage, usageText } from './inbox';

/** A node of the inbox tree: a section (parent node), a row, or one blocking reason under a blocked proposal. */
export type InboxNode =
  | { type: 'section'; id: SectionId; label: string; children: InboxItem[]; usage?: string; problem?: string }
  | { type: 'row'; item: InboxItem }
  | { type: 'reason'; parent: InboxItem; blocker: Blocker }
  | { type: 'unreadable'; section: SectionId; message: string };

/** The inbox's sections. */
export type SectionId = 'resident' | 'local' | 'checkpoint';

/** Why a section's listing could not be read (the server's refusal text, which names the file and the fix). */
export type Unreadable = Readonly<Partial<Record<SectionId, string>>>;

const SECTIONS = { resident: 'Resident memory', local: 'Local memory', checkpoint: 'Session checkpoints' } as const;

/**
 * The top level of the tree: pending proposals and uncertain changes as rows, then a "Resident memory" and a
 * "Local memory" section holding their candidates (each section only when it has any; the resident one also when
 * the server reports the cap usage of a resident file, which its header shows). A section whose listing could not
 * be read (`unreadable`) is shown too, its first child saying why: an empty inbox must not read as "nothing waits"
 * when the runtime home is full or read-only (newuser5 D1).
 */
export function inboxTree(items: readonly InboxItem[], usage: readonly ResidentUsage[] = [], unreadable: Unreadable = {}): InboxNode[] {
  const top: InboxNode[] = items.filter((i) => i.kind === 'proposal' || i.kind === 'uncertain').map((item) => ({ type: 'row', item }));
  for (const id of ['resident', 'local', 'checkpoint'] as const) {
    // Reflection jobs and their outcomes are listed under the resident section, after its candidates.
    const children = items.filter((i) => i.kind === id || (id === 'resident' && i.kind === 'reflection'));
    // The fullest file first: it is the one about to hit its cap.
    const fullest = [...usage].sort((a, b) => b.used / (b.cap || 1) - a.used / (a.cap || 1));
    const used = id === 'resident' && usage.length > 0 ? fullest.map(usageText).join(' · ') : undefined;
    const problem = unreadable[id];
    if (children.length > 0 || used || problem) {
      top.push({ type: 'section', id, label: SECTIONS[id], children, ...(used ? { usage: used } : {}), ...(problem ? { problem } : {}) });
    }
  }
  return top;
}

/**
 * A stable id for a node (`TreeItem.id`). VS Code hands an inline button the element registered under the
 * clicked row's handle; without ids the handles are positions, so after a refresh (which rebuilds the nodes) a
 * click resolved to no element, or another one. With ids a row keeps its handle: `row:<kind>:<id>:<uri>`.
 */
export function nodeId(node: InboxNode): string {
  if (node.type === 'section') return `section:${node.id}`;
  if (node.type === 'unreadable') return `unreadable:${node.section}`;
  const of = (i: InboxItem): string => `${i.kind}:${i.id}:${i.uri}${i.kind === 'uncertain' ? `:${i.title}` : ''}`;
  if (node.type === 'row') return `row:${of(node.item)}`;
  const index = (node.parent.blockers ?? []).indexOf(node.blocker);
  return `reason:${of(node.parent)}:${index}:${node.blocker.code}`;
}

/** The children of a node: a section's rows, a blocked proposal's reasons, nothing for other nodes. */
export function childrenOf(node: InboxNode): InboxNode[] {
  if (node.type === 'section') {
    const rows: InboxNode[] = node.children.map((item) => ({ type: 'row', item }));
    return node.problem ? [{ type: 'unreadable', section: node.id, message: node.problem }, ...rows] : rows;
  }
  if (node.type === 'row' && node.item.kind === 'proposal' && node.item.canApply === false) {
    return (node.item.blockers ?? []).map((blocker) => ({ type: 'reason', parent: node.item, blocker }));
  }
  return [];
}

/**
 * The `contextValue` of a row, which package.json's `view/item/context` when-clauses match:
 * `memzoi.proposal.ready` (Apply shown), `memzoi.proposal.blocked` or `memzoi.proposal.blocked.routable` (no Apply;
 * Route to Local Memory where it fits), `memzoi.resident.<status>` plus `.decidable` when the server says approve
 * and reject apply (an uncertain candidate gets Recover… instead), `memzoi.uncertain`, `memzoi.local`,
 * `memzoi.checkpoint` plus `.continuable` when the server says continue applies now (Close is on every open one).
 */
export function contextValue(item: InboxItem): string {
  if (item.kind === 'proposal') {
    if (item.canApply) return 'memzoi.proposal.ready';
    return item.canRouteLocal ? 'memzoi.proposal.blocked.routable' : 'memzoi.proposal.blocked';
  }
  if (item.kind === 'resident') {
    return `memzoi.resident.${item.status ?? 'unknown'}${item.decidable ? '.decidable' : ''}${item.undoable ? '.undoable' : ''}`;
  }
  if (item.kind === 'checkpoint') return `memzoi.checkpoint${(item.actions ?? []).includes('continue') ? '.continuable' : ''}`;
  if (item.kind === 'reflection') return `memzoi.reflection.${item.status ?? 'unknown'}`;
  return `memzoi.${item.kind}`;
}

/** The codes of a proposal's blockers in order, without repeats. */
export function blockerCodes(item: InboxItem): string[] {
  return [...new Set((item.blockers ?? []).map((b) => b.code))];
}

/** Label and description for an inbox row in the tree view. */
export function describeItem(item: InboxItem): { label: string; description: string } {
  if (item.kind === 'uncertain') return { label: `Change ${item.id}`, description: 'uncertain: needs recovery' };
  if (item.kind === 'checkpoint') {
    const acts = item.actions ?? [];
    const state = acts.includes('continue') ? undefined : 'past its boundary: close only';
    return { label: item.title, description: ['session', `v${item.version ?? '?'}`, state, 'runtime'].filter(Boolean).join(' · ') };
  }
  if (item.kind === 'reflection') {
    const n = item.candidates?.length ?? 0;
    const made = n > 0 ? `${n} candidate${n === 1 ? '' : 's'}` : undefined;
    return { label: item.title, description: [item.status, item.trigger, made, item.when].filter(Boolean).join(' · ') };
  }
  if (item.kind === 'local') {
    const bits = ['local memory', item.confidence === undefined ? undefined : `confidence ${item.confidence}`,
      item.actor ? `by ${item.actor}` : undefined];
    return { label: item.title, description: bits.filter(Boolean).join(' · ') };
  }
  if (item.kind === 'resident') {
    const need = item.status === 'uncertain' ? 'uncertain: needs recovery' : item.status === 'pending' ? undefined
      : item.undoable ? `applied${item.when ? ` ${item.when}` : ''}` : item.status;
    return { label: item.title, description: [item.scope, item.action, need].filter(Boolean).join(' · ') };
  }
  const codes = blockerCodes(item);
  const verdict = item.canApply === false ? `blocked: ${codes.join(', ') || 'see tooltip'}` : undefined;
  return { label: item.title, description: [item.action, item.id, verdict].filter(Boolean).join(' · ') };
}

/** The tooltip of a row: what it is, and for a blocked proposal every reason the server gave. */
export function tooltipOf(item: InboxItem): string {
  const kind = {
    proposal: 'Pending proposal', uncertain: 'Uncertain change', resident: 'Resident-memory candidate',
    local: 'Local-memory candidate', checkpoint: 'Session checkpoint (runtime, never repository truth)',
    reflection: 'Reflection job',
  }[item.kind];
  const lines = [`${kind} ${item.id}`, item.title];
  if (item.kind === 'proposal' && item.statement) lines.push(`Can it be applied? ${item.statement}`);
  if (item.kind === 'proposal' && item.canApply === false) {
    for (const b of item.blockers ?? []) lines.push(`• ${b.code}: ${b.message}`);
  }
  if (item.kind === 'resident' && item.status === 'uncertain') {
    lines.push(item.diagnostic ?? 'Its file matches neither snapshot: choose a recovery (Recover…).');
  }
  if (item.kind === 'resident' && item.job) lines.push(`Proposed by reflection job ${item.job} (Open Reflection Job)`);
  if (item.kind === 'reflection') {
    lines.push(`Status: ${item.status ?? '?'}${item.trigger ? ` (${item.trigger})` : ''}`);
    if (item.candidates?.length) lines.push(`Candidates: ${item.candidates.join(', ')}`);
    if (item.diagnostic) lines.push(item.diagnostic);
    lines.push('Click to open its request (exactly as sent) and its outcome.');
  }
  if (item.reason) lines.push(`Reason: ${item.reason}`);
  if (item.kind === 'checkpoint') {
    if (item.when) lines.push(`Retention boundary: ${item.when}`);
    lines.push(`Accepts now: ${(item.actions ?? []).join(', ') || 'nothing'}`);
  }
  return lines.join('\n');
}

/** The codicon of a row. */
export function iconOf(item: InboxItem): string {
  if (item.kind === 'local') return 'lock';
  if (item.kind === 'checkpoint') return 'history';
  if (item.kind === 'reflection') return item.status === 'completed' ? 'sparkle' : item.status === 'running' ? 'sync' : 'warning';
  if (item.kind === 'resident') return item.status === 'uncertain' ? 'warning' : 'note';
  if (item.kind === 'uncertain') return 'warning';
  return item.canApply === false ? 'circle-slash' : 'git-pull-request';
}

/**
 * The row of a section that could not be read: `cannot be read`, the reason (the server's text, which names the
 * file and what to do, as the Memory health view shows it), and the tooltip with the whole text.
 */
export function unreadableRow(section: SectionId, message: string): { label: string; description: string; tooltip: string } {
  const reason = message.replace(/^Error:\s*/, '').replace(/\s+/g, ' ').trim() || 'the server gave no reason';
  return {
    label: 'cannot be read',
    description: reason,
    tooltip: `${SECTIONS[section]} cannot be read: ${reason}\nWhat waits there is not shown until this is fixed; then refresh the Memory Inbox.`,
  };
}

/**
 * Status bar text (codicons) and tooltip for the counts; `unreadable` names the sections that could not be read,
 * so the counts never read as an all-clear then.
 */
export function statusBarText(c: InboxCounts, unreadable: Unreadable = {}): { text: string; tooltip: string } {
  const parts = [`$(inbox) ${c.pending}`, `$(circle-slash) ${c.blocked}`];
  if (c.uncertain > 0) parts.push(`$(warning) ${c.uncertain}`);
  const cannot = (Object.keys(unreadable) as SectionId[]).filter((k) => unreadable[k]).map((k) => SECTIONS[k]);
  if (cannot.length > 0) parts.push('$(error)');
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const tooltip = [
    `Memzoi: ${plural(c.pending, 'pending proposal')}`,
    `${c.blocked} blocked (cannot be applied now)`,
    c.uncertain > 0 ? plural(c.uncertain, 'uncertain change') + ' to recover' : undefined,
    cannot.length > 0 ? `${cannot.join(', ')} cannot be read (see the Memory Inbox)` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return { text: `Memzoi ${parts.join(' ')}`, tooltip };
}
