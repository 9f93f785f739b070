import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  argsHaveReason,
  buildArguments,
  COMMANDS,
  describeResult,
  historyChanges,
  previewArgument,
  searchHits,
  resolveServerCommand,
  specById,
  specForServerCommand,
  validateReason,
  withField,
  withReason,
} from '../logic/commands';

test('command ids are unique, namespaced and titled', () => {
  const ids = COMMANDS.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const c of COMMANDS) {
    assert.match(c.id, /^memzoi\.[A-Za-z.]+$/);
    assert.ok(c.title.length > 0);
    assert.ok(c.server.length > 0);
  }
});

test('reject, supersede and tombstone require a reason; apply does not', () => {
  assert.equal(specById('memzoi.palette.reject')?.reason, 'required');
  assert.equal(specById('memzoi.palette.supersede')?.reason, 'required');
  assert.equal(specById('memzoi.palette.tombstone')?.reason, 'required');
  assert.equal(specById('memzoi.palette.apply')?.reason, undefined);
});

test('materialization has plan, decide and apply steps on the candidate', () => {
  for (const id of ['memzoi.palette.materializePlan', 'memzoi.palette.materializeDecide', 'memzoi.palette.materialize']) {
    assert.equal(specById(id)?.target, 'candidate');
  }
  assert.ok(specById('memzoi.palette.materializeDecide')?.confirm);
});

test('the first advertised server command is used', () => {
  const spec = specById('memzoi.palette.rebuild')!;
  assert.equal(resolveServerCommand(spec, ['memzoi.rebuild']), 'memzoi.rebuild');
  assert.equal(resolveServerCommand(spec, ['memzoi.rebuildIndex']), undefined);
  assert.equal(resolveServerCommand(spec, ['other']), undefined);
});

test('server command ids map back to their spec (for reason prompts on code actions)', () => {
  for (const c of COMMANDS) for (const s of c.server) assert.equal(specForServerCommand(s)?.id, c.id);
  assert.equal(specForServerCommand('memzoi.nope'), undefined);
});

test('arguments are one object with only the gathered fields', () => {
  assert.deepEqual(buildArguments({}), [{}]);
  assert.deepEqual(buildArguments({ uri: 'file:///p.md', reason: 'dup' }), [{ uri: 'file:///p.md', reason: 'dup' }]);
  assert.deepEqual(buildArguments({ changeId: '42' }), [{ change_id: '42' }]);
  assert.deepEqual(buildArguments({ changeId: '42', mode: 'accept' }), [{ change_id: '42', mode: 'accept' }]);
  assert.deepEqual(buildArguments({ query: 'auth' }, specById('memzoi.palette.search')), ['auth']);
  assert.deepEqual(buildArguments({}, { args: 'query' }), ['']);
});

test('recover offers exactly the three recovery modes', () => {
  assert.deepEqual(specById('memzoi.palette.recover')?.modes?.map((m) => m.mode), ['restore-before', 'complete-after', 'accept']);
});

test('history results become picker rows', () => {
  const rows = historyChanges([
    { change_id: 'abcdef0123456789', operation: 'apply', status: 'applied', actor: 'rev', applied_at: '2026-07-01T10:00:00.123Z',
      files: [{ path: 'a.md', before: 'absent', after: 'present' }, { path: 'b.md' }], undo_available: true },
    // the server's word per file, as `memzoi history` prints it: absent before and after is unchanged
    { change_id: 'rec', operation: 'recover', status: 'applied', undo_available: false,
      files: [{ path: 'r.md', before: 'present', after: 'present', change: 'modified' },
        { path: 'c.md', before: 'absent', after: 'absent', change: 'unchanged' }] },
    { change_id: 7, status: 'undone', undo_available: false },
    // applied, but a file was edited since: the server says the ledger would refuse the undo
    { change_id: 'fedcba', operation: 'reject', status: 'applied', undo_available: false },
    // an older server without the field: no Undo offered on a guess
    { change_id: 'old', operation: 'apply', status: 'applied' },
  ]);
  assert.deepEqual(rows, [
    { change_id: 'abcdef0123456789', label: 'apply · applied', description: '2026-07-01 10:00:00 · rev · abcdef012345 · undo available',
      detail: 'a.md (absent → present), b.md', undoable: true },
    { change_id: 'rec', label: 'recover · applied', description: 'rec', detail: 'r.md (modified), c.md (unchanged)', undoable: false },
    { change_id: '7', label: 'undone', description: '7', detail: '', undoable: false },
    { change_id: 'fedcba', label: 'reject · applied', description: 'fedcba', detail: '', undoable: false },
    { change_id: 'old', label: 'apply · applied', description: 'old', detail: '', undoable: false },
  ]);
  assert.equal(historyChanges([{ status: 'x' }]), undefined);
  assert.equal(historyChanges({}), undefined);
});

test('search hits are validated', () => {
  assert.deepEqual(searchHits([{ id: 'a', title: 'A', uri: 'file:///a.md' }]), [{ id: 'a', title: 'A', uri: 'file:///a.md' }]);
  assert.equal(searchHits([{ id: 'a' }]), undefined);
  assert.equal(searchHits({}), undefined);
});

test('results are described in one line', () => {
  assert.deepEqual(
    describeResult('Apply Proposal', {
      change_id: 3,
      status: 'applied',
      files: [{ path: '.memzoi/records/x.md', before: 'absent', after: 'present' }],
    }),
    { level: 'info', text: 'Apply Proposal: change 3 applied: .memzoi/records/x.md (absent → present)' },
  );
  assert.deepEqual(describeResult('Reject Proposal…', { error: { code: 'drift', message: 'file changed on disk' } }), {
    level: 'error',
    text: 'Reject Proposal refused: file changed on disk',
  });
  assert.equal(describeResult('Check Workspace', { files_checked: 26, counts: { error: 1, warning: 0 } })?.text, 'Check Workspace: 26 files, 1 errors, 0 warnings');
  assert.equal(describeResult('Search Records…', [1, 2])?.text, 'Search Records: 2 results');
  assert.equal(describeResult('X', null), undefined);
  assert.equal(describeResult('X', { other: 1 }), undefined);
});

test('argsHaveReason recognises object and positional forms, and ignores blank reasons', () => {
  assert.equal(argsHaveReason([{ uri: 'u', reason: 'r' }]), true);
  assert.equal(argsHaveReason([{ uri: 'u', reason: '  ' }]), false);
  assert.equal(argsHaveReason([{ uri: 'u' }]), false);
  assert.equal(argsHaveReason(['u', 'why']), true);
  assert.equal(argsHaveReason(['u']), false);
  assert.equal(argsHaveReason([]), false);
});

test('withReason fills the object argument, else the second positional one', () => {
  assert.deepEqual(withReason([{ uri: 'u' }], 'r'), [{ uri: 'u', reason: 'r' }]);
  assert.deepEqual(withReason(['u'], 'r'), ['u', 'r']);
  assert.deepEqual(withReason(['u', ''], 'r'), ['u', 'r']);
  assert.deepEqual(withReason([], 'r'), [{ reason: 'r' }]);
});

test('reasons: required ones must be non-blank; control characters and huge texts are refused', () => {
  assert.match(validateReason('   ', true) ?? '', /required/);
  assert.equal(validateReason('', false), undefined);
  assert.equal(validateReason('duplicate of an existing record', true), undefined);
  assert.match(validateReason('bad\u0007bell', true) ?? '', /control/);
  assert.match(validateReason('x'.repeat(2001), true) ?? '', /2000/);
});

test('apply, supersede, tombstone and materialize confirmations offer their preview', () => {
  for (const [id, op] of [
    ['memzoi.palette.apply', 'apply'],
    ['memzoi.palette.supersede', 'supersede'],
    ['memzoi.palette.tombstone', 'tombstone'],
    ['memzoi.palette.materialize', 'materialize'],
  ] as const) {
    assert.equal(specById(id)?.preview, op, id);
    assert.ok(specById(id)?.confirm, id);
  }
  // The reason is asked before the confirmation, so a supersede or tombstone preview can carry it.
  assert.equal(specById('memzoi.palette.supersede')?.reason, 'required');
  assert.equal(specById('memzoi.palette.tombstone')?.reason, 'required');
});

test('supersede asks for an optional new title, passed only when given', () => {
  assert.equal(specById('memzoi.palette.supersede')?.newTitle, 'optional');
  assert.equal(specById('memzoi.palette.tombstone')?.newTitle, undefined);
  assert.deepEqual(buildArguments({ uri: 'file:///r.md', reason: 'r', title: '  New name ' }), [{ uri: 'file:///r.md', reason: 'r', title: 'New name' }]);
  assert.deepEqual(buildArguments({ uri: 'file:///r.md', reason: 'r', title: '' }), [{ uri: 'file:///r.md', reason: 'r' }]);
  assert.deepEqual(withField([{ uri: 'u', reason: 'r' }], 'title', 'T'), [{ uri: 'u', reason: 'r', title: 'T' }]);
  assert.deepEqual(withField([], 'title', 'T'), [{ title: 'T' }]);
});

test('a confirmed command with a preview is checked by the server before its confirmation', () => {
  const apply = specById('memzoi.palette.apply')!;
  const offered = ['memzoi.apply', 'memzoi.preview'];
  assert.deepEqual(previewArgument({ uri: 'file:///p.md' }, apply, offered), { uri: 'file:///p.md', operation: 'apply' });
  const supersede = specById('memzoi.palette.supersede')!;
  assert.deepEqual(previewArgument({ uri: 'file:///r.md', reason: 'old', title: ' New ' }, supersede, offered),
    { uri: 'file:///r.md', operation: 'supersede', reason: 'old', title: 'New' });
  // No preview command on the server, no target, or no preview for this command: nothing to ask first.
  assert.equal(previewArgument({ uri: 'file:///p.md' }, apply, ['memzoi.apply']), undefined);
  assert.equal(previewArgument({}, apply, offered), undefined);
  assert.equal(previewArgument({ uri: 'file:///p.md' }, specById('memzoi.palette.undo') ?? {}, offered), undefined);
});
