// The audit file stays open between groups of lines (docs/operations.md, "Audit log"): one descriptor per
// file while the service runs, none after it stops, and a file removed from under the service is made anew
// with the lines that come after.
import fsNow from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { makeTempDir } from '../helpers.js';
import { request } from './ops-helpers.js';

let base = '';
beforeEach(async () => {
  base = await makeTempDir('toolgate-audit-fd-');
  await fs.mkdir(path.join(base, 'ws'));
  await fs.writeFile(path.join(base, 'ws', 'a.txt'), 'hello\n');
});
afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** Descriptors of this process open on `file` (its name, or the name of a removed file). */
function descriptorsOn(file: string): number {
  let n = 0;
  for (const fd of fsNow.readdirSync('/proc/self/fd')) {
    try {
      const target = fsNow.readlinkSync(`/proc/self/fd/${fd}`);
      if (target === file || target === `${file} (deleted)`) n++;
    } catch {
      // closed while listing
    }
  }
  return n;
}

const lines = async (file: string) => (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l !== '');

describe('audit file descriptor', () => {
  it('one descriptor while running, none after close; a removed file is made anew', async () => {
    const app = await buildApp(
      loadConfig({ TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_STATE_DIR: path.join(base, 'state'), TOOLGATE_INSTANCE_ID: 'fd', TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }),
    );
    const read = () => request(app, 'POST', '/v1/tools/read_file', { path: 'a.txt' });
    const file = app.toolgate.audit.fileFor(path.join(base, 'state'), new Date());
    try {
      for (let i = 0; i < 3; i++) expect((await read()).status).toBe(200);
      await app.toolgate.audit.flush();
      expect(await lines(file)).toHaveLength(3);
      expect(descriptorsOn(file)).toBe(1);

      await fs.unlink(file);
      for (let i = 0; i < 2; i++) expect((await read()).status).toBe(200);
      await app.toolgate.audit.flush();
      const after = await lines(file);
      expect(after).toHaveLength(2);
      expect(after.every((l) => (JSON.parse(l) as { tool?: string }).tool === 'read_file')).toBe(true);
      // The removed file's descriptor was let go when the new one was opened.
      expect(descriptorsOn(file)).toBe(1);
    } finally {
      await app.close();
    }
    expect(descriptorsOn(file)).toBe(0);
  });
});
