// Writes the README "Tools" table from the registry (TOOLS in src/tools/registry.ts: name, aliases, risk and
// `summary`), between the `<!-- tools-table:start -->` and `<!-- tools-table:end -->` markers. `--check` fails
// on drift; `npm run check` runs it with the other drift checks (scripts/check.ts).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TOOLS } from '../src/tools/registry.js';
import { runBlockCommand, withBlock, type ReadmeBlock } from './readme-block.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The generated part of the README: one row per tool, in the registry's order. */
export function renderToolsTable(): string {
  const rows = TOOLS.map((t) => {
    const aliases = t.aliases?.length ? ` (${t.aliases.map((a) => `\`${a}\``).join(', ')})` : '';
    return `| \`${t.name}\`${aliases} | ${t.risk} | ${cell(t.summary)} |`;
  });
  return ['| tool | risk | what it does |', '|---|---|---|', ...rows].join('\n');
}

const BLOCK: ReadmeBlock = { name: 'tools-table', what: 'tools table', section: 'Tools', render: renderToolsTable };

/** README text with the generated block replaced (markers kept). */
export function withToolsTable(readme: string): string {
  return withBlock(readme, BLOCK);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await runBlockCommand(BLOCK);
