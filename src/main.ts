// Process entry (`npm start`, the container's CMD): TOOLGATE_* variables and the same flags as `toolgate serve`.
import { runServe } from './serve.js';

await runServe(process.argv.slice(2));
