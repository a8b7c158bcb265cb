// npm run openapi: writes openapi.yaml from the code; `--check` fails when the file has drifted
// (`npm run check` runs the same check with the other drift checks: scripts/check.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateOpenApi } from '../src/openapi.js';

/** Where the document lives, relative to the repository. */
export const OPENAPI_FILE = 'openapi.yaml';
const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const file = path.join(repo, OPENAPI_FILE);
  const yaml = await generateOpenApi();
  if (process.argv.includes('--check')) {
    const current = await fs.readFile(file, 'utf8').catch(() => '');
    if (current !== yaml) {
      process.stderr.write('openapi.yaml is out of date: run `npm run openapi` and commit it.\n');
      process.exit(1);
    }
    process.stdout.write('openapi.yaml is up to date.\n');
  } else {
    await fs.writeFile(file, yaml);
    process.stdout.write(`Wrote ${path.relative(process.cwd(), file)} (${yaml.length} bytes).\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
