// The compiled entry points the process-level tests start (test/global-setup.ts builds dist/ first).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../', import.meta.url));

/** The built file for a source entry point: `src/cli.ts` -> `<repo>/dist/cli.js`. */
export function compiled(entry: string): string {
  const m = /^src\/(.+)\.ts$/.exec(entry);
  if (!m) throw new Error(`not a source entry point: ${entry}`);
  return path.join(REPO, 'dist', `${m[1]}.js`);
}
