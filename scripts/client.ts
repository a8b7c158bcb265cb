// npm run client: writes src/client/schema.ts (the types of the typed client) from openapi.yaml with
// openapi-typescript; `--check` fails when the file is stale, like openapi:check.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

/** Where the client's types live, relative to the repository. */
export const CLIENT_SCHEMA_FILE = 'src/client/schema.ts';
const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const HEADER = '// Generated from openapi.yaml by `npm run client` (openapi-typescript); do not edit.\n\n';

/** src/client/schema.ts as generated from an OpenAPI document. */
export async function clientSchemaOf(openapiYaml: string): Promise<string> {
  // `paths` is what openapi-fetch reads; `operations` and `components` name the envelopes in src/client/index.ts.
  return HEADER + astToString(await openapiTS(openapiYaml));
}

async function main(): Promise<void> {
  const file = path.join(repo, CLIENT_SCHEMA_FILE);
  const source = await clientSchemaOf(await fs.readFile(path.join(repo, 'openapi.yaml'), 'utf8'));
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
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
