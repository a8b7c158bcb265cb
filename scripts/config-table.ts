// Writes the README "Configuration" table from SETTINGS (src/config.ts), between the
// `<!-- config-table:start -->` and `<!-- config-table:end -->` markers. `--check` fails on drift
// (test/ops/config-table.test.ts checks the same).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagOf, isSwitch, SETTINGS, type SettingKey } from '../src/config.js';

export const START = '<!-- config-table:start -->';
export const END = '<!-- config-table:end -->';
export const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');

function showDefault(value: string | undefined): string {
  if (value === undefined) return '—';
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (n >= 1024 && n % (1024 * 1024) === 0) return `\`${value}\` (${n / (1024 * 1024)} MiB)`;
  if (n >= 1024 && n % 1024 === 0) return `\`${value}\` (${n / 1024} KiB)`;
  return `\`${value}\``;
}

/** The generated part of the README: the table of every setting, and what the switches accept. */
export function renderConfigTable(): string {
  const rows = (Object.keys(SETTINGS) as SettingKey[]).map((key) => {
    const s = SETTINGS[key];
    const flag = isSwitch(key) ? `\`${flagOf(key)}\`` : `\`${flagOf(key)} …\``;
    return `| \`${s.env}\` | ${flag} | ${showDefault(s.default)} | ${s.doc.replace(/\|/g, '\\|')} |`;
  });
  return [
    '| variable | flag | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    'Switches accept `true`/`false`, `1`/`0`, `yes`/`no`; as flags `--audit`, `--no-audit` or `--audit=false`.',
    'A flag wins over its variable. `toolgate serve --help` prints the same list.',
    'Without tokens the service only listens on loopback; with Redis unreachable the rate limit fails open by default',
    '(`TOOLGATE_REDIS_FAILURE_MODE`). Auth, rate limits, the audit log, metrics, probes and shutdown: [docs/operations.md](docs/operations.md).',
  ].join('\n');
}

/** README text with the generated block replaced (markers kept). */
export function withConfigTable(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${START} and ${END} in its Configuration section.`);
  return `${readme.slice(0, start + START.length)}\n${renderConfigTable()}\n${readme.slice(end)}`;
}

async function main(): Promise<void> {
  const current = await fs.readFile(README, 'utf8');
  const updated = withConfigTable(current);
  if (process.argv.includes('--check')) {
    if (current !== updated) {
      process.stderr.write('The README configuration table is out of date: run `npm run config-table`.\n');
      process.exit(1);
    }
    process.stdout.write('README configuration table is up to date.\n');
    return;
  }
  if (current !== updated) await fs.writeFile(README, updated);
  process.stdout.write(current === updated ? 'README configuration table unchanged.\n' : 'Updated the README configuration table.\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
