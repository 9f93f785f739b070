import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildInbox,
  changeIdOf,
  countInbox,
  describeItem,
  type DiagnosticSummary,
  isPendingProposalUri,
  localRows,
  residentRows,
  statusBarText,
  stemOf,
  summarizeProposal,
} from '../logic/inbox';

const PACKET = [
  '---',
  'id: mem_2026_07_06_auth_001',
  'kind: proposal',
  'title: "Protected routes: validate sessions"',
  'status: proposed # still open',
  'proposal:',
  '  action: supersede',
  "  target: 'old-record'",
  '  reason: x',
  'scope:',
  '  kind: project',
  '---',
  '',
  '# Protected routes',
].join('\n');

const P_URI = 'file:///ws/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md';

test('summarizeProposal reads the display fields', () => {
  assert.deepEqual(summarizeProposal(PACKET), {
    id: 'mem_2026_07_06_auth_001',
    title: 'Protected routes: validate sessions',
    status: 'proposed',
    action: 'supersede',
    target: 'old-record',
  });
});

test('summarizeProposal copes with CRLF, a BOM, and nested keys of other mappings', () => {
  const text = '\uFEFF' + PACKET.replace(/\n/g, '\r\n');
  assert.equal(summarizeProposal(text).action, 'supersede');
  assert.equal(summarizeProposal(text).title, 'Protected routes: validate sessions');
  // `kind: project` under scope must not leak into anything
  assert.equal(summarizeProposal(text).status, 'proposed');
});

test('summarizeProposal never throws and returns nothing for non-frontmatter text', () => {
  for (const t of ['', '# hi', '---', '---\n: :\n\t- [\n', '---\ntitle: "unterminated\n---\n', '\u0000\u0001']) {
    assert.doesNotThrow(() => summarizeProposal(t));
  }
  assert.deepEqual(summarizeProposal('# no frontmatter'), {});
  assert.equal(summarizeProposal("---\ntitle: 'it''s'\n---\n").title, "it's");
});

test('pending proposal URIs are recognised, resolved ones are not', () => {
  assert.equal(isPendingProposalUri(P_URI), true);
  assert.equal(isPendingProposalUri('file:///ws/.memzoi/proposals/resolved/applied/x.md'), false);
  assert.equal(isPendingProposalUri('file:///ws/.memzoi/records/x.md'), false);
  assert.equal(isPendingProposalUri('file:///C:/ws/.memzoi/proposals/pending/x.md'), true);
  assert.equal(stemOf('file:///ws/.memzoi/proposals/pending/a%20b.md'), 'a b');
});

const diags: DiagnosticSummary[] = [
  { uri: P_URI, code: 'credential_token', source: 'memzoi', severity: 'error', message: 'secret' },
  { uri: P_URI, code: 'bom', source: 'memzoi', severity: 'warning', message: 'bom' },
  { uri: 'file:///ws/.memzoi/records/r.md', code: 'missing_key', source: 'memzoi', severity: 'error', message: 'm' },
  { uri: 'file:///ws/other.md', code: 'x', source: 'markdownlint', severity: 'error', message: 'not ours' },
  {
    uri: 'file:///ws/.memzoi/records/r.md',
    code: 'ledger_uncertain',
    source: 'memzoi',
    severity: 'warning',
    message: 'change 7 could not be classified',
    data: { change_id: 7 },
  },
  {
    uri: 'file:///ws/.memzoi/records/s.md',
    code: 'ledger_uncertain',
    source: 'memzoi',
    severity: 'warning',
    message: 'change 7 could not be classified',
    data: { changeId: '7' },
  },
];

test('buildInbox lists pending packets (with their blocking errors) then distinct uncertain changes', () => {
  const rows = buildInbox(
    [
      { uri: P_URI, text: PACKET },
      { uri: 'file:///ws/.memzoi/proposals/pending/b.md', text: 'no frontmatter' },
      { uri: 'file:///ws/.memzoi/proposals/resolved/applied/c.md', text: PACKET },
    ],
    diags,
  );
  assert.deepEqual(
    rows.map((r) => [r.kind, r.id, r.blocking, r.changeId]),
    [
      ['proposal', 'b', 0, undefined],
      ['proposal', 'mem_2026_07_06_auth_001', 1, undefined],
      ['uncertain', '7', 0, '7'],
    ],
  );
  assert.equal(rows[0].title, 'b');
  assert.equal(rows[1].action, 'supersede');
});

test('uncertain changes without an id in data: one row per file and message, no change id', () => {
  const d = (uri: string, message: string): DiagnosticSummary => ({ uri, code: 'ledger_uncertain', source: 'memzoi', severity: 'warning', message });
  const rows = buildInbox([], [
    d('file:///ws/.memzoi/records/a.md', 'change aaa uncertain'),
    d('file:///ws/.memzoi/records/a.md', 'change bbb uncertain'),
    d('file:///ws/.memzoi/records/a.md', 'change aaa uncertain'),
  ]);
  assert.deepEqual(rows.map((r) => [r.id, r.title, r.changeId]), [
    ['a', 'change aaa uncertain', undefined],
    ['a', 'change bbb uncertain', undefined],
  ]);
});

test('counts: pending, uncertain, and only memzoi errors as blocking', () => {
  const rows = buildInbox([{ uri: P_URI, text: PACKET }], diags);
  assert.deepEqual(countInbox(rows, diags), { pending: 1, uncertain: 1, blocking: 2 });
});

test('status bar text and tooltip', () => {
  const s = statusBarText({ pending: 1, uncertain: 0, blocking: 2 });
  assert.equal(s.text, 'Memzoi $(inbox) 1 $(error) 2');
  assert.equal(s.tooltip, 'Memzoi: 1 pending proposal, 2 blocking findings (errors)');
  const u = statusBarText({ pending: 0, uncertain: 3, blocking: 1 });
  assert.equal(u.text, 'Memzoi $(inbox) 0 $(warning) 3 $(error) 1');
  assert.match(u.tooltip, /3 uncertain changes to recover/);
});


test('changeIdOf and describeItem', () => {
  assert.equal(changeIdOf(diags[4]), '7');
  assert.equal(changeIdOf(diags[0]), undefined);
  assert.deepEqual(describeItem({ kind: 'proposal', id: 'p', title: 'T', uri: P_URI, action: 'create', blocking: 1 }), {
    label: 'T',
    description: 'create · p · 1 blocking',
  });
  assert.equal(describeItem({ kind: 'uncertain', id: '7', title: 'm', uri: P_URI, blocking: 0 }).label, 'Change 7');
});

test('resident rows: candidates waiting for a decision or a recovery, on their resident file', () => {
  const answer = {
    scopes: [{ scope: 'project', path: '/w/.zuno/RULES.md', uri: 'file:///w/.zuno/RULES.md' }],
    candidates: [
      { id: 'mem_1', scope: 'project', action: 'add', content: 'Run make\nlint.', status: 'pending', target_path: '/w/.zuno/RULES.md' },
      { id: 'mem_2', scope: 'project', action: 'remove', content: null, locator: 'tabs', status: 'uncertain', target_path: '/w/.zuno/RULES.md' },
      { id: 'mem_3', scope: 'global', action: 'add', content: 'x', status: 'applied', target_path: '/h/MEMORY.md' },
    ],
  };
  const rows = residentRows(answer);
  assert.deepEqual(rows.map((r) => [r.id, r.title, r.uri, r.status]), [
    ['mem_1', 'Run make lint.', 'file:///w/.zuno/RULES.md', 'pending'],
    ['mem_2', 'tabs', 'file:///w/.zuno/RULES.md', 'uncertain'],
  ]);
  assert.deepEqual(describeItem(rows[0]), { label: 'Run make lint.', description: 'resident memory · project · add' });
  assert.equal(describeItem(rows[1]).description, 'resident memory · project · remove · uncertain');
  assert.deepEqual(countInbox(rows, []), { pending: 0, uncertain: 0, blocking: 0 });
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
  assert.deepEqual(countInbox(rows, []), { pending: 0, uncertain: 0, blocking: 0 });
  assert.deepEqual(localRows({ error: { code: 'x', message: 'y' } }), []);
  assert.deepEqual(localRows(undefined), []);
});
