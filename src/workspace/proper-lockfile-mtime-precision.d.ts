// proper-lockfile's module that probes and caches a file system's mtime precision (src/workspace/locks.ts).
declare module 'proper-lockfile/lib/mtime-precision.js' {
  /** Sets `file`'s times, reads them back, caches the precision on `fs` under a private symbol, then calls back. */
  export function probe(file: string, fs: object, callback: (err: Error | null, mtime?: Date, precision?: 's' | 'ms') => void): void;
}
