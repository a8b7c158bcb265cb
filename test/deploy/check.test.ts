// `npm run check` (scripts/check.ts) reports every generated file that drifted, not only the first one
// (openapi:check stopped at its first drift and never named the client's types). Run on a copy of the
// generated files, so the repository's own files are never edited.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkGenerated, describeCheck } from '../../scripts/check.js';
import { renderToolsTable } from '../../scripts/tools-table.js';
import { TOOLS } from '../../src/tools/registry.js';
import { makeTempDir } from '../helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const GENERATED = ['openapi.yaml', 'src/client/schema.ts', 'README.md'];

let copy = '';
afterEach(async () => {
  if (copy) await fs.rm(copy, { recursive: true, force: true });
  copy = '';
});

/** A directory holding copies of the repository's generated files, at their paths. */
async function copyOfGenerated(): Promise<string> {
  const dir = await makeTempDir('toolgate-check-');
  for (const rel of GENERATED) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.copyFile(path.join(REPO, rel), path.join(dir, rel));
  }
  return dir;
}

describe('npm run check', () => {
  it('finds nothing to fix in the repository (regenerate with the commands it names)', async () => {
    const results = await checkGenerated();
    expect(results.filter((r) => r.drifted)).toEqual([]);
    expect(results.map((r) => r.what)).toEqual(['openapi.yaml', 'src/client/schema.ts', 'README.md, configuration table', 'README.md, tools table']);
  });

  it('reports an edited tools table and an edited openapi.yaml together, each with its command', async () => {
    copy = await copyOfGenerated();
    const readme = path.join(copy, 'README.md');
    await fs.writeFile(readme, (await fs.readFile(readme, 'utf8')).replace('| `read_file` (`read`, `file-read`) | read |', '| `read_file` | write |'));
    await fs.appendFile(path.join(copy, 'openapi.yaml'), '# edited by hand\n');

    const results = await checkGenerated(copy);
    expect(results.filter((r) => r.drifted).map((r) => [r.what, r.fix])).toEqual([
      ['openapi.yaml', 'npm run openapi'],
      ['README.md, tools table', 'npm run tools-table'],
    ]);
    const text = describeCheck(results);
    expect(text).toContain('DRIFT: openapi.yaml is out of date: run `npm run openapi`.');
    expect(text).toContain('DRIFT: README.md, tools table is out of date: run `npm run tools-table`.');
    expect(text).toContain('ok: src/client/schema.ts');
    expect(text).toMatch(/^2 generated file\(s\) out of date; run `npm run openapi`, then `npm run tools-table`/m);
  });

  it('names a README whose table markers were removed as a drift, and still checks the rest', async () => {
    copy = await copyOfGenerated();
    const readme = path.join(copy, 'README.md');
    await fs.writeFile(readme, (await fs.readFile(readme, 'utf8')).replace('<!-- tools-table:end -->', ''));
    await fs.rm(path.join(copy, 'src/client/schema.ts'));

    const drifted = (await checkGenerated(copy)).filter((r) => r.drifted).map((r) => r.what);
    expect(drifted).toEqual(['src/client/schema.ts', 'README.md, tools table']);
  });
});

describe('the README tools table', () => {
  it('has a row for every tool, with its risk and aliases from the registry', () => {
    const rows = renderToolsTable().split('\n').slice(2);
    expect(rows).toHaveLength(TOOLS.length);
    for (const [i, t] of TOOLS.entries()) {
      expect(rows[i]).toMatch(new RegExp(`^\\| \`${t.name}\`.* \\| ${t.risk} \\| .+ \\|$`));
      for (const alias of t.aliases ?? []) expect(rows[i]).toContain(`\`${alias}\``);
    }
  });
});
