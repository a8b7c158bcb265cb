// Test harness: a real app over a fresh temporary workspace, driven through HTTP (inject).
import { Writable } from 'node:stream';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { z } from 'zod';
import type { Envelope } from '../src/envelope.js';
import type { readFile } from '../src/tools/read-file.js';
import { withFileLock } from '../src/workspace/locks.js';
import { openWorkspace, type Workspace, type WorkspaceLimits } from '../src/workspace/workspace.js';

export interface TestApp {
  app: FastifyInstance;
  root: string;
  /** Absolute path of a workspace file, for arranging and checking files directly. */
  file(rel: string): string;
  call(tool: string, body: unknown, headers?: Record<string, string>): Promise<CallResult>;
  close(): Promise<void>;
}

/** `data` of a read_file answer, as its output schema declares it. */
export type ReadFileData = z.output<(typeof readFile)['output']>;

export interface CallResult {
  status: number;
  body: Envelope;
  headers: Record<string, string | string[] | number | undefined>;
}

export async function makeTempDir(prefix = 'toolgate-test-'): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/** Builds the app over a new temporary workspace; env holds TOOLGATE_* overrides. */
export async function makeApp(env: Record<string, string> = {}, opts: BuildOptions = {}): Promise<TestApp> {
  const base = await makeTempDir();
  const root = path.join(base, 'ws');
  await fs.mkdir(root);
  // Quiet and unthrottled by default (no audit lines on stdout, no rate limit); tests of those set them.
  const config = loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', ...env });
  const app = await buildApp(config, opts);
  return {
    app,
    root,
    file: (rel) => path.join(root, rel),
    async call(tool, body, headers = {}) {
      const res = await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body as object, headers });
      return { status: res.statusCode, body: res.json() as Envelope, headers: res.headers };
    },
    async close() {
      await app.close();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}

/**
 * A workspace opened directly over `root` (no app), for tests of the workspace layer: small limits, each of which
 * `limits` may override.
 */
export function openTestWorkspace(root: string, instanceId: string, limits: Partial<WorkspaceLimits> = {}): Promise<Workspace> {
  return openWorkspace({
    root,
    allowAbsolute: false,
    requireVersion: 'overwrite',
    instanceId,
    limits: { maxReadBytes: 1e6, maxOutputBytes: 1e6, maxWriteBytes: 1e6, maxEditBytes: 1e6, lockTimeoutMs: 1000, regexTimeoutMs: 1000, backupKeep: 1, backupMaxBytes: 1e6, searchMaxFiles: 100, searchTimeoutMs: 1000, memoryBudgetBytes: 1e7, ...limits },
  });
}

/** Makes the app listen on a free loopback port; its base URL (for clients that need a real socket). */
export async function listenOn(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  return `http://127.0.0.1:${addr.port}`;
}

/** Whether anything is at this path (a file the test expects a refused call not to have made). */
export const pathExists = (p: string): Promise<boolean> =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

/** sha256 (hex) of a file's bytes as they are on disk: the version to pass as expected_sha256. */
export async function sha256OfFile(abs: string): Promise<string> {
  return createHash('sha256').update(await fs.readFile(abs)).digest('hex');
}

/**
 * The text of an answer that carries a version: the tool's sentence, then the sha256 of data.version
 * (docs/api.md, "Versions"), on the same line after a one-line text, on a line of its own after content.
 */
export function withVersion(text: string, body: Envelope): string {
  const sha = (body.data as { version?: { sha256?: string | null } } | null)?.version?.sha256;
  if (!sha) throw new Error('the answer carries no version');
  const line = `Version: sha256 ${sha} (pass it as expected_sha256 to change this file).`;
  return text.includes('\n') ? `${text}${text.endsWith('\n') ? '' : '\n'}${line}` : `${text} ${line}`;
}

/** An audit stream for makeApp's `auditStream` and the lines written to it, parsed. */
export function auditCollector(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

/** The data file of a backup: named with its record in its file key's directory (src/workspace/backups.ts). */
export function backupFile(stateDir: string, id: string): string {
  const dir = path.join(stateDir, 'backups', id.slice(0, 16));
  const name = readdirSync(dir).find((n) => n.startsWith(`${id}.`) && n.endsWith('.kept'));
  if (name === undefined) throw new Error(`no backup ${id} in ${dir}`);
  return path.join(dir, name);
}

/** The sha256 a backup's name records (null: none). */
export function backupSha256(stateDir: string, id: string): string | null {
  const sha = path.basename(backupFile(stateDir, id)).split('.')[3] as string;
  return sha === '-' ? null : sha;
}

/**
 * Holds a file's lock in this process, as a long write would: resolves once the lock is held; `release` lets it go
 * and waits until it is gone, so the file's next writer in the queue can go on.
 */
export async function holdFileLock(ws: Workspace, real: string, rel: string): Promise<{ release(): Promise<void> }> {
  let finish!: () => void;
  const holding = new Promise<void>((resolve) => (finish = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const holder = withFileLock(ws, real, rel, async () => {
    entered();
    await holding;
  });
  await inside;
  return {
    release: async () => {
      finish();
      await holder;
    },
  };
}
