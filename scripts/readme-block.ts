// A generated block of the README between `<!-- <name>:start -->` and `<!-- <name>:end -->`: replaced by the
// generator, compared by `--check` (scripts/config-table.ts, scripts/tools-table.ts; scripts/check.ts runs both).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');

export interface ReadmeBlock {
  /** The marker name (`config-table`). */
  name: string;
  /** What the block is, for messages (`configuration table`). */
  what: string;
  /** The README section the markers stand in. */
  section: string;
  render(): string;
}

/** README text with the block replaced (markers kept). */
export function withBlock(readme: string, block: ReadmeBlock): string {
  const startMark = `<!-- ${block.name}:start -->`;
  const endMark = `<!-- ${block.name}:end -->`;
  const start = readme.indexOf(startMark);
  const end = readme.indexOf(endMark);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${startMark} and ${endMark} in its ${block.section} section.`);
  return `${readme.slice(0, start + startMark.length)}\n${block.render()}\n${readme.slice(end)}`;
}

/** The generator's command line: rewrites the block, or with `--check` exits 1 when it drifted. */
export async function runBlockCommand(block: ReadmeBlock): Promise<void> {
  const current = await fs.readFile(README, 'utf8');
  const updated = withBlock(current, block);
  if (process.argv.includes('--check')) {
    if (current !== updated) {
      process.stderr.write(`The README ${block.what} is out of date: run \`npm run ${block.name}\`.\n`);
      process.exit(1);
    }
    process.stdout.write(`README ${block.what} is up to date.\n`);
    return;
  }
  if (current !== updated) await fs.writeFile(README, updated);
  process.stdout.write(current === updated ? `README ${block.what} unchanged.\n` : `Updated the README ${block.what}.\n`);
}
