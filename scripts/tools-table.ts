// Writes the README "Tools" table from the registry (TOOLS in src/tools/registry.ts: name, aliases, risk and
// `summary`), between the `<!-- tools-table:start -->` and `<!-- tools-table:end -->` markers. `--check` fails
// on drift; `npm run check` runs it with the other drift checks (scripts/check.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TOOLS } from '../src/tools/registry.js';

export const START = '<!-- tools-table:start -->';
export const END = '<!-- tools-table:end -->';
export const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The generated part of the README: one row per tool, in the registry's order. */
export function renderToolsTable(): string {
  const rows = TOOLS.map((t) => {
    const aliases = t.aliases?.length ? ` (${t.aliases.map((a) => `\`${a}\``).join(', ')})` : '';
    return `| \`${t.name}\`${aliases} | ${t.risk} | ${cell(t.summary)} |`;
  });
  return ['| tool | risk | what it does |', '|---|---|---|', ...rows].join('\n');
}

/** README text with the generated block replaced (markers kept). */
export function withToolsTable(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${START} and ${END} in its Tools section.`);
  return `${readme.slice(0, start + START.length)}\n${renderToolsTable()}\n${readme.slice(end)}`;
}

async function main(): Promise<void> {
  const current = await fs.readFile(README, 'utf8');
  const updated = withToolsTable(current);
  if (process.argv.includes('--check')) {
    if (current !== updated) {
      process.stderr.write('The README tools table is out of date: run `npm run tools-table`.\n');
      process.exit(1);
    }
    process.stdout.write('README tools table is up to date.\n');
    return;
  }
  if (current !== updated) await fs.writeFile(README, updated);
  process.stdout.write(current === updated ? 'README tools table unchanged.\n' : 'Updated the README tools table.\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
