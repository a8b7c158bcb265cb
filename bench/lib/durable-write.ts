// The baseline of the big-edit target: a plain durable write of given bytes, done the way the spec
// asks of every write (temp file in the same directory, write, fsync, rename, fsync of the directory),
// with nothing else: no read, no hashing, no backup, no diff.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export async function durableWrite(target: string, data: Buffer): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.bench-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await fs.open(temp, 'wx', 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(temp, target);
  const dh = await fs.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
