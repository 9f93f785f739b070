import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthRefusal, healthSummary, healthTree } from '../logic/health';
import { checkpointRows } from '../logic/inbox';
import { contextValue, describeItem, iconOf, inboxTree, tooltipOf } from '../logic/inboxView';

/** A `memzoi.checkpoints.list` answer: an open current checkpoint, one past its boundary, a closed one. */
const LISTING = {
  projects: [{
    root: '/ws',
    version: 3,
    checkpoints: [
      { id: 'ckpt-aaa', task: 'Auth middleware', title: 'Auth middleware', status: 'open', version: 2,
        actions: ['continue', 'close'], body: 'Stopped at refresh.', retention_decision: { effective_boundary: '2026-07-02T09:00:00Z' } },
      { id: 'ckpt-bbb', task: 'Old task', title: 'Notes', status: 'open', version: 1, actions: ['close'] },
      { id: 'ckpt-ccc', task: 'Done', title: 'Done', status: 'closed', version: 3, actions: [] },
    ],
  }],
};

test('open checkpoints become inbox rows with the actions the server allows', () => {
  const rows = checkpointRows(LISTING);
  assert.deepEqual(rows.map((r) => r.id), ['ckpt-aaa', 'ckpt-bbb']);
  assert.equal(rows[0].title, 'Auth middleware');
  assert.equal(rows[1].title, 'Old task: Notes');
  assert.equal(rows[0].uri, 'file:///ws/.memzoi');
  assert.equal(contextValue(rows[0]), 'memzoi.checkpoint.continuable');
  assert.equal(contextValue(rows[1]), 'memzoi.checkpoint');
  assert.match(describeItem(rows[1]).description, /close only/);
  assert.match(describeItem(rows[0]).description, /v2 · runtime/);
  assert.match(tooltipOf(rows[0]), /never repository truth[\s\S]*Retention boundary: 2026-07-02T09:00:00Z[\s\S]*continue, close/);
  assert.equal(iconOf(rows[0]), 'history');
  const [section] = inboxTree(rows);
  assert.ok(section.type === 'section' && section.id === 'checkpoint' && section.label === 'Session checkpoints');
  assert.deepEqual(checkpointRows({ error: 'x' }), []);
  assert.deepEqual(checkpointRows(undefined), []);
});

test('the memory health tree groups findings and opens each record', () => {
  const answer = {
    projects: [{
      root: '/ws',
      summary: { exact_duplicates: 1, contradictions: 1, stale: 0, expired: 0 },
      duplicates: [{ record_ids: ['dup-a', 'dup-b'], uris: { 'dup-a': 'file:///ws/a.md', 'dup-b': 'file:///ws/b.md' } }],
      contradictions: [{ record_ids: ['on', 'off', 'off-2'], uris: {} }],
      expiring: [{ record_ids: ['soon'], uris: { soon: 'file:///ws/soon.md' }, boundary: '2026-07-05T00:00:00Z' }],
      expired: [], stale: [],
    }],
  };
  const tree = healthTree(answer);
  assert.deepEqual(tree.map((n) => (n.type === 'group' ? n.label : '')), ['Duplicates', 'Contradictions (no winner chosen)', 'Expiring soon']);
  const dup = tree[0].type === 'group' ? tree[0].children[0] : undefined;
  assert.ok(dup && dup.type === 'finding' && dup.children.length === 2);
  assert.deepEqual(dup.children[0], { type: 'record', id: 'dup-a', uri: 'file:///ws/a.md', description: '' });
  const soon = tree[2].type === 'group' ? tree[2].children[0] : undefined;
  assert.deepEqual(soon, { type: 'record', id: 'soon', uri: 'file:///ws/soon.md', description: 'until 2026-07-05T00:00:00Z' });
  assert.equal(healthSummary(answer), '1 duplicate set(s), 1 contradiction set(s), 0 stale, 0 expired');
  assert.deepEqual(healthTree({}), []);
});

test('a refused memory health plan is said in the view, naming the file', () => {
  const said = healthRefusal('.memzoi/records/x.md: record x is not admitted\n(see `memzoi check`)');
  assert.equal(said, 'No maintenance plan: .memzoi/records/x.md: record x is not admitted (see `memzoi check`)');
  assert.match(healthRefusal('  '), /no reason/);
});
