// One call at a time: the reload after a write (reload.ts) is asked twice for one change, by the server's
// `memzoi/changed` notification and by the command's own result. Pure logic (no `vscode` import).

/**
 * Wraps the async `task` so that its calls run one at a time, in the order they were made: a call starts once the
 * one before it has settled (resolved or thrown; a failure is returned to its own caller and does not stop the
 * next). Returns the wrapped function; each call's promise settles with that call's own result.
 */
export function serial<A extends unknown[], R>(task: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  let tail: Promise<unknown> = Promise.resolve();
  return (...args: A): Promise<R> => {
    const run = tail.then(() => task(...args));
    tail = run.catch(() => undefined);
    return run;
  };
}
