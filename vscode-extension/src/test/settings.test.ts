import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildServerSettings } from '../logic/settings';

test('defaults when nothing is configured', () => {
  assert.deepEqual(buildServerSettings(() => undefined), {
    severity: {},
    disabled: [],
    debounceMs: 200,
    logLevel: 'info',
    logToClient: true,
  });
});

test('valid values pass through; malformed ones are dropped or clamped', () => {
  const cfg: Record<string, unknown> = {
    severity: { high_entropy_value: 'information', bom: 'loud', pii_detected: 3 },
    disabled: ['bom', 7, 'bom', 'prompt_injection'],
    debounceMs: 99999.4,
    logLevel: 'verbose',
    logToClient: 'yes',
  };
  assert.deepEqual(buildServerSettings((k) => cfg[k]), {
    severity: { high_entropy_value: 'information' },
    disabled: ['bom', 'prompt_injection'],
    debounceMs: 10000,
    logLevel: 'info',
    logToClient: true,
  });
});

test('array severity and negative debounce are rejected', () => {
  const cfg: Record<string, unknown> = { severity: ['error'], debounceMs: -5, logLevel: 'debug', logToClient: false };
  const s = buildServerSettings((k) => cfg[k]);
  assert.deepEqual(s.severity, {});
  assert.equal(s.debounceMs, 0);
  assert.equal(s.logLevel, 'debug');
  assert.equal(s.logToClient, false);
});
