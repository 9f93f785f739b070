import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serial } from '../logic/serial';

/** A promise and the function that resolves it: a step the test releases when it wants. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => { open = resolve; });
  return { wait, open };
}

test('a second call starts only after the first one finished, in call order', async () => {
  const events: string[] = [];
  const first = gate();
  const run = serial(async (name: string, hold?: Promise<void>) => {
    events.push(`start ${name}`);
    if (hold) await hold;
    events.push(`end ${name}`);
    return name;
  });
  const a = run('a', first.wait);
  const b = run('b');
  await new Promise((r) => setImmediate(r)); // let every ready microtask and callback run
  assert.deepEqual(events, ['start a'], 'b must wait while a is still running');
  first.open();
  assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  assert.deepEqual(events, ['start a', 'end a', 'start b', 'end b']);
});

test('a failed call is reported to its caller and does not block the next one', async () => {
  const run = serial((fail: boolean) => (fail ? Promise.reject(new Error('refused')) : Promise.resolve('done')));
  const failed = run(true);
  const next = run(false);
  await assert.rejects(failed, /refused/);
  assert.equal(await next, 'done');
});
