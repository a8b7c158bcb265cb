// The four load workloads (read, write, edit, search) as subjects for toolgate, the peer and the
// ceiling servers: the same operation on the same kind of file at the same concurrency.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Subject } from './compare.js';
import { editFor, editStateOf, makeEditFile, sha256, slicePool, SMALL } from './fixtures.js';
import { durableWrite, guardedDurableWrite } from './durable-write.js';
import { leasedRequests, LeasePool, runLoad } from './http-load.js';
import { runPeerLoad, runWindowed, type Peer } from './peer.js';
import type { Server } from './servers.js';
import { MiB } from './stats.js';

export interface Targets {
  /** The workspace root toolgate serves and the peer is allowed into. */
  ws: string;
  auth: Record<string, string>;
  toolgate: Server;
  peer: Peer | null;
  bareConst: Server | null;
  bareFile: Server | null;
  bareFileSync: Server | null;
  /** The read floor: the work the spec asks of a read, inline in a bare route (ceiling.mjs guarded-read). */
  guardedRead: Server | null;
  /** The write floor: write_file's work inline in a bare route (ceiling.mjs guarded-write); bench/floors.ts only. */
  guardedWrite?: Server | null;
}

export const READ_REL = 'small/read-4k.txt';

function toolgateSubject(t: Targets, tool: string, spec: { body?: string; next?: () => { body: string; onDone?: (ok: boolean) => void }; prepare?: () => Promise<void> }): Subject {
  return {
    key: 'toolgate',
    label: `toolgate ${tool}`,
    pid: t.toolgate.pid,
    async run(concurrency, seconds, rampS) {
      await spec.prepare?.();
      return runLoad({ port: t.toolgate.port, path: `/v1/tools/${tool}`, headers: t.auth, connections: concurrency, durationS: seconds, rampS, body: spec.body, next: spec.next });
    },
  };
}

/** The 4 KiB file every read workload reads (and the ceiling `file` route serves). */
export async function writeReadFile(ws: string, pool: Buffer): Promise<string> {
  const file = path.join(ws, READ_REL);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, slicePool(pool, 12345, SMALL));
  return file;
}

export function readWorkload(t: Targets): Subject[] {
  const file = path.join(t.ws, READ_REL);
  const body = JSON.stringify({ path: READ_REL });
  const subjects: Subject[] = [toolgateSubject(t, 'read_file', { body })];
  if (t.peer) {
    const peer = t.peer;
    subjects.push({
      key: 'peer',
      label: 'server-filesystem read_text_file',
      pid: peer.pid,
      run: (c, s, w) => runPeerLoad(peer, c, s, w, () => ({ name: 'read_text_file', args: { path: file } })),
    });
  }
  for (const [key, server, label] of [
    ['bare_const', t.bareConst, 'bare Fastify, constant'],
    ['bare_file', t.bareFile, 'bare Fastify, fs.readFile 4 KiB'],
    ['bare_file_sync', t.bareFileSync, 'bare Fastify, readFileSync 4 KiB'],
    ['guarded_read', t.guardedRead, 'guarded read: auth, sandbox walk, sha256, envelope, metrics, audit inline (bare Fastify)'],
  ] as const) {
    if (!server) continue;
    subjects.push({
      key,
      label,
      pid: server.pid,
      run: (c, s, w) => runLoad({ port: server.port, path: '/v1/tools/read_file', headers: t.auth, connections: c, durationS: s, rampS: w, body }),
    });
  }
  return subjects;
}

/** Two contents per file; state 0 = content A on disk. */
interface TwoState {
  files: string[];
  contents: [Buffer, Buffer][];
}

/** Reads states until two reads 100 ms apart agree, so no change of a previous run is still landing. */
async function stable<T>(read: () => Promise<T[]>): Promise<T[]> {
  let last = await read();
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const again = await read();
    if (again.every((v, k) => v === last[k])) return again;
    last = again;
  }
  throw new Error('file states did not settle within 5 s');
}

function statesOf(set: TwoState): Promise<(0 | 1)[]> {
  return stable(() => readStates(set));
}

async function readStates(set: TwoState): Promise<(0 | 1)[]> {
  return Promise.all(
    set.files.map(async (f, i) => {
      const buf = await fs.readFile(f);
      const [a, b] = set.contents[i] as [Buffer, Buffer];
      if (buf.equals(a)) return 0;
      if (buf.equals(b)) return 1;
      throw new Error(`${f}: content is neither of the two bench versions`);
    }),
  );
}

/** durable write_file of 4 KiB: each file alternates between two contents, passing the version it replaces (TOOLGATE_REQUIRE_VERSION stays at its default). */
export async function writeWorkload(t: Targets, pool: Buffer, files: number): Promise<Subject[]> {
  const dir = path.join(t.ws, 'scratch', 'write');
  await fs.mkdir(dir, { recursive: true });
  const make = async (prefix: string): Promise<TwoState> => {
    const set: TwoState = { files: [], contents: [] };
    for (let i = 0; i < files; i++) {
      const a = slicePool(pool, 1000 + i * 7919, SMALL);
      const b = slicePool(pool, 500_000 + i * 7919, SMALL);
      const f = path.join(dir, `${prefix}-${i}.txt`);
      await fs.writeFile(f, a);
      set.files.push(f);
      set.contents.push([a, b]);
    }
    return set;
  };
  const tg = await make('tg');
  const rel = (f: string) => path.relative(t.ws, f).split(path.sep).join('/');
  // bodies[i][s]: the write_file call that leaves file i in state s, passing the version it replaces.
  const bodiesOf = (set: TwoState) =>
    set.files.map((f, i) => {
      const [a, b] = set.contents[i] as [Buffer, Buffer];
      return [
        JSON.stringify({ path: rel(f), content: b.toString('latin1'), expected_sha256: sha256(a) }),
        JSON.stringify({ path: rel(f), content: a.toString('latin1'), expected_sha256: sha256(b) }),
      ] as const;
    });
  const bodies = bodiesOf(tg);
  let tgPool = new LeasePool([]);
  const subjects: Subject[] = [
    toolgateSubject(t, 'write_file', {
      prepare: async () => {
        tgPool = new LeasePool(await statesOf(tg));
      },
      next: () => leasedRequests(tgPool, bodies)(),
    }),
  ];
  if (t.guardedWrite) {
    const server = t.guardedWrite;
    const gw = await make('gw');
    const gwBodies = bodiesOf(gw);
    subjects.push({
      key: 'guarded_write',
      label: 'guarded write: write_file\'s work inline (bare Fastify)',
      pid: server.pid,
      async run(c, s, w) {
        const leases = new LeasePool(await statesOf(gw));
        return runLoad({ port: server.port, path: '/v1/tools/write_file', headers: t.auth, connections: c, durationS: s, rampS: w, next: leasedRequests(leases, gwBodies) });
      },
    });
  }
  /** A subject that writes in the bench process: `write(file, content)` leaves each leased file in its other state. */
  const inBench = async (key: string, label: string, write: (file: string, content: Buffer) => Promise<void>): Promise<Subject> => {
    const set = await make(key);
    return {
      key,
      label,
      pid: null,
      async run(c, s, w) {
        const leases = new LeasePool(await statesOf(set));
        return runWindowed(c, s, w, async () => {
          const { index, state } = leases.take();
          let ok = false;
          try {
            await write(set.files[index] as string, (set.contents[index] as [Buffer, Buffer])[state === 0 ? 1 : 0]);
            ok = true;
          } finally {
            leases.done(index, ok);
          }
        });
      },
    };
  };
  // The disk's ceiling: the same durable write done in-process (temp, fsync, rename, dir fsync).
  subjects.push(await inBench('plain_durable', 'plain durable write (in-bench, no HTTP)', durableWrite));
  // The floor of toolgate's own write: the same plus its lock and backup file-system calls, nothing else.
  const guardState = path.join(t.ws, 'scratch', 'write-guarded-state');
  await fs.mkdir(path.join(guardState, 'locks'), { recursive: true });
  subjects.push(
    await inBench('guarded_durable', 'locked, backed-up durable write: its fs calls alone (in-bench, no HTTP)', (file, content) => guardedDurableWrite(file, content, guardState)),
  );
  if (t.peer) {
    const peer = t.peer;
    const pe = await make('peer');
    subjects.push({
      key: 'peer',
      label: 'server-filesystem write_file',
      pid: peer.pid,
      async run(c, s, w) {
        const leases = new LeasePool(await statesOf(pe));
        return runPeerLoad(peer, c, s, w, () => {
          const { index, state } = leases.take();
          const content = (pe.contents[index] as [Buffer, Buffer])[state === 0 ? 1 : 0].toString('latin1');
          return { name: 'write_file', args: { path: pe.files[index], content }, onDone: (ok) => leases.done(index, ok) };
        });
      },
    });
  }
  return subjects;
}

/** edit_file of one line in a 1 MiB file, alternating between two edits so each is a real change. */
export async function editWorkload(t: Targets, pool: Buffer, files: number): Promise<Subject[]> {
  const dir = path.join(t.ws, 'scratch', 'edit');
  await fs.mkdir(dir, { recursive: true });
  const make = async (prefix: string) => {
    const list: string[] = [];
    for (let i = 0; i < files; i++) {
      const f = path.join(dir, `${prefix}-${i}.txt`);
      await fs.writeFile(f, makeEditFile(pool, 2000 + i * 104729, 1 * MiB));
      list.push(f);
    }
    return list;
  };
  const states = (list: string[]) => stable(() => Promise.all(list.map((f) => editStateOf(f))));
  const tg = await make('tg');
  const bodies = tg.map((f) => {
    const p = path.relative(t.ws, f).split(path.sep).join('/');
    return [0, 1].map((s) => {
      const e = editFor(s as 0 | 1);
      return JSON.stringify({ path: p, old_text: e.old, new_text: e.new });
    }) as [string, string];
  });
  let tgPool = new LeasePool([]);
  const subjects: Subject[] = [
    toolgateSubject(t, 'edit_file', {
      prepare: async () => {
        tgPool = new LeasePool(await states(tg));
      },
      next: () => leasedRequests(tgPool, bodies)(),
    }),
  ];
  if (t.peer) {
    const peer = t.peer;
    const pe = await make('peer');
    subjects.push({
      key: 'peer',
      label: 'server-filesystem edit_file',
      pid: peer.pid,
      async run(c, s, w) {
        const leases = new LeasePool(await states(pe));
        return runPeerLoad(peer, c, s, w, () => {
          const { index, state } = leases.take();
          const e = editFor(state);
          return { name: 'edit_file', args: { path: pe[index], edits: [{ oldText: e.old, newText: e.new }] }, onDone: (ok) => leases.done(index, ok) };
        });
      },
    });
  }
  return subjects;
}

export function searchBody(needle: string): string {
  return JSON.stringify({ path: 'tree', query: needle, mode: 'content', case_sensitive: true, limit: 1000 });
}

/** search_files content search: a fixed number of searches per round (one search takes long, so a time window would cut most off). */
export function searchSubject(t: Targets, needle: string, perConnection: number): Subject {
  const body = searchBody(needle);
  return {
    key: 'toolgate',
    label: 'toolgate search_files (content)',
    pid: t.toolgate.pid,
    run: (c) =>
      runLoad({ port: t.toolgate.port, path: '/v1/tools/search_files', headers: t.auth, connections: c, amount: c * perConnection, body, timeoutS: 300, flag: (b) => b.includes('"truncated":true') }),
  };
}

