// The directories a workspace keeps open between calls (docs/api.md, "Sandbox"): src/workspace/sandbox.ts
// walks from them when they are still where they were.
import { closeSync, readlinkSync } from 'node:fs';
import type { HandleScope } from './sandbox.js';

/** A directory the workspace keeps open between calls (HeldDirs), with the calls using it now. */
export interface HeldDir {
  readonly fd: number;
  users: number;
  /** When it was last used, in uses of its workspace's held directories (the least recent goes first). */
  usedAt: number;
  /** No longer kept: closed once its last user is done. */
  dropped: boolean;
}

export function releaseHeld(dir: HeldDir): void {
  if (--dir.users === 0 && dir.dropped) closeSync(dir.fd);
}

function dropHeld(dir: HeldDir): void {
  dir.dropped = true;
  if (dir.users === 0) closeSync(dir.fd);
}

/** Directories a workspace keeps open, at most this many: a descriptor each. */
export const HELD_DIRS_MAX = 32;

/**
 * The directories a workspace's recent paths lay in, kept open (O_PATH) by their path from the root, so that a
 * call on a file in one skips the open and close of each directory on the way (bench/README.md, "Held
 * directories"). Each use checks first where the directory is now: only one still at that very path (a real
 * directory, reached through no link: the kernel names a directory by its one real path) is used; any other is
 * dropped and the path walked again. The least recently used goes first.
 */
export class HeldDirs {
  private readonly dirs = new Map<string, HeldDir>();
  private uses = 0;

  /** The directory held for `parentRel`, checked to be at `expected` now; undefined when none is. */
  take(parentRel: string, expected: string, fdDir: string): HeldDir | undefined {
    const dir = this.dirs.get(parentRel);
    if (dir === undefined) return undefined;
    let now: string;
    try {
      now = readlinkSync(`${fdDir}/${dir.fd}`);
    } catch {
      now = '';
    }
    if (now !== expected) {
      this.dirs.delete(parentRel);
      dropHeld(dir);
      return undefined;
    }
    // Not moved to the Map's end: a delete and a set per call made a new table every few calls, promoted garbage.
    dir.usedAt = ++this.uses;
    return dir;
  }

  /** Keeps `fd` open for `parentRel`, the scope that opened it its first user. */
  keep(parentRel: string, fd: number, scope: HandleScope): void {
    const dir: HeldDir = { fd, users: 0, usedAt: ++this.uses, dropped: false };
    scope.handOver(fd, dir);
    const old = this.dirs.get(parentRel);
    if (old !== undefined) dropHeld(old);
    this.dirs.set(parentRel, dir);
    if (this.dirs.size > HELD_DIRS_MAX) {
      let oldestRel = parentRel;
      let oldest = dir;
      for (const [rel, d] of this.dirs) {
        if (d.usedAt < oldest.usedAt) {
          oldestRel = rel;
          oldest = d;
        }
      }
      this.dirs.delete(oldestRel);
      dropHeld(oldest);
    }
  }

  /** How many directories are held (tests). */
  get size(): number {
    return this.dirs.size;
  }

  /** Closes every directory once its calls are done (the workspace's shutdown). */
  clear(): void {
    for (const dir of this.dirs.values()) dropHeld(dir);
    this.dirs.clear();
  }
}
