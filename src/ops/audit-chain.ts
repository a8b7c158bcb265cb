// The audit log's hash chain (docs/operations.md): each line carries `prev` (the `hash` of the line before it,
// null on a file's first line) and `hash` (sha256 of the line's own text without the `hash` field), so an
// edited, removed or reordered line breaks the chain. The writer (audit-file.ts) links lines with these
// functions; the verifier (audit-verify.ts) checks them.
import { hash as digest } from 'node:crypto';

/** The `hash` field that ends every chained line. */
export const HASH_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/;

export function sha256Hex(text: string): string {
  // One call, no Hash object: a line is hashed once (docs/development.md, "Work done once").
  return digest('sha256', text, 'hex');
}

/** A chained line: the entry with `prev`, then `hash` over everything before it. */
export function chainLine(entry: object, prev: string | null): { line: string; hash: string } {
  return hashed(JSON.stringify({ ...entry, prev }));
}

/** chainLine of an entry already serialized (one without `prev`): `prev` goes last, as the spread above puts it. */
export function chainJson(json: string, prev: string | null): { line: string; hash: string } {
  return hashed(`${json.slice(0, -1)},"prev":${prev === null ? 'null' : `"${prev}"`}}`);
}

function hashed(body: string): { line: string; hash: string } {
  const hash = sha256Hex(body);
  return { line: `${body.slice(0, -1)},"hash":"${hash}"}`, hash };
}

/** The hash a line hands on to the next one: its `hash` field, or (for a damaged line) the sha256 of its text. */
export function hashOfLine(line: string): string {
  return HASH_SUFFIX.exec(line)?.[1] ?? sha256Hex(line);
}
