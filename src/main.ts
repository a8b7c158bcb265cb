// Process entry (`npm start`, the container's CMD): TOOLGATE_* variables and the same flags as `toolgate serve`.
import module from 'node:module';

// Start-up is mostly compiling modules: from Node 22 on, keep the compiled code between starts
// (restarts, replicas on one node). Enabled before the service's modules load; a no-op on Node 20.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { runServe } = await import('./serve.js');
await runServe(process.argv.slice(2));
