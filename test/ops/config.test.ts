// Configuration: TOOLGATE_* variables and the matching flags, validated with messages that name them;
// the README table is generated from SETTINGS and must not drift.
import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { README, renderConfigTable, withConfigTable } from '../../scripts/config-table.js';
import { ConfigError, flagOf, loadConfig, SETTINGS, type SettingKey } from '../../src/config.js';
import { parseSettingFlags, serveHelp, UsageError } from '../../src/serve.js';

describe('configuration', () => {
  it('defaults: loopback, port 8080, audit and metrics on, rate limit 100 a minute, Redis fails open', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8080);
    expect(c.audit).toBe(true);
    expect(c.auditStdout).toBe(true);
    expect(c.metrics).toBe(true);
    expect(c.rateLimit).toBe(100);
    expect(c.rateLimitWindowMs).toBe(60_000);
    expect(c.redisFailureMode).toBe('open');
  });

  it('a bad variable is named with the values it accepts', () => {
    expect(() => loadConfig({ TOOLGATE_AUDIT: 'maybe' })).toThrow(/TOOLGATE_AUDIT="maybe": accepted values: .*true, false/);
    expect(() => loadConfig({ TOOLGATE_REDIS_FAILURE_MODE: 'sideways' })).toThrow(/TOOLGATE_REDIS_FAILURE_MODE="sideways": accepted values: open, closed/);
    expect(() => loadConfig({ TOOLGATE_PORT: '70000' })).toThrow(/TOOLGATE_PORT="70000": must be at most 65535/);
  });

  it('every problem is reported at once', () => {
    try {
      loadConfig({ TOOLGATE_PORT: 'x', TOOLGATE_METRICS: 'y' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/TOOLGATE_PORT/);
      expect((err as Error).message).toMatch(/TOOLGATE_METRICS/);
    }
  });

  it('never echoes the Redis URL (it may hold a password)', () => {
    expect(() => loadConfig({ TOOLGATE_REDIS_URL: 'http://:hunter2@redis:6379' })).toThrow(/TOOLGATE_REDIS_URL=\(hidden\)/);
    expect(() => loadConfig({ TOOLGATE_REDIS_URL: 'http://:hunter2@redis:6379' })).not.toThrow(/hunter2/);
  });

  it('every setting has a flag derived from its name', () => {
    expect(flagOf('root')).toBe('--root');
    expect(flagOf('maxReadBytes')).toBe('--max-read-bytes');
    expect(flagOf('rateLimitWindowMs')).toBe('--rate-limit-window-ms');
    const flags = (Object.keys(SETTINGS) as SettingKey[]).map(flagOf);
    expect(new Set(flags).size).toBe(flags.length);
    for (const key of Object.keys(SETTINGS) as SettingKey[]) expect(serveHelp()).toContain(flagOf(key));
  });
});

describe('CLI flags', () => {
  it('--root, --port, --host (both forms) become overrides that win over the variables', () => {
    const o = parseSettingFlags(['--root', '/srv/ws', '--port=9090', '--host', '0.0.0.0']);
    expect(o).toEqual({ root: '/srv/ws', port: '9090', host: '0.0.0.0' });
    const c = loadConfig({ TOOLGATE_PORT: '1234', TOOLGATE_ROOT: '/elsewhere' }, o);
    expect(c.port).toBe(9090);
    expect(c.root).toBe('/srv/ws');
  });

  it('switches: bare flag, --no-flag, --flag=value', () => {
    expect(parseSettingFlags(['--allow-absolute', '--no-audit', '--metrics=false', '--audit-stdout', 'no'])).toEqual({
      allowAbsolute: 'true',
      audit: 'false',
      metrics: 'false',
      auditStdout: 'no',
    });
    expect(loadConfig({}, parseSettingFlags(['--no-metrics'])).metrics).toBe(false);
  });

  it('a bad flag value is validated like the variable and names the flag', () => {
    expect(() => loadConfig({}, parseSettingFlags(['--port', 'eighty']))).toThrow(/--port \(TOOLGATE_PORT\)="eighty": must be a whole number/);
    expect(() => loadConfig({}, parseSettingFlags(['--require-version', 'sometimes']))).toThrow(
      /--require-version \(TOOLGATE_REQUIRE_VERSION\)="sometimes": accepted values: overwrite, always, never/,
    );
    expect(() => loadConfig({}, parseSettingFlags(['--allow-absolute=perhaps']))).toThrow(/--allow-absolute \(TOOLGATE_ALLOW_ABSOLUTE\)="perhaps"/);
  });

  it('an unknown flag or a missing value is a usage error', () => {
    expect(() => parseSettingFlags(['--prot', '80'])).toThrow(UsageError);
    expect(() => parseSettingFlags(['--port'])).toThrow(UsageError);
  });
});

describe('README configuration table', () => {
  it('matches SETTINGS (regenerate with `npm run config-table`)', async () => {
    const readme = await fs.readFile(README, 'utf8');
    expect(withConfigTable(readme)).toBe(readme);
  });

  it('has one row per setting with its variable, flag and default', () => {
    const table = renderConfigTable();
    for (const [key, s] of Object.entries(SETTINGS)) {
      const row = table.split('\n').find((l) => l.startsWith(`| \`${s.env}\` |`));
      expect(row, s.env).toBeDefined();
      expect(row).toContain(flagOf(key as SettingKey));
      if (s.default !== undefined) expect(row).toContain(`\`${s.default}\``);
    }
  });
});
