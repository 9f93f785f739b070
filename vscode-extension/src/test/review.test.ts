import assert from 'node:assert/strict';
import { test } from 'node:test';
import { residentRows, residentUsage, usageText } from '../logic/inbox';
import { contextValue, describeItem, inboxTree } from '../logic/inboxView';
import { fileChange, isStale, PREVIEW_OF, staleNotice, previewArg, previewFiles, previewUnsupported, reviewQuestion, touchedOf, withPreviewed,
  writeMessage } from '../logic/review';

const ROOT = 'file:///ws';
const PREVIEW = {
  operation: 'apply', summary: 's', reason: null,
  files: [
    { path: '.memzoi/records/lint.md', uri: `${ROOT}/.memzoi/records/lint.md`, before: null, after: 'new' },
    { path: '.memzoi/proposals/pending/mem_a.md', uri: `${ROOT}/.memzoi/proposals/pending/mem_a.md`, before: 'old', after: null },
    { path: '.memzoi/records/old.md', uri: `${ROOT}/.memzoi/records/old.md`, before: 'a', after: 'b' },
  ],
};

test('every write with a preview is reviewed; reject and undo have none', () => {
  assert.equal(PREVIEW_OF['memzoi.apply'], 'apply');
  assert.equal(PREVIEW_OF['memzoi.reattest'], 'reattest');
  assert.equal(PREVIEW_OF['memzoi.resident.approve'], 'approve');
  assert.equal(PREVIEW_OF['memzoi.reject'], undefined);
});

test('the Apply/Cancel question names the target and lists every file the change writes', () => {
  const files = previewFiles(PREVIEW);
  const q = reviewQuestion('memzoi.apply', { uri: `${ROOT}/.memzoi/proposals/pending/mem_a.md`, title: 'Lint before pushing' }, files, [ROOT]);
  assert.equal(q.message, 'Apply “Lint before pushing” (.memzoi/proposals/pending/mem_a.md)?');
  assert.equal(q.detail, 'It writes:\ncreated: .memzoi/records/lint.md\ndeleted: .memzoi/proposals/pending/mem_a.md\nmodified: .memzoi/records/old.md');
  const r = reviewQuestion('memzoi.resident.approve', { uri: `${ROOT}/.zuno/RULES.md`, title: 'Tabs only', candidateId: 'c1' }, [], [ROOT], false);
  assert.equal(r.message, 'Approve resident-memory candidate “Tabs only” in .zuno/RULES.md?');
  assert.match(r.detail, /no diff/);
});

test('a file is worded by the server\'s change, as the CLI words it; absent before and after is unchanged', () => {
  const files = previewFiles({ files: [
    { path: 'gone.md', before: null, after: null, change: 'unchanged' },
    { path: 'same.md', before: 'a', after: 'a', change: 'unchanged' },
    { path: 'old.md', before: 'a', after: null, change: 'deleted' },
    { path: 'new.md', before: null, after: 'b', change: 'created' },
  ] });
  assert.deepEqual(files.map(fileChange), ['unchanged', 'unchanged', 'deleted', 'created']);
  const q = reviewQuestion('memzoi.apply', { uri: `${ROOT}/gone.md` }, files, [ROOT]);
  assert.equal(q.detail, 'It writes:\nunchanged: gone.md\nunchanged: same.md\ndeleted: old.md\ncreated: new.md');
  // an older server sends no word: read from the two sides, in the same words
  assert.deepEqual(previewFiles({ files: [{ path: 'x', before: null, after: null }, { path: 'y', before: 'a', after: null }] })
    .map(fileChange), ['unchanged', 'deleted']);
});

test('touched files: deleted where the preview has no after', () => {
  assert.deepEqual(touchedOf(previewFiles(PREVIEW)).map((t) => t.deleted), [false, true, false]);
  assert.deepEqual(previewFiles({ files: 'x' }), []);
});

test('an older server without a preview of the operation is told apart from a real refusal', () => {
  assert.equal(previewUnsupported('`operation` is one of apply, supersede, tombstone, materialize'), true);
  assert.equal(previewUnsupported('applying the proposal is blocked: scope_project_mismatch'), false);
});

test('the message after a write: what happened and to what first, ids after', () => {
  const withServer = writeMessage('memzoi.apply', undefined, { message: 'Applied "Lint" -> records/lint.md\nmore', detail: 'change c1', change_id: 'c1' });
  assert.equal(withServer?.text, 'Applied "Lint" -> records/lint.md');
  assert.match(withServer?.detail ?? '', /change c1/);
  const built = writeMessage('memzoi.apply', { uri: `${ROOT}/.memzoi/proposals/pending/mem_a.md`, title: 'Lint' },
    { change_id: 'chg_0123456789abcdef', status: 'applied', files: [{ path: '.memzoi/records/lint.md', before: 'absent', after: 'present' },
      { path: '.memzoi/proposals/pending/mem_a.md', before: 'present', after: 'absent' }] }, [ROOT]);
  assert.equal(built?.text, 'Applied “Lint” -> .memzoi/records/lint.md');
  assert.doesNotMatch(built?.text ?? '', /chg_/);
  assert.match(built?.detail ?? '', /chg_0123456789abcdef/);
  const resident = writeMessage('memzoi.resident.reject', { uri: `${ROOT}/.zuno/RULES.md`, title: 'Tabs only' }, { id: 'c1', status: 'rejected' }, [ROOT]);
  assert.equal(resident?.text, 'Rejected “Tabs only”');
  const untitled = writeMessage('memzoi.reattest', { uri: `${ROOT}/.memzoi/records/x.md` }, { change_id: 'c', status: 'applied',
    files: [{ path: '.memzoi/records/x.md', before: 'present', after: 'present' }] }, [ROOT]);
  assert.equal(untitled?.text, 'Re-attested .memzoi/records/x.md');
  assert.equal(writeMessage('memzoi.search', undefined, [{ id: 'x' }]), undefined);
  const undone = writeMessage('memzoi.undo', { changeId: 'chg_0123456789abcdef' }, { change_id: 'chg_0123456789abcdef', status: 'undone',
    operation: 'apply', files: [{ path: '.memzoi/records/lint.md', before: 'present', after: 'absent' },
      { path: '.memzoi/proposals/pending/mem_a.md', before: 'absent', after: 'present' }] });
  assert.equal(undone?.text, 'Undone: the apply (change chg_01234567) -> .memzoi/proposals/pending/mem_a.md');
});

const LIST = {
  scopes: [{ scope: 'project', path: '/ws/.zuno/RULES.md', uri: `${ROOT}/.zuno/RULES.md`, cap: 10, used: 9, usage: '90%', entries: 1 }],
  candidates: [
    { id: 'p1', scope: 'project', action: 'add', content: 'Tabs only', status: 'pending', target_path: '/ws/.zuno/RULES.md', decidable: true },
    { id: 'a2', scope: 'project', action: 'add', content: 'Newest', status: 'applied', target_path: '/ws/.zuno/RULES.md', time_applied: Date.UTC(2026, 11, 4, 23, 5) },
    { id: 'a1', scope: 'project', action: 'add', content: 'Older', status: 'applied', target_path: '/ws/.zuno/RULES.md', time_applied: 1 },
  ],
};

test('resident rows: pending ones to decide, and the newest applied one of each file with Undo', () => {
  const rows = residentRows(LIST);
  assert.deepEqual(rows.map((r) => [r.id, contextValue(r)]), [['p1', 'memzoi.resident.pending.decidable'], ['a2', 'memzoi.resident.applied.undoable']]);
  assert.equal(rows[1].when, '2026-12-04 23:05 UTC');
  assert.match(describeItem(rows[1]).description, /applied 2026-12-04 23:05 UTC/);
});

test('cap usage: from the listing or memzoi.residentStatus, shown on the Resident memory header', () => {
  const usage = residentUsage(LIST);
  assert.deepEqual(usage, [{ uri: `${ROOT}/.zuno/RULES.md`, scope: 'project', used: 9, cap: 10, entries: 1 }]);
  assert.equal(usageText(usage[0]), 'project 9/10 chars (90%), 1 entry');
  assert.deepEqual(residentUsage({ files: [{ uri: 'file:///g/MEMORY.md', used: 0, cap: 100, entries: [] }] })[0].entries, 0);
  const header = inboxTree([], usage)[0];
  assert.equal(header.type === 'section' && header.usage, 'project 9/10 chars (90%), 1 entry');
  assert.deepEqual(inboxTree([], []), []);
});

test('the preview of a resident edit carries its content; a removal its scope and locator', () => {
  assert.equal(PREVIEW_OF['memzoi.resident.edit'], 'approve');
  assert.equal(PREVIEW_OF['memzoi.resident.remove'], 'remove_entry');
  assert.deepEqual(previewArg('approve', { uri: 'file:///r/.zuno/RULES.md', candidate_id: 'mem_1', content: 'Run make lint.' }),
    { operation: 'approve', uri: 'file:///r/.zuno/RULES.md', content: 'Run make lint.', candidateId: 'mem_1', candidate_id: 'mem_1' });
  assert.deepEqual(previewArg('remove_entry', { scope: 'project', locator: 'lint', actor: 'x' }),
    { operation: 'remove_entry', scope: 'project', locator: 'lint' });
});

test('the write carries the fingerprint of the preview shown, and a stale refusal is told apart', () => {
  const arg = { uri: `${ROOT}/.memzoi/proposals/pending/mem_a.md` };
  assert.deepEqual(withPreviewed(arg, { ...PREVIEW, previewed: 'mzp1.abc' }), { ...arg, previewed: 'mzp1.abc' });
  assert.deepEqual(withPreviewed(arg, PREVIEW), arg); // an older server: no fingerprint, the write as before
  assert.deepEqual(withPreviewed(arg, undefined), arg);
  assert.deepEqual(withPreviewed(arg, { previewed: 42 }), arg);
  assert.equal(isStale('preview_stale'), true);
  assert.equal(isStale('unsaved_changes'), false);
  assert.equal(isStale(undefined), false);
});

test('a stale refusal is told once, by its own notice naming the files (no error besides)', () => {
  const message = '.memzoi/proposals/pending/a.md: changed since the preview was shown, so the apply was refused and '
    + 'nothing was written; review the new preview and decide again\n(more)';
  assert.equal(staleNotice('preview_stale', message),
    'Memzoi: .memzoi/proposals/pending/a.md: changed since the preview was shown, so the apply was refused and '
    + 'nothing was written; review the new preview and decide again');
  assert.equal(staleNotice('preview_stale', ''), 'Memzoi: the files changed since the preview; nothing was written.');
  assert.equal(staleNotice('unsaved_changes', message), undefined);
  assert.equal(staleNotice(undefined, message), undefined);
});
