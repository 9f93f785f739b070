import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandPath, isFailure, locateServer, type LocateInput, whichOnPath } from '../logic/serverLocator';

function input(files: string[], over: Partial<LocateInput> = {}): LocateInput {
  const set = new Set(files);
  return {
    workspaceFolders: ['/ws'],
    envPath: '/usr/local/bin:/usr/bin',
    home: '/home/u',
    platform: 'linux',
    isExecutable: (p) => set.has(p),
    ...over,
  };
}

test('memzoi-lsp on PATH is used when no setting is given', () => {
  const r = locateServer(input(['/usr/bin/memzoi-lsp']));
  assert.deepEqual(r, { command: '/usr/bin/memzoi-lsp', args: [], source: 'PATH' });
});

test('the first PATH entry wins', () => {
  const r = locateServer(input(['/usr/bin/memzoi-lsp', '/usr/local/bin/memzoi-lsp']));
  assert.ok(!isFailure(r));
  assert.equal(r.command, '/usr/local/bin/memzoi-lsp');
});

test('server.path wins over pythonPath and PATH, relative to the workspace folder', () => {
  const r = locateServer(
    input(['/ws/.venv/bin/memzoi-lsp', '/usr/bin/python3', '/usr/bin/memzoi-lsp'], {
      serverPath: '.venv/bin/memzoi-lsp',
      pythonPath: 'python3',
      extraArgs: ['--log-level', 'debug'],
    }),
  );
  assert.deepEqual(r, { command: '/ws/.venv/bin/memzoi-lsp', args: ['--log-level', 'debug'], source: 'server.path' });
});

test('pythonPath runs the module', () => {
  const r = locateServer(input(['/usr/bin/python3'], { pythonPath: 'python3' }));
  assert.deepEqual(r, { command: '/usr/bin/python3', args: ['-m', 'memzoi_lsp'], source: 'server.pythonPath' });
});

test('a server.path that is not executable is an error naming the setting, not a silent fallback', () => {
  const r = locateServer(input(['/usr/bin/memzoi-lsp'], { serverPath: '~/nowhere/memzoi-lsp' }));
  assert.ok(isFailure(r));
  assert.match(r.error, /memzoi\.server\.path/);
  assert.match(r.error, /~\/nowhere\/memzoi-lsp/);
});

test('a bad pythonPath is an error naming the setting', () => {
  const r = locateServer(input([], { pythonPath: '/opt/py/bin/python' }));
  assert.ok(isFailure(r));
  assert.match(r.error, /memzoi\.server\.pythonPath/);
  assert.match(r.fix, /Python interpreter/);
});

test('nothing found: the message says what is missing and how to fix it', () => {
  const r = locateServer(input([]));
  assert.ok(isFailure(r));
  assert.match(r.error, /memzoi-lsp/);
  assert.match(r.fix, /memzoi\.server\.path/);
});

test('blank settings are ignored', () => {
  const r = locateServer(input(['/usr/bin/memzoi-lsp'], { serverPath: '  ', pythonPath: '' }));
  assert.ok(!isFailure(r));
  assert.equal(r.source, 'PATH');
});

test('expandPath handles ~, ${userHome} and ${workspaceFolder}', () => {
  const inp = { workspaceFolders: ['/ws'], home: '/home/u' };
  assert.equal(expandPath('~/bin/x', inp), '/home/u/bin/x');
  assert.equal(expandPath('${userHome}/bin/x', inp), '/home/u/bin/x');
  assert.equal(expandPath('${workspaceFolder}/.venv/bin/x', inp), '/ws/.venv/bin/x');
  assert.equal(expandPath('tools/x', inp), '/ws/tools/x');
  assert.equal(expandPath('memzoi-lsp', inp), 'memzoi-lsp');
});

test('whichOnPath tries Windows suffixes', () => {
  const found = whichOnPath('memzoi-lsp', {
    envPath: 'C:\\py\\Scripts',
    platform: 'win32',
    isExecutable: (p) => p.endsWith('memzoi-lsp.exe'),
  });
  assert.ok(found?.endsWith('memzoi-lsp.exe'));
});

test('the bundled server runs with the chosen interpreter, PYTHONPATH on the bundle', () => {
  const base = { workspaceFolders: ['/ws'], envPath: '/usr/bin', home: '/home/u', platform: 'linux',
    isExecutable: (p: string) => ['/usr/bin/python3', '/opt/py/bin/python'].includes(p) };
  assert.deepEqual(locateServer({ ...base, bundledLibs: '/ext/bundled/libs' }),
    { command: '/usr/bin/python3', args: ['-m', 'memzoi_lsp'], source: 'bundled', env: { PYTHONPATH: '/ext/bundled/libs' } });
  assert.equal((locateServer({ ...base, bundledLibs: '/ext/bundled/libs', interpreter: '/opt/py/bin/python' }) as { command: string }).command,
    '/opt/py/bin/python');
  assert.ok(isFailure(locateServer({ ...base, bundledLibs: '/ext/bundled/libs', interpreter: '/nope/python' })));
  // memzoi.server.path still overrides the bundle
  assert.equal((locateServer({ ...base, bundledLibs: '/b', serverPath: '/usr/bin/python3' }) as { source: string }).source, 'server.path');
});
