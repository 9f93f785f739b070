import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routingApplyArg, routingLines, routingPreview, routingQuestion } from '../logic/routing';

const PREVIEW = {
  kind: 'import', blocked: true, plan_id: 'import_abc', actor: 'ada', summary: {},
  candidates: [
    { index: 0, destination: 'repo', outcome: 'blocked', reasons: ['repo_subset_blocked'] },
    { index: 1, destination: 'local', outcome: 'create_runtime', route: 'runtime_local' },
    { index: 2, destination: 'repo', outcome: 'duplicate', matches: [{ kind: 'canonical_record', id: 'use-pnpm' }] },
  ],
};

test('each candidate says where it goes or why not, before anything is written', () => {
  const p = routingPreview(PREVIEW);
  assert.ok(p);
  assert.deepEqual(routingLines(p), [
    '[0] repo → blocked repo_subset_blocked',
    '[1] local → create_runtime runtime_local',
    '[2] repo → duplicate canonical_record use-pnpm',
  ]);
  const q = routingQuestion(p, 'manifest.yml');
  assert.equal(q.message, 'Apply the import of manifest.yml: 1 of 3 candidate(s) write? Some candidates are blocked and write nothing.');
  assert.equal(q.detail.split('\n').length, 3);
});

test('apply carries what the preview saw', () => {
  const p = routingPreview(PREVIEW);
  assert.ok(p);
  assert.deepEqual(routingApplyArg('file:///ws/m.yml', p), { uri: 'file:///ws/m.yml', plan_id: 'import_abc', actor: 'ada' });
  const s = routingPreview({ kind: 'session_end', blocked: false, expected_version: 3, candidates: [] });
  assert.ok(s);
  assert.deepEqual(routingApplyArg('file:///ws/s.yml', s), { uri: 'file:///ws/s.yml', expected_version: 3 });
  assert.equal(routingPreview({ files: [] }), undefined);
});

test('a session-end apply carries the preview\'s fingerprint, so a file edited since is refused', () => {
  const s = routingPreview({ kind: 'session_end', blocked: false, expected_version: 0, previewed: 'mzp1.abc', candidates: [] });
  assert.ok(s);
  assert.deepEqual(routingApplyArg('file:///ws/s.yml', s),
    { uri: 'file:///ws/s.yml', expected_version: 0, previewed: 'mzp1.abc' });
  // an older server's preview has none: the apply is sent as before
  const old = routingPreview({ kind: 'session_end', blocked: false, expected_version: 0, previewed: '', candidates: [] });
  assert.ok(old);
  assert.equal('previewed' in routingApplyArg('file:///ws/s.yml', old), false);
});
