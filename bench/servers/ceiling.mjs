// Ceiling servers: the least a Fastify route can do for the bench's requests. CEILING_MODE=const
// answers a constant; CEILING_MODE=file answers the 4 KiB file at CEILING_FILE, read with
// fs.readFile on every request, and CEILING_MODE=file-sync the same read with readFileSync (as toolgate
// reads small files). CEILING_MODE=guarded-read is the floor of a read that does what SPEC §2 and §8
// ask of every call, inline and with nothing else (see guardedRead below), and CEILING_MODE=guarded-write the
// floor of write_file the same way (see guardedWrite). All accept the same POST +
// JSON body the bench sends to toolgate, and answer /readyz like toolgate, so start-up is measured
// the same way. No logger (bare).
import { Buffer } from 'node:buffer';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, fsync, link as linkCallback, linkSync, lstatSync, open as openCallback, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmdirSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify, TextDecoder } from 'node:util';
import { diffArrays } from 'diff';
import Fastify from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';

const mode = process.env.CEILING_MODE ?? 'const';
const file = process.env.CEILING_FILE;
if (mode.startsWith('file') && !file) throw new Error('CEILING_FILE is required with CEILING_MODE=file');
const guarded = mode === 'guarded-read' ? guardedRead() : mode === 'guarded-write' ? guardedWrite() : null;

const app = Fastify({ logger: false });
const CONSTANT = { status: 'success', data: { ok: true } };

app.post('/v1/tools/:tool', async (req, reply) => {
  if (guarded) return guarded(req, reply);
  if (mode === 'file') return reply.type('text/plain; charset=utf-8').send(await fs.readFile(file));
  if (mode === 'file-sync') return reply.type('text/plain; charset=utf-8').send(readFileSync(file));
  return CONSTANT;
});
app.get('/readyz', async () => ({ status: 'ready' }));

const shutdown = async () => {
  await app.close();
  await guarded?.flush();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });

/**
 * The least a read_file of a small file can do and still meet the spec, written inline: bearer token
 * (sha256, constant-time compare), a rate-limit count, the sandbox walk (lstat per path segment, no
 * symlink, open with O_NOFOLLOW, fstat = the object checked), the whole read, sha256 version, strict
 * utf-8 decode with a binary sniff, the envelope with request id and ETag, metrics (calls, duration,
 * bytes) and the audit line (hash-chained, to the audit file and to stdout, both written in groups).
 * No error paths beyond refusing, no options, no framework around the call.
 * Env: CEILING_ROOT (the workspace), CEILING_TOKEN_SHA256 (hex), CEILING_AUDIT_FILE.
 */
function guardedRead() {
  const work = perCallWork('guarded-read', 'bytes_read_total');
  const { refuse } = work;
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  const handler = (req, reply) => {
    const started = performance.now();
    const requestId = randomUUID();
    if (!work.admit(req, reply)) return reply;
    const rel = req.body?.path;
    if (typeof rel !== 'string' || rel.includes('\0') || rel.startsWith('/')) return refuse(reply, 400, 'INVALID_PARAM');
    const found = work.walk(rel, reply);
    if (!found) return reply;
    const { cur, st, relOut } = found;
    const read = readChecked(cur, st);
    if (!read) return refuse(reply, 409, 'CONFLICT');
    const { buf, fst } = read;
    if (buf.subarray(0, 8192).includes(0)) return refuse(reply, 400, 'BINARY_FILE');
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const content = utf8.decode(buf);
    let lines = 0;
    for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) lines++;
    if (content.length > 0 && !content.endsWith('\n')) lines++;
    const version = { mtime_ms: Math.trunc(fst.mtimeMs), size_bytes: buf.length, sha256 };
    const ms = performance.now() - started;
    const envelope = {
      status: 'success',
      data: { content, encoding: 'utf-8', total_lines: lines, start_line: 1, end_line: lines, truncated: false, next_start_line: null, bom: false, version },
      text: `Read '${relOut}' (${lines} lines).`,
      stats: { time_ms: Math.round(ms), bytes_read: buf.length, lines },
      context: { cwd: '.', project: null, params_input: { path: rel }, path_resolved: relOut, risk: 'read', risk_level: 'low', request_id: requestId },
    };
    work.done('read_file', ms, buf.length, {
      time: new Date().toISOString(), request_id: requestId, actor: 'bench', client_ip: req.ip, project: null, tool: 'read_file', path: relOut, risk: 'read', risk_level: 'low',
      outcome: 'success', error_code: null, http_status: 200, bytes_read: buf.length, bytes_written: null, sha256_before: sha256, sha256_after: null, duration_ms: Math.round(ms * 1000) / 1000,
    });
    return reply.header('x-request-id', requestId).header('etag', `"${sha256}"`).type('application/json; charset=utf-8').send(JSON.stringify(envelope));
  };
  handler.flush = work.flush;
  return handler;
}

/**
 * The least a write_file of a small file can do and still meet the spec, inline, beside guardedRead: the same
 * bearer token, rate-limit count, sandbox walk, metrics and chained audit line, and the write's own work as
 * write_file does it: the file's lock (a file holding the owner record under the state directory), the old content
 * read through an O_NOFOLLOW descriptor checked to be the walked file, its sha256 against expected_sha256 (CONFLICT
 * otherwise), the old content kept as a backup (the old inode linked under a name carrying the record, a copy
 * where it has other names; the oldest over 10 per file removed), a temp
 * file written and fsynced, renamed over the file, the directory fsynced, the new sha256, the envelope with ETag.
 * Small metadata calls on the event loop, fsyncs in the thread pool. No options; by default no diff either (issue
 * 37's floor). CEILING_WRITE_ANSWER=spec adds what the spec asks of write_file's answer and of every change
 * (docs/api.md): the diff preview with its line counts, the backup id and the shortened params_input in the envelope
 * (see specAnswer), and the change's checkpoint record appended to a segment of its own, in groups, no fsync.
 * CEILING_META=pool makes the calls that wait for the journal (the lock's create and unlink, the temp file's create,
 * the rename) in the thread pool while one of its fsyncs runs, on the event loop otherwise, as toolgate must
 * (src/workspace/sync-first-io.ts); the answer still waits for the lock's unlink (toolgate's does not, its next
 * writer of the file does). By default they are all on the event loop.
 * Env: CEILING_ROOT, CEILING_STATE (a state directory outside the root), CEILING_TOKEN_SHA256, CEILING_AUDIT_FILE.
 */
function guardedWrite() {
  const work = perCallWork('guarded-write', 'bytes_written_total');
  const { refuse } = work;
  const state = process.env.CEILING_STATE;
  if (!state) throw new Error('guarded-write needs CEILING_STATE besides what guarded-read needs');
  const fsyncOnce = promisify(fsync);
  const metaInPool = process.env.CEILING_META === 'pool';
  let syncing = 0;
  // Counted only when the count decides something, so that the default floor does what it did before.
  const fsyncAsync = metaInPool
    ? async (fd) => {
        syncing++;
        try {
          await fsyncOnce(fd);
        } finally {
          syncing--;
        }
      }
    : fsyncOnce;
  // A call that waits for the journal: in the pool while an fsync runs (CEILING_META=pool), on the loop otherwise.
  const meta = (sync, later) => (metaInPool && syncing > 0 ? later() : sync());
  // As toolgate takes its lock and keeps its backup; CEILING_LOCK=dir (a bare mkdir lock) and CEILING_BACKUP=copy
  // (data and meta copied into two new files, as toolgate did before) give the earlier floors.
  // One kind of lock, named: an unknown value is refused rather than measured as another kind.
  const lockKind = process.env.CEILING_LOCK ?? 'owned';
  if (!['owned', 'link', 'dir'].includes(lockKind)) throw new Error(`CEILING_LOCK: '${lockKind}' is not owned, link or dir`);
  const linkBackup = process.env.CEILING_BACKUP !== 'copy';
  const ownerRecord = `${hostname()}:${process.pid}:${randomUUID().slice(0, 12)}`;
  mkdirSync(path.join(state, 'locks'), { recursive: true });
  // CEILING_LOCK=link: each lock is a link to one owner file, made at start with the record, so a write makes and
  // frees no inode (what that would save: bench/README.md, ninth session). toolgate does not lock this way.
  const ownerFile = lockKind === 'link' ? path.join(state, 'locks', `.owner-${process.pid}`) : null;
  if (ownerFile) writeFileSync(ownerFile, `${ownerRecord}\n`);
  const linkAsync = promisify(linkCallback);
  const spec = process.env.CEILING_WRITE_ANSWER === 'spec';
  const records = spec ? groupedAppend(path.join(state, 'checkpoints', `${process.pid}.jsonl`)) : null;
  if (spec) mkdirSync(path.join(state, 'checkpoints'), { recursive: true });
  let seq = 0;
  const madeDirs = new Set();
  const openAsync = promisify(openCallback);
  // A descriptor now, or (a create in the pool) its promise: callers await only the promise, as toolgate's do.
  const createSmall = (file, data, flags) => {
    const written = (fd) => {
      writeSync(fd, data);
      return fd;
    };
    const opened = meta(
      () => openSync(file, flags, 0o600),
      () => openAsync(file, flags, 0o600),
    );
    return typeof opened === 'number' ? written(opened) : opened.then(written);
  };
  // Closes what createSmall made: now, or (a create in the pool) once it is made, a promise then.
  const closeMade = (made) => (typeof made === 'number' ? closeSync(made) : made.then(closeSync));

  const handler = async (req, reply) => {
    const started = performance.now();
    const requestId = randomUUID();
    if (!work.admit(req, reply)) return reply;
    const { path: rel, content, expected_sha256: expected } = req.body ?? {};
    if (typeof rel !== 'string' || typeof content !== 'string' || rel.includes('\0') || rel.startsWith('/')) return refuse(reply, 400, 'INVALID_PARAM');
    const found = work.walk(rel, reply);
    if (!found) return reply;
    const { cur, st, relOut } = found;
    const key = createHash('sha256').update(relOut).digest('hex').slice(0, 16);
    const lock = path.join(state, 'locks', `${key}.lock`);
    // The lock as toolgate's file lock takes it: a file made with O_EXCL holding the owner record, released by an
    // unlink. CEILING_LOCK=link links the owner file instead (released the same way); CEILING_LOCK=dir makes a directory.
    if (lockKind === 'link') {
      const linked = meta(
        () => linkSync(ownerFile, lock),
        () => linkAsync(ownerFile, lock),
      );
      if (linked) await linked;
    } else if (lockKind === 'owned') {
      const closed = closeMade(createSmall(lock, `${ownerRecord}\n`, 'wx'));
      if (closed) await closed;
    } else mkdirSync(lock);
    let before;
    let after;
    let old;
    let backupId;
    const next = Buffer.from(content, 'utf8');
    try {
      const read = readChecked(cur, st);
      if (!read) return refuse(reply, 409, 'CONFLICT');
      old = read.buf;
      before = createHash('sha256').update(old).digest('hex');
      if (typeof expected === 'string' && expected !== before) return refuse(reply, 409, 'CONFLICT');
      const backups = path.join(state, 'backups', key);
      const id = `${key}-${Date.now().toString(36).padStart(9, '0')}-${(seq++).toString(16).padStart(6, '0')}`;
      backupId = id;
      if (linkBackup) {
        // As toolgate keeps a backup: one file named with its record, the old inode linked (in the thread pool)
        // when it is the one read and has no other name; a copy otherwise. The oldest over 10 per file removed.
        if (!madeDirs.has(backups)) {
          mkdirSync(backups, { recursive: true });
          madeDirs.add(backups);
        }
        const name = path.join(backups, `${id}.write_file.${(st.mode & 0o7777).toString(8)}.${before}.YmVuY2g.k.kept`);
        let linked = false;
        try {
          await fs.link(cur, name);
          const bst = lstatSync(name);
          linked = bst.ino === st.ino && bst.dev === st.dev && bst.nlink === 2;
          if (!linked) unlinkSync(name);
        } catch {
          linked = false;
        }
        if (!linked) {
          await closeMade(createSmall(`${name}.part`, old, 'w'));
          renameSync(`${name}.part`, name);
        }
        const kept = readdirSync(backups).filter((n) => n.endsWith('.kept')).sort().reverse();
        await Promise.all(kept.slice(10).map((o) => fs.unlink(path.join(backups, o))));
      } else {
        mkdirSync(backups, { recursive: true });
        await closeMade(createSmall(path.join(backups, `${id}.bak`), old, 'w'));
        await closeMade(createSmall(path.join(backups, `${id}.json`), JSON.stringify({ backup_id: id, path: relOut, operation: 'write_file', created_at: new Date().toISOString(), size_bytes: old.length, sha256: before, mode: st.mode & 0o7777 }), 'w'));
        const ids = readdirSync(backups).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).sort().reverse();
        await Promise.all(ids.slice(10).flatMap((o) => [fs.unlink(path.join(backups, `${o}.bak`)), fs.unlink(path.join(backups, `${o}.json`))]));
      }
      const dir = path.dirname(cur);
      const temp = path.join(dir, `.${path.basename(cur)}.${randomUUID().slice(0, 8)}.tmp`);
      const made = createSmall(temp, next, 'wx');
      const tfd = typeof made === 'number' ? made : await made;
      try {
        await fsyncAsync(tfd);
      } finally {
        closeSync(tfd);
      }
      const renamed = meta(
        () => renameSync(temp, cur),
        () => fs.rename(temp, cur),
      );
      if (renamed) await renamed;
      const dfd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        await fsyncAsync(dfd);
      } finally {
        closeSync(dfd);
      }
      after = createHash('sha256').update(next).digest('hex');
    } finally {
      if (lockKind === 'dir') rmdirSync(lock);
      else {
        const unlinked = meta(
          () => unlinkSync(lock),
          () => fs.unlink(lock),
        );
        if (unlinked) await unlinked;
      }
    }
    const ms = performance.now() - started;
    const version = { mtime_ms: Math.trunc(Date.now()), size_bytes: next.length, sha256: after };
    if (spec) {
      const { envelope, diff } = specAnswer(relOut, rel, content, expected, old, next, backupId, version, ms, requestId);
      records.add(`${JSON.stringify({ id: requestId, turn: null, actor: 'bench', tool: 'write_file', time: new Date().toISOString(), changes: [{ path: relOut, op: 'update', kind: 'file', sha256_before: before, sha256_after: after, insertions: diff.lines_added, deletions: diff.lines_removed, backup_id: backupId }] })}\n`);
      work.done('write_file', ms, next.length, {
        time: new Date().toISOString(), request_id: requestId, actor: 'bench', client_ip: req.ip, project: null, tool: 'write_file', path: relOut, risk: 'write', risk_level: 'medium',
        outcome: envelope.status, error_code: null, http_status: 200, bytes_read: null, bytes_written: next.length, sha256_before: before, sha256_after: after, duration_ms: Math.round(ms * 1000) / 1000,
      });
      return reply.header('x-request-id', requestId).header('etag', `"${after}"`).type('application/json; charset=utf-8').send(JSON.stringify(envelope));
    }
    const envelope = {
      status: 'success',
      data: { created: false, bytes_written: next.length, version },
      text: `Wrote ${next.length} bytes to '${relOut}'.`,
      stats: { time_ms: Math.round(ms), bytes_written: next.length },
      context: { cwd: '.', project: null, params_input: { path: rel }, path_resolved: relOut, risk: 'write', risk_level: 'medium', request_id: requestId },
    };
    work.done('write_file', ms, next.length, {
      time: new Date().toISOString(), request_id: requestId, actor: 'bench', client_ip: req.ip, project: null, tool: 'write_file', path: relOut, risk: 'write', risk_level: 'medium',
      outcome: 'success', error_code: null, http_status: 200, bytes_read: null, bytes_written: next.length, sha256_before: before, sha256_after: after, duration_ms: Math.round(ms * 1000) / 1000,
    });
    return reply.header('x-request-id', requestId).header('etag', `"${after}"`).type('application/json; charset=utf-8').send(JSON.stringify(envelope));
  };
  handler.flush = async () => {
    await work.flush();
    await records?.flush();
  };
  return handler;
}

/**
 * write_file's answer as the spec asks it (docs/api.md): data with applied, operation, diff_preview, diff_truncated,
 * the line counts, backup_id and version; stats with the sizes and counts; params_input with every string over 200
 * characters cut. The preview is the least diff that meets it: the lines common at both ends kept out, jsdiff on
 * the rest when the two sides share a line (one replacement otherwise), one hunk with 3 lines of context, cut at
 * 100 lines or 10 KiB (status partial when cut).
 */
function specAnswer(relOut, rel, content, expected, old, next, backupId, version, ms, requestId) {
  const diff = lineDiff(relOut, old.toString('utf8'), content);
  const shorten = (v) => (v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v);
  const envelope = {
    status: diff.diff_truncated ? 'partial' : 'success',
    data: { operation: 'update', created_directory: null, applied: true, ...diff, backup_id: backupId, version },
    text: `Updated '${relOut}' (+${diff.lines_added}/-${diff.lines_removed} lines, ${next.length} bytes). Version: sha256 ${version.sha256} (pass it as expected_sha256 to change this file).`,
    stats: { time_ms: Math.round(ms), bytes_written: next.length, original_size: old.length, new_size: next.length, lines_added: diff.lines_added, lines_removed: diff.lines_removed },
    context: { cwd: '.', project: null, params_input: { path: rel, content: shorten(content), ...(expected !== undefined && { expected_sha256: expected }) }, path_resolved: relOut, risk: 'write', risk_level: 'medium', request_id: requestId },
  };
  return { envelope, diff };
}

function lineDiff(relOut, oldText, newText) {
  const a = oldText.split(/(?<=\n)/);
  const b = newText.split(/(?<=\n)/);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const oldMid = a.slice(head, a.length - tail);
  const newMid = b.slice(head, b.length - tail);
  // Regions with no line in common are one replacement: jsdiff's Myers would spend (n+m)² steps to find that.
  const inNew = new Set(newMid);
  const parts = oldMid.some((l) => inNew.has(l)) ? diffArrays(oldMid, newMid) : [{ removed: true, value: oldMid }, { added: true, value: newMid }];
  const ctxBefore = a.slice(Math.max(0, head - 3), head);
  const ctxAfter = a.slice(a.length - tail, a.length - tail + 3);
  const rows = ctxBefore.map((l) => ` ${l}`);
  let added = 0;
  let removed = 0;
  for (const part of parts) {
    const tag = part.added ? '+' : part.removed ? '-' : ' ';
    if (part.added) added += part.value.length;
    if (part.removed) removed += part.value.length;
    for (const l of part.value) rows.push(`${tag}${l}`);
  }
  for (const l of ctxAfter) rows.push(` ${l}`);
  const oldStart = head - ctxBefore.length;
  const header = `--- a/${relOut}\n+++ b/${relOut}\n@@ -${oldStart + 1},${a.length - tail - oldStart + ctxAfter.length} +${oldStart + 1},${b.length - tail - oldStart + ctxAfter.length} @@\n`;
  let out = header;
  let bytes = Buffer.byteLength(header);
  let lines = 3;
  let truncated = false;
  for (const r of rows) {
    const line = r.endsWith('\n') ? r : `${r}\n`;
    const n = Buffer.byteLength(line);
    // Room kept for the marker line, within both bounds.
    if (lines + 2 > 100 || bytes + n + 16 > 10 * 1024) {
      truncated = true;
      break;
    }
    out += line;
    bytes += n;
    lines++;
  }
  if (truncated) out += '... (truncated)';
  return { diff_preview: out, diff_truncated: truncated, lines_added: added, lines_removed: removed };
}

/**
 * Lines appended to `file` in groups: while one append is in the thread pool, the lines that come meanwhile wait for
 * the next. `also` gets each group first (the audit's stdout).
 */
function groupedAppend(file, also) {
  let pending = '';
  let writing = null;
  const drain = async () => {
    while (pending !== '') {
      const text = pending;
      pending = '';
      also?.(text);
      await fs.appendFile(file, text);
    }
    writing = null;
  };
  return {
    add(line) {
      pending += line;
      writing ??= drain();
    },
    flush: () => writing ?? Promise.resolve(),
  };
}

/**
 * The file at `cur` read whole through an O_NOFOLLOW descriptor checked to be the walked inode `st`, with its
 * fstat; null when another inode is there now (both floors answer CONFLICT).
 */
function readChecked(cur, st) {
  const fd = openSync(cur, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const fst = fstatSync(fd);
    if (fst.ino !== st.ino || fst.dev !== st.dev) return null;
    const buf = Buffer.allocUnsafe(fst.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { buf: buf.subarray(0, off), fst };
  } finally {
    closeSync(fd);
  }
}

/**
 * What both floors do around their file work, once: the token (sha256, constant-time compare), a rate-limit
 * count, the path checks and the sandbox walk (lstat per segment, no symlink), three prom-client metrics (calls,
 * duration, bytes) and the hash-chained audit line to the audit file and stdout, both written in groups.
 */
function perCallWork(mode, bytesName) {
  const root = process.env.CEILING_ROOT;
  const tokenHash = Buffer.from(process.env.CEILING_TOKEN_SHA256 ?? '', 'hex');
  const auditFile = process.env.CEILING_AUDIT_FILE;
  if (!root || tokenHash.length !== 32 || !auditFile) throw new Error(`${mode} needs CEILING_ROOT, CEILING_TOKEN_SHA256 and CEILING_AUDIT_FILE`);
  const registers = [new Registry()];
  const calls = new Counter({ name: 'calls_total', help: 'calls', labelNames: ['tool', 'status'], registers });
  const duration = new Histogram({ name: 'duration_seconds', help: 'duration', labelNames: ['tool'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers });
  const bytes = new Counter({ name: bytesName, help: 'bytes', labelNames: ['tool'], registers });
  const budget = new Map();
  let prev = null;
  const lines = groupedAppend(auditFile, (group) => process.stdout.write(group));
  const refuse = (reply, status, code) => reply.code(status).send({ status: 'error', data: null, error: { code } });
  return {
    root,
    refuse,
    /** The token and the rate count: false when refused (the refusal is sent). */
    admit(req, reply) {
      const auth = req.headers.authorization;
      if (typeof auth !== 'string' || !auth.startsWith('Bearer ')) return refuse(reply, 401, 'UNAUTHORIZED'), false;
      const given = createHash('sha256').update(auth.slice(7)).digest();
      if (!timingSafeEqual(given, tokenHash)) return refuse(reply, 401, 'UNAUTHORIZED'), false;
      const window = Math.floor(Date.now() / 60_000);
      const used = budget.get(auth);
      if (used && used.window === window) used.count++;
      else budget.set(auth, { window, count: 1 });
      return true;
    },
    /** The sandbox walk to a regular file: its path, lstat and segments, or null when refused (sent). */
    walk(rel, reply) {
      const segments = rel.split('/').filter((x) => x !== '' && x !== '.');
      if (segments.length === 0 || segments.includes('..') || segments[0] === '.toolgate') return refuse(reply, 403, 'ACCESS_DENIED'), null;
      let cur = root;
      let st = null;
      for (const seg of segments) {
        cur = path.join(cur, seg);
        st = lstatSync(cur, { throwIfNoEntry: false });
        if (!st) return refuse(reply, 404, 'NOT_FOUND'), null;
        if (st.isSymbolicLink()) return refuse(reply, 403, 'ACCESS_DENIED'), null;
      }
      if (!st.isFile()) return refuse(reply, 400, 'NOT_REGULAR_FILE'), null;
      return { cur, st, relOut: segments.join('/') };
    },
    /** Metrics and the audit line of a call that succeeded. */
    done(tool, ms, n, entry) {
      calls.inc({ tool, status: 'success' });
      duration.observe({ tool }, ms / 1000);
      bytes.inc({ tool }, n);
      const body = JSON.stringify({ ...entry, prev });
      const hash = createHash('sha256').update(body).digest('hex');
      const line = `${body.slice(0, -1)},"hash":"${hash}"}\n`;
      prev = hash;
      lines.add(line);
    },
    flush: lines.flush,
  };
}
