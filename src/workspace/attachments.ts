// Files a tool hands back beside its envelope (images extracted from documents), kept under the state
// directory for one caller and fetched with GET /v1/attachments/{id} until they expire.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Workspace } from './workspace.js';

export const DEFAULT_ATTACHMENT_RETENTION_MS = 3600_000;
/** Expired attachments are swept at most this often (on a save or a fetch), so no timer outlives the app. */
const SWEEP_EVERY_MS = 60_000;
/** 128 random bits, base64url: unguessable, and the only name a caller can ask for. */
const ID = /^[A-Za-z0-9_-]{22}$/;

export interface AttachmentInput {
  name: string;
  media_type: string;
  bytes: Buffer;
}

/** What a tool returns for each attachment: `bytes` is the size. */
export interface AttachmentRef {
  id: string;
  name: string;
  media_type: string;
  bytes: number;
}

interface AttachmentMeta extends AttachmentRef {
  owner: string;
  project: string | null;
  expires_at_ms: number;
}

/** The caller an attachment belongs to: its token id, or without auth its client address. */
export function ownerOf(caller: { actor: string | null; clientIp: string | undefined }): string {
  return caller.actor !== null ? `token:${caller.actor}` : `client:${caller.clientIp ?? 'unknown'}`;
}

const dirOf = (ws: Workspace) => path.join(ws.stateDir, 'attachments');
const retentionOf = (ws: Workspace) => ws.limits.attachmentRetentionMs ?? DEFAULT_ATTACHMENT_RETENTION_MS;
// Keyed by workspace, so each service's own (its workspaces are its alone).
const lastSweep = new WeakMap<Workspace, number>();

/** Stores the attachments for `owner` and returns their references; the metadata is written last, so a half-written one is never served. */
export async function saveAttachments(ws: Workspace, owner: string, items: readonly AttachmentInput[]): Promise<AttachmentRef[]> {
  if (items.length === 0) return [];
  const dir = dirOf(ws);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  void sweepSoon(ws);
  const expires = Date.now() + retentionOf(ws);
  const refs: AttachmentRef[] = [];
  for (const item of items) {
    const id = randomBytes(16).toString('base64url');
    const ref: AttachmentRef = { id, name: item.name, media_type: item.media_type, bytes: item.bytes.length };
    const meta: AttachmentMeta = { ...ref, owner, project: ws.id, expires_at_ms: expires };
    await fs.writeFile(path.join(dir, `${id}.bin`), item.bytes, { mode: 0o600 });
    await fs.writeFile(path.join(dir, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
    refs.push(ref);
  }
  return refs;
}

/** The attachment `id` if it exists, has not expired and belongs to `owner` in this project; null otherwise (one answer for all, so ids cannot be probed). */
export async function loadAttachment(ws: Workspace, owner: string, id: string): Promise<{ ref: AttachmentRef; data: Buffer } | null> {
  if (!ID.test(id)) return null;
  void sweepSoon(ws);
  const dir = dirOf(ws);
  let meta: AttachmentMeta;
  try {
    meta = JSON.parse(await fs.readFile(path.join(dir, `${id}.json`), 'utf8')) as AttachmentMeta;
  } catch {
    return null;
  }
  if (meta.owner !== owner || meta.project !== ws.id || meta.expires_at_ms <= Date.now()) return null;
  try {
    const data = await fs.readFile(path.join(dir, `${id}.bin`));
    return { ref: { id, name: meta.name, media_type: meta.media_type, bytes: data.length }, data };
  } catch {
    return null;
  }
}

/** Removes expired attachments (and orphans of an interrupted save); best effort, at most once a minute per workspace. */
export async function sweepAttachments(ws: Workspace, now = Date.now()): Promise<number> {
  const dir = dirOf(ws);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  const ids = new Set(names.map((n) => n.replace(/\.(bin|json)$/, '')));
  for (const id of ids) {
    let expired: boolean;
    try {
      const meta = JSON.parse(await fs.readFile(path.join(dir, `${id}.json`), 'utf8')) as AttachmentMeta;
      expired = meta.expires_at_ms <= now;
    } catch {
      // No readable metadata: an interrupted save; old enough that it is not one in progress.
      const st = await fs.stat(path.join(dir, `${id}.bin`)).catch(() => null);
      expired = !st || now - st.mtimeMs > SWEEP_EVERY_MS;
    }
    if (!expired) continue;
    await fs.rm(path.join(dir, `${id}.json`), { force: true });
    await fs.rm(path.join(dir, `${id}.bin`), { force: true });
    removed++;
  }
  return removed;
}

async function sweepSoon(ws: Workspace): Promise<void> {
  const now = Date.now();
  if (now - (lastSweep.get(ws) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(ws, now);
  await sweepAttachments(ws, now).catch(() => 0);
}
