// Random hex for the names made on every write (temp files, backup and record ids). crypto.randomBytes for a few
// bytes is a call into OpenSSL each time (4.5 µs against 0.3 µs here); like randomUUID's cache, one pool of
// random bytes is filled at a time and handed out in slices, each used once.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let at = pool.length;

/** `bytes` random bytes as hex (2 × bytes characters). */
export function randomHex(bytes: number): string {
  if (at + bytes > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const hex = pool.toString('hex', at, at + bytes);
  at += bytes;
  return hex;
}
