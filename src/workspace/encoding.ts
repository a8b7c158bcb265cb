// Text encodings (iconv-lite), binary detection and line endings.
import { createRequire } from 'node:module';
import type * as IconvLite from 'iconv-lite';
import { E } from '../errors.js';

// iconv-lite (half a MiB of code and tables) loads at the first encoding other than utf-8 and base64, from
// node_modules (the bundle leaves it there), so a start and the utf-8 calls never read it.
let iconvLoaded: typeof IconvLite | null = null;
const iconv = (): typeof IconvLite => (iconvLoaded ??= createRequire(import.meta.url)('iconv-lite') as typeof IconvLite);

const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const SNIFF_BYTES = 8192;

/** Canonical encoding name, or INVALID_PARAM for an unknown one. 'base64' is binary passthrough. */
export function checkEncoding(name: string | undefined): string {
  if (name === undefined) return 'utf-8';
  const lower = name.toLowerCase();
  if (lower === 'base64') return 'base64';
  if (lower === 'utf8' || lower === 'utf-8') return 'utf-8';
  if (!iconv().encodingExists(lower)) throw E.encodingUnknown(name);
  return lower;
}

/** A NUL byte in the first 8 KiB marks a file as binary (as git and grep do); UTF-16 with a BOM is text. */
export function looksBinary(buf: Buffer): boolean {
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) return false;
  const end = Math.min(buf.length, SNIFF_BYTES);
  return buf.subarray(0, end).includes(0);
}

/** Decodes bytes; utf-8 is strict (ENCODING_ERROR on invalid sequences). The BOM, if any, stays as U+FEFF. */
export function decodeText(buf: Buffer, encoding: string, rel: string): string {
  if (encoding === 'base64') return buf.toString('base64');
  if (encoding === 'utf-8') {
    try {
      return utf8Fatal.decode(buf);
    } catch {
      throw E.notUtf8(rel);
    }
  }
  return iconv().decode(buf, encoding, { stripBOM: false });
}

export function encodeText(text: string, encoding: string): Buffer {
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(text)) throw E.base64Invalid();
    return Buffer.from(text, 'base64');
  }
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8');
  return iconv().encode(text, encoding);
}

export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  let i = -1;
  while ((i = text.indexOf('\n', i + 1)) !== -1) n++;
  return text.endsWith('\n') ? n : n + 1;
}

export function countLinesInBuffer(buf: Buffer): number {
  if (buf.length === 0) return 0;
  let n = 0;
  let i = -1;
  while ((i = buf.indexOf(10, i + 1)) !== -1) n++;
  return buf[buf.length - 1] === 10 ? n : n + 1;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}
