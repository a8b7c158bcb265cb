// `toolgate audit verify <file>` (src/cli.ts): checks an audit file's hash chain (audit-chain.ts) line by line
// and reports the gap lines the writer left where the disk could not take entries (docs/operations.md).
import fs from 'node:fs/promises';
import { HASH_SUFFIX, sha256Hex } from './audit-chain.js';

/** A gap line: entries the disk could not take, between the times of the first and the last of them. */
export interface AuditGapRecord {
  /** 1-based line number of the gap line. */
  line: number;
  lost: number;
  from: string;
  to: string;
}

export interface VerifyResult {
  ok: boolean;
  lines: number;
  /** Gap lines found in an intact chain (absent when there are none). */
  gaps?: AuditGapRecord[];
  /** 1-based number of the first line where the chain breaks. */
  line?: number;
  reason?: string;
}

/** Checks a file's chain: every line intact, the first with prev null, each prev the hash of the line before. */
export function verifyAuditText(text: string): VerifyResult {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev: string | null = null;
  const gaps: AuditGapRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i] as string;
    const fail = (reason: string): VerifyResult => ({ ok: false, lines: lines.length, line: n, reason });
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return fail('not a JSON line (damaged or cut short)');
    }
    const m = HASH_SUFFIX.exec(line);
    if (!m || typeof parsed !== 'object' || parsed === null) return fail('no hash field at the end of the line');
    const own = sha256Hex(`${line.slice(0, m.index)}}`);
    if (own !== m[1]) return fail('the line was edited (its hash does not match its content)');
    const linePrev = (parsed as { prev?: unknown }).prev;
    if (linePrev !== prev) {
      return fail(
        i === 0
          ? 'the first line does not start the chain (prev should be null): lines before it were removed'
          : `prev does not match the hash of line ${n - 1}: a line was removed, inserted or reordered here`,
      );
    }
    const record = parsed as { event?: unknown; lost?: unknown; from?: unknown; to?: unknown };
    if (record.event === 'audit_gap') {
      const { lost, from, to } = record;
      if (!Number.isSafeInteger(lost) || (lost as number) < 1 || typeof from !== 'string' || typeof to !== 'string') {
        return fail('a gap line without its count of lost entries and their times');
      }
      gaps.push({ line: n, lost: lost as number, from, to });
    }
    prev = m[1] as string;
  }
  return { ok: true, lines: lines.length, ...(gaps.length > 0 && { gaps }) };
}

/** What `toolgate audit verify` prints for a file. */
export function describeVerifyResult(file: string, result: VerifyResult): string {
  if (!result.ok) return `FAILED: ${file}: line ${result.line}: ${result.reason}.\n`;
  let text = `OK: ${file}: ${result.lines} line(s), hash chain intact.\n`;
  for (const g of result.gaps ?? []) {
    text += `GAP: line ${g.line}: ${g.lost} entr${g.lost === 1 ? 'y' : 'ies'} from ${g.from} to ${g.to} could not be written (recorded when writing resumed).\n`;
  }
  return text;
}

export async function verifyAuditFile(file: string): Promise<VerifyResult> {
  return verifyAuditText(await fs.readFile(file, 'utf8'));
}
