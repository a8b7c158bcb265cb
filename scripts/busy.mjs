// Loads the machine with busy loops, to prove that the tests do not depend on its speed (docs/development.md):
//   node scripts/busy.mjs [--loops N] [--runs R] [-- command args...]
// Starts N processes that spin forever (default 6, like `yes > /dev/null` six times). With a command, runs it
// R times (default 1) in a row under that load, prints each run's duration and exit status, stops the loops
// and exits with the first failing status (0 when every run passed). Without a command, keeps the loops
// running until interrupted (Ctrl-C, SIGTERM).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { loops: { type: 'string', default: '6' }, runs: { type: 'string', default: '1' } },
  allowPositionals: true,
  strict: true,
});
const loops = Number(values.loops);
const runs = Number(values.runs);
if (!Number.isInteger(loops) || loops < 1) throw new Error(`--loops ${values.loops}: a whole number of at least 1`);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs}: a whole number of at least 1`);

const spinners = Array.from({ length: loops }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const exited = spinners.map((s) => new Promise((resolve) => s.once('exit', resolve)));
/** Kills the loops and waits until they are gone (reaped here, so none is left behind as a zombie). */
const stop = async () => {
  for (const s of spinners) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
  await Promise.all(exited);
};
process.once('exit', () => {
  for (const s of spinners) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void stop().then(() => process.exit(130)));
}
console.error(`busy: ${loops} busy loop(s) running (pids ${spinners.map((s) => s.pid).join(', ')})`);

if (positionals.length === 0) {
  await new Promise(() => {}); // until a signal ends the process
} else {
  const [command, ...args] = positionals;
  const results = [];
  for (let i = 1; i <= runs; i++) {
    const started = performance.now();
    const child = spawn(command, args, { stdio: 'inherit' });
    const status = await new Promise((resolve) => {
      child.once('error', (err) => {
        console.error(`busy: ${command}: ${err.message}`);
        resolve(127);
      });
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
    const seconds = (performance.now() - started) / 1000;
    results.push({ run: i, status, seconds });
    console.error(`busy: run ${i}/${runs} of \`${positionals.join(' ')}\`: exit ${status} in ${seconds.toFixed(1)} s (${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s)`);
  }
  await stop();
  console.error(`busy: summary with ${loops} busy loop(s): ${results.map((r) => `run ${r.run} exit ${r.status} ${r.seconds.toFixed(1)} s`).join('; ')}`);
  process.exit(results.find((r) => r.status !== 0)?.status ?? 0);
}
