// Vitest's global set-up: builds dist/ once before any test file runs (only when it is older than its
// sources, as `npm start` does: scripts/build-if-stale.mjs), so that tests which start the service or the
// `toolgate` command as a process run the compiled code (test/compiled.ts), not a TypeScript loader that
// compiles some 650 modules again in every child. See docs/development.md.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const script = fileURLToPath(new URL('../scripts/build-if-stale.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`building dist/ for the tests failed (exit ${r.status}): see the output above`);
}
