import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  changeIdOf,
  countInbox,
  type DiagnosticSummary,
  type InboxItem,
  isPendingProposalUri,
  linkJobs,
  localRows,
  proposalRows,
  reflectionRows,
  residentRows,
  startupOver,
  stemOf,
  uncertainRows,
} from '../logic/inbox';
import { childrenOf, contextValue, describeItem, iconOf, inboxTree, nodeId, statusBarText, tooltipOf, unreadableRow } from '../logic/inboxView';

const P_URI = 'file:///ws/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md';
const G_URI = 'file:///ws/.memzoi/proposals/pending/mem-gated.md';

/** A `memzoi.proposals.list` answer: one packet the core lets through, one the git-plane gate blocks. */
const LISTING = {
  scanning: false,
  proposals: [
    { id: 'mem_2026_07_06_auth_001', title: 'Protected routes:\nvalidate sessions', action: 'create', uri: P_URI,
      can_apply: true, statement: 'yes, with an explicit Apply', blockers: [], can_route_local: false },
    { id: 'mem-gated', title: 'Keep my notes', action: 'create', uri: G_URI, can_apply: false,
      statement: 'no: blocked by sensitivity_not_repo_safe, scope_project_mismatch; route it to local memory or reject it',
      blockers: [
        { code: 'sensitivity_not_repo_safe', message: 'sensitivity local-only is not repo-safe' },
        { code: 'scope_project_mismatch', message: 'no [project] id' },
        { code: 'scope_project_mismatch', message: 'again' },
      ],
      can_route_local: true },
    { id: 'no-verdict', uri: 'file:///ws/x.md' },
  ],
};

test('pending URIs are recognised, resolved ones are not', () => {
  assert.equal(isPendingProposalUri(P_URI), true);
  assert.equal(isPendingProposalUri('file:///ws/.memzoi/proposals/resolved/applied/x.md'), false);
  assert.equal(isPendingProposalUri('file:///ws/.memzoi/records/x.md'), false);
  assert.equal(isPendingProposalUri('file:///C:/ws/.memzoi/proposals/pending/x.md'), true);
  assert.equal(stemOf('file:///ws/.memzoi/proposals/pending/a%20b.md'), 'a b');
});

test('proposal rows carry the server verdict, never one of their own', () => {
  const got = proposalRows(LISTING);
  assert.ok(got);
  assert.equal(got.scanning, false);
  assert.deepEqual(got.rows.map((r) => [r.id, r.title, r.canApply, r.blockers?.length, r.canRouteLocal]), [
    ['mem_2026_07_06_auth_001', 'Protected routes: validate sessions', true, 0, false],
    ['mem-gated', 'Keep my notes', false, 3, true],
  ]);
  assert.equal(proposalRows({ error: { code: 'x', message: 'y' } }), undefined);
  assert.equal(proposalRows({ proposals: [] }), undefined); // no `scanning`: not this server's answer
  assert.equal(proposalRows(undefined), undefined);
});

test('a gate-blocked packet (warnings only) counts as blocked, shows every reason and gets no Apply', () => {
  const [ready, gated] = proposalRows(LISTING)!.rows;
  assert.deepEqual(countInbox([ready, gated]), { pending: 2, blocked: 1, uncertain: 0 });
  assert.equal(contextValue(ready), 'memzoi.proposal.ready');
  assert.equal(contextValue(gated), 'memzoi.proposal.blocked.routable');
  assert.equal(contextValue({ ...gated, canRouteLocal: false }), 'memzoi.proposal.blocked');
  assert.deepEqual(describeItem(gated), {
    label: 'Keep my notes', description: 'create · mem-gated · blocked: sensitivity_not_repo_safe, scope_project_mismatch' });
  assert.deepEqual(describeItem(ready), { label: 'Protected routes: validate sessions', description: 'create · mem_2026_07_06_auth_001' });
  const tip = tooltipOf(gated);
  assert.match(tip, /Can it be applied\? no: blocked by/);
  assert.match(tip, /• sensitivity_not_repo_safe: sensitivity local-only is not repo-safe/);
  assert.match(tip, /• scope_project_mismatch: no \[project\] id/);
  assert.equal(iconOf(gated), 'circle-slash');
  assert.equal(iconOf(ready), 'git-pull-request');
  // the reasons are the blocked row's children; a ready row has none
  const reasons = childrenOf({ type: 'row', item: gated });
  assert.deepEqual(reasons.map((n) => n.type === 'reason' && n.blocker.code),
    ['sensitivity_not_repo_safe', 'scope_project_mismatch', 'scope_project_mismatch']);
  assert.deepEqual(childrenOf({ type: 'row', item: ready }), []);
});

const diags: DiagnosticSummary[] = [
  { uri: P_URI, code: 'credential_token', source: 'memzoi', severity: 'error', message: 'secret' },
  { uri: 'file:///ws/other.md', code: 'ledger_uncertain', source: 'markdownlint', severity: 'warning', message: 'not ours' },
  { uri: 'file:///ws/.memzoi/records/r.md', code: 'ledger_uncertain', source: 'memzoi', severity: 'warning',
    message: 'change 7 could not be classified', data: { change_id: 7 } },
  { uri: 'file:///ws/.memzoi/records/s.md', code: 'ledger_uncertain', source: 'memzoi', severity: 'warning',
    message: 'change 7 could not be classified', data: { changeId: '7' } },
];

test('uncertain rows: one per distinct change of the ledger_uncertain diagnostics', () => {
  const rows = uncertainRows(diags);
  assert.deepEqual(rows.map((r) => [r.kind, r.id, r.changeId]), [['uncertain', '7', '7']]);
  assert.equal(changeIdOf(diags[2]), '7');
  assert.equal(changeIdOf(diags[0]), undefined);
  assert.equal(describeItem(rows[0]).label, 'Change 7');
  assert.equal(contextValue(rows[0]), 'memzoi.uncertain');
  const d = (uri: string, message: string): DiagnosticSummary => ({ uri, code: 'ledger_uncertain', source: 'memzoi', severity: 'warning', message });
  const noId = uncertainRows([
    d('file:///ws/.memzoi/records/a.md', 'change aaa uncertain'),
    d('file:///ws/.memzoi/records/a.md', 'change bbb uncertain'),
    d('file:///ws/.memzoi/records/a.md', 'change aaa uncertain'),
  ]);
  assert.deepEqual(noId.map((r) => [r.id, r.title, r.changeId]), [
    ['a', 'change aaa uncertain', undefined],
    ['a', 'change bbb uncertain', undefined],
  ]);
});

test('status bar text and tooltip follow the server counts', () => {
  const s = statusBarText({ pending: 2, blocked: 1, uncertain: 0 });
  assert.equal(s.text, 'Memzoi $(inbox) 2 $(circle-slash) 1');
  assert.equal(s.tooltip, 'Memzoi: 2 pending proposals, 1 blocked (cannot be applied now)');
  const u = statusBarText({ pending: 0, blocked: 0, uncertain: 3 });
  assert.equal(u.text, 'Memzoi $(inbox) 0 $(circle-slash) 0 $(warning) 3');
  assert.match(u.tooltip, /3 uncertain changes to recover/);
});

test('"starting…" ends when the ready server has nothing left to scan, not only at a "scanned" line', () => {
  // No .memzoi at the workspace root: no scan ever runs, so no "scanned" line ever comes.
  assert.equal(startupOver({ ready: true, listing: { scanning: false }, scannedLine: false }), true);
  assert.equal(startupOver({ ready: true, listing: { scanning: true }, scannedLine: false }), false);
  // Before "memzoi-lsp ready" the server may not have registered the projects yet: not over.
  assert.equal(startupOver({ ready: false, listing: { scanning: false }, scannedLine: false }), false);
  // A server without memzoi.proposals.list: its first "scanned" line, as before.
  assert.equal(startupOver({ ready: true, scannedLine: false }), false);
  assert.equal(startupOver({ ready: true, scannedLine: true }), true);
});

const RESIDENT = {
  scopes: [{ scope: 'project', path: '/w/.zuno/RULES.md', uri: 'file:///w/.zuno/RULES.md' }],
  candidates: [
    { id: 'mem_1', scope: 'project', action: 'add', content: 'Run make\nlint.', status: 'pending', target_path: '/w/.zuno/RULES.md', decidable: true },
    { id: 'mem_2', scope: 'project', action: 'remove', content: null, locator: 'tabs', status: 'uncertain',
      target_path: '/w/.zuno/RULES.md', decidable: false, diagnostic: 'choose a recovery with `memzoi resident reconcile --recover mem_2 …`' },
    { id: 'mem_3', scope: 'global', action: 'add', content: 'x', status: 'applied', target_path: '/h/MEMORY.md', decidable: false },
    { id: 'mem_4', scope: 'project', action: 'add', content: 'y', status: 'failed', target_path: '/w/.zuno/RULES.md', decidable: true },
  ],
};

test('resident rows: context values by state, buttons only where the server says a decision or undo applies', () => {
  const rows = residentRows(RESIDENT);
  assert.deepEqual(rows.map((r) => [r.id, r.title, r.uri, r.status, contextValue(r)]), [
    ['mem_1', 'Run make lint.', 'file:///w/.zuno/RULES.md', 'pending', 'memzoi.resident.pending.decidable'],
    ['mem_2', 'tabs', 'file:///w/.zuno/RULES.md', 'uncertain', 'memzoi.resident.uncertain'],
    // the newest applied candidate of its file is listed with Undo (issue 28)
    ['mem_3', 'x', 'file:///h/MEMORY.md', 'applied', 'memzoi.resident.applied.undoable'],
    ['mem_4', 'y', 'file:///w/.zuno/RULES.md', 'failed', 'memzoi.resident.failed.decidable'],
  ]);
  assert.deepEqual(describeItem(rows[0]), { label: 'Run make lint.', description: 'project · add' });
  assert.equal(describeItem(rows[1]).description, 'project · remove · uncertain: needs recovery');
  assert.match(tooltipOf(rows[1]), /--recover mem_2/);
  assert.equal(iconOf(rows[1]), 'warning');
  // an older server without `decidable`: no Approve/Reject buttons rather than ones the core may refuse
  assert.equal(contextValue(residentRows({ candidates: [{ ...RESIDENT.candidates[0], decidable: undefined }] })[0]),
    'memzoi.resident.pending');
  assert.deepEqual(countInbox(rows), { pending: 0, blocked: 0, uncertain: 0 });
  assert.deepEqual(residentRows({ error: { code: 'x', message: 'y' } }), []);
  assert.deepEqual(residentRows(undefined), []);
});

test('localRows lists pending local candidates from memzoi.local.list', () => {
  const answer = {
    candidates: [
      { id: 'local-a-1', title: 'Use  the lock', body: 'Take RefreshLock.', reason: 'seen twice', confidence: 0.8, actor: 'codex', root: '/w', state: 'pending' },
      { id: 'local-b-2', title: 'Done', root: '/w', state: 'applied' },
      { title: 'no id', root: '/w' },
    ],
  };
  const rows = localRows(answer);
  assert.deepEqual(rows.map((r) => [r.kind, r.id, r.title, r.uri, r.root, r.reason]), [
    ['local', 'local-a-1', 'Use the lock', 'file:///w/.memzoi', '/w', 'seen twice'],
  ]);
  assert.deepEqual(describeItem(rows[0]), { label: 'Use the lock', description: 'local memory · confidence 0.8 · by codex' });
  assert.equal(contextValue(rows[0]), 'memzoi.local');
  assert.deepEqual(countInbox(rows), { pending: 0, blocked: 0, uncertain: 0 });
  assert.deepEqual(localRows({ error: { code: 'x', message: 'y' } }), []);
  assert.deepEqual(localRows(undefined), []);
});

test('the tree: proposals and uncertain changes on top, then a Resident memory and a Local memory section', () => {
  const items: InboxItem[] = [
    ...proposalRows(LISTING)!.rows, ...uncertainRows(diags), ...residentRows(RESIDENT),
    ...localRows({ candidates: [{ id: 'local-a', title: 'T', root: '/w' }] }),
  ];
  const top = inboxTree(items);
  assert.deepEqual(top.map((n) => (n.type === 'section' ? `section:${n.label}` : n.type === 'row' ? n.item.id : '?')), [
    'mem_2026_07_06_auth_001', 'mem-gated', '7', 'section:Resident memory', 'section:Local memory',
  ]);
  const resident = top[3];
  assert.deepEqual(childrenOf(resident).map((n) => n.type === 'row' && n.item.id), ['mem_1', 'mem_2', 'mem_3', 'mem_4']);
  // no empty sections
  assert.deepEqual(inboxTree(proposalRows(LISTING)!.rows).map((n) => n.type), ['row', 'row']);
});

test('reflection jobs are rows of the resident section, and a candidate links to the job that proposed it', () => {
  const state = {
    files: [{ scope: 'global', path: '/h/MEMORY.md' }, { scope: 'project', path: '/w/.zuno/RULES.md' }],
    memory_candidates: [{ id: 'mem_1', job: 'reflection_a' }, { id: 'mem_4', job: null }],
    reflection_jobs: [
      { id: 'reflection_a', source_message_id: 'msg_7', trigger: 'periodic', status: 'completed', error: null,
        time_created: 0, outcome: { status: 'completed', candidates: ['mem_1'] } },
      { id: 'reflection_b', source_message_id: 'msg_9', trigger: 'recovery', status: 'failed', error: 'timed out',
        outcome: { status: 'failed', kind: 'timeout', error: 'timed out', candidates: [] } },
      { nonsense: true },
    ],
  };
  const jobs = reflectionRows(state);
  assert.deepEqual(jobs.map((r) => [r.id, r.job, r.status, r.uri, contextValue(r), iconOf(r)]), [
    ['reflection_a', 'reflection_a', 'completed', 'file:///w/.zuno/RULES.md', 'memzoi.reflection.completed', 'sparkle'],
    ['reflection_b', 'reflection_b', 'failed', 'file:///w/.zuno/RULES.md', 'memzoi.reflection.failed', 'warning'],
  ]);
  assert.equal(describeItem(jobs[0]).description, 'completed · periodic · 1 candidate');
  assert.match(tooltipOf(jobs[1]), /timed out/);
  const linked = linkJobs(residentRows(RESIDENT), state);
  assert.equal(linked.find((r) => r.id === 'mem_1')?.job, 'reflection_a');
  assert.equal(linked.find((r) => r.id === 'mem_4')?.job, undefined);
  assert.match(tooltipOf(linked.find((r) => r.id === 'mem_1')!), /Proposed by reflection job reflection_a/);
  const tree = inboxTree([...linked, ...jobs]);
  const section = tree.find((n) => n.type === 'section' && n.id === 'resident');
  assert.ok(section && section.type === 'section');
  assert.deepEqual(section.children.filter((i) => i.kind === 'reflection').map((i) => i.id), ['reflection_a', 'reflection_b']);
  assert.deepEqual(reflectionRows({ error: 'x' }), []);
});

// D1 (newuser5): with MEMZOI_HOME read-only or full the server refuses the resident, local and checkpoint
// listings; the inbox dropped those sections (a pending candidate vanished, the status bar read as an all-clear).
const RO = 'the resident candidate database /home/u/.memzoi/resident.db cannot be written: the file system is read-only; remount it read-write or set MEMZOI_HOME to a writable folder';

test('a section whose listing was refused stays, its first row saying it cannot be read, why and the fix', () => {
  const proposal: InboxItem = { kind: 'proposal', id: 'mem_a', title: 'A', uri: 'file:///ws/.memzoi/proposals/pending/mem_a.md', canApply: true };
  const tree = inboxTree([proposal], [], { resident: `Error: ${RO}`, local: 'local database refused' });
  assert.deepEqual(tree.map((n) => (n.type === 'section' ? n.id : n.type)), ['row', 'resident', 'local']);
  const resident = tree[1];
  const [first] = childrenOf(resident);
  assert.equal(first.type, 'unreadable');
  assert.equal(nodeId(first), 'unreadable:resident');
  const row = unreadableRow('resident', first.type === 'unreadable' ? first.message : '');
  assert.equal(row.label, 'cannot be read');
  assert.equal(row.description, RO);
  assert.match(row.tooltip, /^Resident memory cannot be read: .*remount it read-write or set MEMZOI_HOME/);
  // a listing that answered shows no such row
  assert.deepEqual(inboxTree([proposal]).map((n) => n.type), ['row']);
});

test('the status bar says a section cannot be read rather than counting it as nothing waiting', () => {
  const counts = { pending: 1, blocked: 0, uncertain: 0 };
  const { text, tooltip } = statusBarText(counts, { resident: RO });
  assert.match(text, /\$\(error\)/);
  assert.match(tooltip, /Resident memory cannot be read \(see the Memory Inbox\)/);
  assert.doesNotMatch(statusBarText(counts).text, /\$\(error\)/);
});
