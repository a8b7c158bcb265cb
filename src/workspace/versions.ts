// Version stamps and optimistic-lock expectations (docs/api.md, "Versions").
import { createHash, hash, type Hash } from 'node:crypto';
import type { Stats } from 'node:fs';
import type { VersionStamp } from '../envelope.js';
import { E } from '../errors.js';

export function sha256Hex(data: Buffer | string): string {
  // One call, no Hash object: a write hashes its old and new content (docs/development.md, "Work done once").
  return hash('sha256', data, 'hex');
}

/**
 * sha256 of content fed in order (as it is read), remembering the hash state every SNAPSHOT_BYTES: a new
 * version of the content that keeps its first bytes hashes on from the last state before the change
 * instead of from the start (both versions are needed, and an edit leaves most of a file alone).
 */
export class Sha256Snapshots {
  static readonly SNAPSHOT_BYTES = 256 * 1024;
  readonly #hash = createHash('sha256');
  readonly #snapshots: Hash[] = [];
  #length = 0;

  update(chunk: Buffer): void {
    const every = Sha256Snapshots.SNAPSHOT_BYTES;
    let off = 0;
    while (off < chunk.length) {
      const boundary = (Math.floor(this.#length / every) + 1) * every;
      const take = Math.min(chunk.length - off, boundary - this.#length);
      this.#hash.update(chunk.subarray(off, off + take));
      this.#length += take;
      off += take;
      if (this.#length === boundary) this.#snapshots.push(this.#hash.copy());
    }
  }

  /** The digest of everything fed (feed nothing after it). */
  digest(): string {
    return this.#hash.digest('hex');
  }

  /** A hash over content[0, at), where `content` is what was fed; continue it with the new bytes. */
  hashOfHead(content: Buffer, at: number): Hash {
    const k = Math.min(Math.floor(at / Sha256Snapshots.SNAPSHOT_BYTES), this.#snapshots.length);
    const hash = k > 0 ? (this.#snapshots[k - 1] as Hash).copy() : createHash('sha256');
    return hash.update(content.subarray(k * Sha256Snapshots.SNAPSHOT_BYTES, at));
  }
}

export function versionOf(st: Stats, sha256: string | null): VersionStamp {
  return { mtime_ms: Math.trunc(st.mtimeMs), size_bytes: st.size, sha256 };
}

export function etagOf(v: VersionStamp): string | undefined {
  return v.sha256 ? `"${v.sha256}"` : undefined;
}

export interface Expectations {
  expected_mtime_ms?: number | undefined;
  expected_size_bytes?: number | undefined;
  expected_sha256?: string | undefined;
  /** A version the door received out of band (REST If-Match), parsed there. */
  version_match?: VersionMatch | undefined;
}

/** An If-Match style expectation: any existing version (`*`), or one of these sha256 values. */
export interface VersionMatch {
  any: boolean;
  tags: string[];
}

export function hasExpectation(e: Expectations): boolean {
  return e.expected_mtime_ms !== undefined || e.expected_size_bytes !== undefined || e.expected_sha256 !== undefined || e.version_match !== undefined;
}

/**
 * Whether the expectations name one version of the file (the read-first rule, VERSION_REQUIRED): a sha256
 * (expected_sha256 or an If-Match tag) or mtime and size together. A size alone, an mtime alone or
 * `If-Match: *` still hold for a file another writer changed, so read-modify-write with them loses updates.
 */
export function hasVersion(e: Expectations): boolean {
  if (e.expected_sha256 !== undefined) return true;
  if (e.expected_mtime_ms !== undefined && e.expected_size_bytes !== undefined) return true;
  return e.version_match !== undefined && e.version_match.tags.length > 0;
}

/** Parses an If-Match header into the accepted sha256 values; '*' means "any existing version". Doors call it. */
export function parseIfMatch(header: string): VersionMatch {
  const trimmed = header.trim();
  if (trimmed === '*') return { any: true, tags: [] };
  const tags = trimmed
    .split(',')
    .map((t) => t.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1').toLowerCase())
    .filter((t) => t.length > 0);
  return { any: false, tags };
}

/**
 * Checks every given expectation against the current version (null: the file does not exist).
 * Must be called under the file lock. Throws CONFLICT with details.current.
 */
export function checkExpectations(rel: string, current: VersionStamp | null, e: Expectations): void {
  if (!hasExpectation(e)) return;
  const conflict = (what: string) =>
    E.versionConflict(rel, what, current, {
        ...(e.expected_mtime_ms !== undefined && { mtime_ms: e.expected_mtime_ms }),
        ...(e.expected_size_bytes !== undefined && { size_bytes: e.expected_size_bytes }),
        ...(e.expected_sha256 !== undefined && { sha256: e.expected_sha256 }),
        ...(e.version_match !== undefined && { if_match: e.version_match.any ? '*' : e.version_match.tags.map((t) => `"${t}"`).join(', ') }),
      });
  if (!current) throw conflict('it no longer exists');
  if (e.expected_mtime_ms !== undefined && Math.trunc(e.expected_mtime_ms) !== current.mtime_ms) throw conflict('mtime differs');
  if (e.expected_size_bytes !== undefined && e.expected_size_bytes !== current.size_bytes) throw conflict('size differs');
  if (e.expected_sha256 !== undefined && e.expected_sha256.toLowerCase() !== current.sha256) throw conflict('sha256 differs');
  if (e.version_match !== undefined) {
    const m = e.version_match;
    if (!m.any && !m.tags.includes(current.sha256 ?? '')) throw conflict('If-Match does not match the ETag');
  }
}
