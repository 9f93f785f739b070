// Maps VS Code settings (section `memzoi`) to the server's settings object. Pure logic; the keys mirror
// `memzoi_lsp/settings.py` (severity, disabled, debounceMs, logLevel, logToClient).

/** Reads one key of the `memzoi` configuration section (e.g. `get('debounceMs')`). */
export type ConfigGetter = (key: string) => unknown;

/** The server's settings as sent in `initializationOptions` and answered to `workspace/configuration`. */
export interface ServerSettings {
  severity: Record<string, string>;
  disabled: string[];
  debounceMs: number;
  logLevel: string;
  logToClient: boolean;
}

/** Keys of the `memzoi` section that the server reads; a change to any of them is sent to the server. */
export const SERVER_SETTING_KEYS = ['severity', 'disabled', 'debounceMs', 'logLevel', 'logToClient'] as const;

/** Keys that only the client reads and whose change needs a server restart. */
export const RESTART_SETTING_KEYS = ['server.path', 'server.pythonPath', 'server.args', 'interpreter', 'materializationGlobs'] as const;

const SEVERITIES = new Set(['error', 'warning', 'information', 'hint']);
const LOG_LEVELS = new Set(['debug', 'info', 'warning', 'error']);

/**
 * Builds the server settings from the configuration, dropping malformed values (the server validates
 * again and reports what it ignores; the client only makes sure it sends JSON of the right shape).
 */
export function buildServerSettings(get: ConfigGetter): ServerSettings {
  const severity: Record<string, string> = {};
  const rawSeverity = get('severity');
  if (rawSeverity && typeof rawSeverity === 'object' && !Array.isArray(rawSeverity)) {
    for (const [code, level] of Object.entries(rawSeverity as Record<string, unknown>)) {
      if (typeof level === 'string' && SEVERITIES.has(level)) severity[code] = level;
    }
  }
  const rawDisabled = get('disabled');
  const disabled = Array.isArray(rawDisabled) ? rawDisabled.filter((c): c is string => typeof c === 'string') : [];
  const rawDebounce = get('debounceMs');
  const debounceMs =
    typeof rawDebounce === 'number' && Number.isFinite(rawDebounce) ? Math.min(10000, Math.max(0, Math.round(rawDebounce))) : 200;
  const rawLevel = get('logLevel');
  const logLevel = typeof rawLevel === 'string' && LOG_LEVELS.has(rawLevel) ? rawLevel : 'info';
  const logToClient = get('logToClient') !== false;
  return { severity, disabled: [...new Set(disabled)], debounceMs, logLevel, logToClient };
}
