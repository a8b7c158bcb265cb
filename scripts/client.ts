// npm run client: writes src/client/schema.ts (the types of the typed client) from openapi.yaml with
// openapi-typescript; `--check` fails when the file is stale, like openapi:check.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(repo, 'src', 'client', 'schema.ts');
const HEADER = '// Generated from openapi.yaml by `npm run client` (openapi-typescript); do not edit.\n\n';

// `paths` is what openapi-fetch reads; `operations` and `components` name the envelopes in src/client/index.ts.
const ast = await openapiTS(await fs.readFile(path.join(repo, 'openapi.yaml'), 'utf8'));
const source = HEADER + astToString(ast);
if (process.argv.includes('--check')) {
  const current = await fs.readFile(file, 'utf8').catch(() => '');
  if (current !== source) {
    process.stderr.write('src/client/schema.ts is out of date: run `npm run openapi` (it writes both) and commit it.\n');
    process.exit(1);
  }
  process.stdout.write('src/client/schema.ts is up to date.\n');
} else {
  await fs.writeFile(file, source);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), file)} (${source.length} bytes).\n`);
}
