// Hashing a file while it is read (edit_file): readAll hands every piece over in order, and
// Sha256Snapshots gives the old digest and hashes of any head of the content.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAll } from '../../src/workspace/sync-first-io.js';
import { Sha256Snapshots } from '../../src/workspace/versions.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function bytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7919 + (i >> 11)) & 0xff;
  return b;
}

describe('reading and hashing at once', () => {
  it('readAll hands over every piece in order, and the pieces are the file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-read-'));
    try {
      for (const size of [0, 1, 100_000, 9 * 1024 * 1024 + 17]) {
        const data = bytes(size);
        const file = path.join(dir, `f${size}`);
        fs.writeFileSync(file, data);
        const fd = fs.openSync(file, 'r');
        try {
          const pieces: Buffer[] = [];
          const got = await readAll(fd, size, (c) => pieces.push(Buffer.from(c)));
          expect(got.equals(data)).toBe(true);
          expect(Buffer.concat(pieces).equals(data)).toBe(true);
          if (size > 4 * 1024 * 1024) expect(pieces.length).toBeGreaterThan(1);
          expect((await readAll(fd, size)).equals(data)).toBe(true);
        } finally {
          fs.closeSync(fd);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Sha256Snapshots: the digest of what was fed, and hashes of any head of it', () => {
    const every = Sha256Snapshots.SNAPSHOT_BYTES;
    const data = bytes(3 * every + 12345);
    const h = new Sha256Snapshots();
    // Uneven pieces that cross the snapshot boundaries.
    for (let off = 0; off < data.length; ) {
      const n = Math.min(data.length - off, 1 + ((off * 31) % (every + 999)));
      h.update(data.subarray(off, off + n));
      off += n;
    }
    for (const at of [0, 1, every - 1, every, every + 1, 2 * every + 5, 3 * every, data.length]) {
      expect(h.hashOfHead(data, at).digest('hex')).toBe(sha(data.subarray(0, at)));
    }
    const tail = Buffer.from('new tail');
    expect(h.hashOfHead(data, every + 3).update(tail).digest('hex')).toBe(sha(Buffer.concat([data.subarray(0, every + 3), tail])));
    expect(h.digest()).toBe(sha(data));
  });
});
