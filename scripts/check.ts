// npm run check: every file generated from the code, compared with what the code generates now, all at once:
// openapi.yaml, the client's types (src/client/schema.ts, from the generated document), the README's
// configuration and tools tables. Each drift is named with the command that fixes it; exit 1 if any.
// CI runs it (.ci/run). The single checks stay as scripts (openapi:check, client:check, *-table:check).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateOpenApi } from '../src/openapi.js';
import { CLIENT_SCHEMA_FILE, clientSchemaOf } from './client.js';
import { withConfigTable } from './config-table.js';
import { OPENAPI_FILE } from './openapi.js';
import { withToolsTable } from './tools-table.js';

const REPO = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One generated file and whether it is as the code would write it. */
export interface CheckResult {
  /** The file, relative to the repository, and the part of it that is generated. */
  what: string;
  drifted: boolean;
  /** The command that writes it anew. */
  fix: string;
}

/**
 * Checks the generated files of the repository at `repo` (this checkout by default; tests pass a copy)
 * against what this checkout's code generates. Every check runs, whatever the others found.
 */
export async function checkGenerated(repo = REPO): Promise<CheckResult[]> {
  const read = (rel: string) => fs.readFile(path.join(repo, rel), 'utf8').catch(() => '');
  const [openapi, schema, readme] = await Promise.all([read(OPENAPI_FILE), read(CLIENT_SCHEMA_FILE), read('README.md')]);
  const yaml = await generateOpenApi();
  // The client as the code's document makes it: a stale openapi.yaml does not hide a stale client.
  const clientSchema = await clientSchemaOf(yaml);
  const table = (render: (text: string) => string): boolean => {
    try {
      return render(readme) !== readme;
    } catch {
      return true; // its markers are gone: the command named says where they belong
    }
  };
  return [
    { what: OPENAPI_FILE, drifted: openapi !== yaml, fix: 'npm run openapi' },
    { what: CLIENT_SCHEMA_FILE, drifted: schema !== clientSchema, fix: 'npm run openapi' },
    { what: 'README.md, configuration table', drifted: table(withConfigTable), fix: 'npm run config-table' },
    { what: 'README.md, tools table', drifted: table(withToolsTable), fix: 'npm run tools-table' },
  ];
}

/** What `npm run check` prints: one line per check, then the commands to run when something drifted. */
export function describeCheck(results: readonly CheckResult[]): string {
  let text = '';
  for (const r of results) text += r.drifted ? `DRIFT: ${r.what} is out of date: run \`${r.fix}\`.\n` : `ok: ${r.what}\n`;
  const drifted = results.filter((r) => r.drifted);
  if (drifted.length > 0) {
    const fixes = [...new Set(drifted.map((r) => r.fix))];
    text += `${drifted.length} generated file(s) out of date; run ${fixes.map((f) => `\`${f}\``).join(', then ')} and commit the result.\n`;
  }
  return text;
}

async function main(): Promise<void> {
  const results = await checkGenerated();
  const text = describeCheck(results);
  if (results.some((r) => r.drifted)) {
    process.stderr.write(text);
    process.exit(1);
  }
  process.stdout.write(text);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
