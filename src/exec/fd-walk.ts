// Walks of trees a command could have shaped (its upper layer, the project it saw), through descriptors: each
// directory is opened by name below its parent's descriptor (O_NOFOLLOW, O_NONBLOCK), never by a path string,
// so any depth works, no symlink swapped in is followed and nothing blocks on a FIFO; names stay bytes, so a
// name that is not UTF-8 is seen as it is. docs/run-command.md, "What a command changes".
import { constants as C, type Stats } from 'node:fs';
import fs from 'node:fs/promises';

export type TreeKind = 'file' | 'directory' | 'symlink' | 'whiteout' | 'other';

/** A descriptor of a directory, as a path the kernel resolves to it (its entries are `${at}/${name}`). */
export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/** `${dir}/${name}` with a name of any bytes. */
export function childPath(dirFd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${fdPath(dirFd)}/`), name]);
}

const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NONBLOCK;

/** Opens the directory `name` below `dirFd` (not following a symlink); null when it is not a directory (any more). */
export async function openChildDir(dirFd: number, name: Buffer): Promise<fs.FileHandle | null> {
  try {
    return await fs.open(childPath(dirFd, name), DIR_FLAGS);
  } catch {
    return null;
  }
}

/** Opens a directory the service names itself (a project root, a run's layer); throws when it cannot. */
export function openDir(p: string | Buffer): Promise<fs.FileHandle> {
  return fs.open(p, DIR_FLAGS);
}

/** The kind of an entry from its lstat: an overlay whiteout is a character device 0/0. */
export function kindOfStat(st: Stats): TreeKind {
  if (st.isDirectory()) return 'directory';
  if (st.isFile()) return 'file';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isCharacterDevice() && st.rdev === 0) return 'whiteout';
  return 'other';
}

/** The entries of a directory by descriptor, names as bytes, sorted; null when it cannot be read. */
export async function listDir(dirFd: number): Promise<Buffer[] | null> {
  try {
    const names = await fs.readdir(fdPath(dirFd), { encoding: 'buffer' });
    return names.sort(Buffer.compare);
  } catch {
    return null;
  }
}

/** lstat of `name` below `dirFd`; null when it is gone. */
export async function lstatChild(dirFd: number, name: Buffer): Promise<Stats | null> {
  try {
    return await fs.lstat(childPath(dirFd, name));
  } catch {
    return null;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The name as text, or null when its bytes are not UTF-8 (no tool could name it). */
export function nameText(name: Buffer): string | null {
  try {
    return utf8.decode(name);
  } catch {
    return null;
  }
}

/** A name for messages: invalid bytes shown as \xNN. */
export function shownName(name: Buffer): string {
  const text = nameText(name);
  if (text !== null) return text;
  let out = '';
  for (const b of name) out += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return out;
}

/** Why a walk could not see a tree whole: the caller then trusts none of it. */
export class TreeTooLarge extends Error {
  constructor(
    readonly reason: 'entries' | 'depth' | 'time' | 'unreadable',
    readonly where: string,
  ) {
    super(`tree walk stopped (${reason}) at ${where}`);
  }
}

export interface TreeBounds {
  maxEntries: number;
  maxDepth: number;
  /** Date.now() past which the walk gives up. */
  deadline?: number | undefined;
}

export interface TreeVisit {
  /** Path below the start, '/'-joined, as bytes. */
  rel: Buffer;
  name: Buffer;
  kind: TreeKind;
  stat: Stats;
  depth: number;
  /** The parent directory's descriptor (valid while the callback runs). */
  parentFd: number;
}

/**
 * Depth-first walk below an open directory: every entry is lstat'ed through its parent's descriptor; a
 * directory is entered unless `visit` answers false. Throws TreeTooLarge past the bounds or when a directory
 * cannot be read: a partial answer would be trusted otherwise.
 */
export async function walkTree(rootFd: number, bounds: TreeBounds, visit: (v: TreeVisit) => boolean | void | Promise<boolean | void>): Promise<number> {
  let seen = 0;
  const walk = async (dirFd: number, rel: Buffer, depth: number): Promise<void> => {
    const names = await listDir(dirFd);
    if (names === null) throw new TreeTooLarge('unreadable', shownName(rel) || '.');
    for (const name of names) {
      if (++seen > bounds.maxEntries) throw new TreeTooLarge('entries', shownName(rel) || '.');
      if (bounds.deadline !== undefined && seen % 256 === 0 && Date.now() > bounds.deadline) throw new TreeTooLarge('time', shownName(rel) || '.');
      const st = await lstatChild(dirFd, name);
      if (!st) continue;
      const childRel = rel.length === 0 ? name : Buffer.concat([rel, Buffer.from('/'), name]);
      const kind = kindOfStat(st);
      const enter = await visit({ rel: childRel, name, kind, stat: st, depth, parentFd: dirFd });
      if (kind !== 'directory' || enter === false) continue;
      if (depth >= bounds.maxDepth) throw new TreeTooLarge('depth', shownName(childRel));
      const child = await openChildDir(dirFd, name);
      if (!child) continue;
      try {
        await walk(child.fd, childRel, depth + 1);
      } finally {
        await child.close();
      }
    }
  };
  await walk(rootFd, Buffer.alloc(0), 1);
  return seen;
}
