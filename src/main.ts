// Process entry (`npm start`, the container's CMD): TOOLGATE_* variables and the same flags as `toolgate serve`.
import module from 'node:module';

// Start-up is mostly compiling modules: from Node 22 on, keep the compiled code between starts
// (restarts, replicas on one node). Enabled before the service's modules load; a no-op on Node 20.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
if (process.env.npm_lifecycle_event !== undefined) stopWithParent();
const { runServe } = await import('./serve.js');
await runServe(process.argv.slice(2));

/**
 * Under an npm script (`npm start`) npm is what a process manager or a terminal stops. npm passes SIGTERM and
 * SIGINT to the shell that runs the script, which dies without passing them on: this process would go on
 * serving with no parent, the port taken. So the parent going away stops it as SIGTERM does.
 */
function stopWithParent(): void {
  const parent = process.ppid;
  const watch = setInterval(() => {
    // An orphan is adopted by init or a subreaper: its parent id changes.
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.stderr.write(`toolgate: the process that started it (npm, pid ${parent}) is gone; stopping as on SIGTERM\n`);
    process.kill(process.pid, 'SIGTERM');
  }, 250);
  watch.unref();
}
