import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  argsHaveReason,
  buildArguments,
  COMMANDS,
  resolveServerCommand,
  specById,
  specForServerCommand,
  validateReason,
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
  assert.equal(specById('memzoi.reject')?.reason, 'required');
  assert.equal(specById('memzoi.supersede')?.reason, 'required');
  assert.equal(specById('memzoi.tombstone')?.reason, 'required');
  assert.equal(specById('memzoi.apply')?.reason, undefined);
});

test('the first advertised server command is used', () => {
  const spec = specById('memzoi.rebuild')!;
  assert.equal(resolveServerCommand(spec, ['memzoi.rebuildIndex', 'memzoi.rebuild']), 'memzoi.rebuild');
  assert.equal(resolveServerCommand(spec, ['memzoi.rebuildIndex']), 'memzoi.rebuildIndex');
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
  assert.deepEqual(buildArguments({ query: 'auth' }), [{ query: 'auth' }]);
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
