// Writes the README "Configuration" table from SETTINGS (src/config.ts), between the
// `<!-- config-table:start -->` and `<!-- config-table:end -->` markers. `--check` fails on drift
// (test/ops/config.test.ts checks the same).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { flagOf, isSwitch, SETTINGS, type SettingKey } from '../src/config.js';
import { README, runBlockCommand, withBlock, type ReadmeBlock } from './readme-block.js';

export { README };

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

const BLOCK: ReadmeBlock = { name: 'config-table', what: 'configuration table', section: 'Configuration', render: renderConfigTable };

/** README text with the generated block replaced (markers kept). */
export function withConfigTable(readme: string): string {
  return withBlock(readme, BLOCK);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await runBlockCommand(BLOCK);
