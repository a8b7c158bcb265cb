// npm run openapi: writes openapi.yaml from the code; `--check` fails when the file has drifted.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateOpenApi } from '../src/openapi.js';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi.yaml');
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
