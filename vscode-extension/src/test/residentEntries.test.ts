import assert from 'node:assert/strict';
import { test } from 'node:test';
import { residentEntries } from '../logic/resident';

test('resident entries for the removal picker carry their scope and file', () => {
  const answer = {
    memory_entries: [{ scope: 'global', content: 'Answer briefly.' }, { scope: 'project', content: 'Use tabs.' },
      { scope: 'project', content: '  ' }, { content: 'no scope' }],
    files: [{ scope: 'project', path: '/r/.zuno/RULES.md' }],
  };
  assert.deepEqual(residentEntries(answer), [
    { scope: 'global', content: 'Answer briefly.' },
    { scope: 'project', content: 'Use tabs.', uri: 'file:///r/.zuno/RULES.md' },
  ]);
  assert.deepEqual(residentEntries({ files: [] }), []);
  assert.deepEqual(residentEntries(null), []);
});
