// Checks an Office file's zip container before any parser sees it, and hands the parser only entries that
// were inflated here under a byte counter.
//
// Why yauzl: it reads the central directory itself (zip64, CP437/UTF-8 names, a Buffer or a file
// descriptor), exposes each local header, and gives the raw inflate stream of one entry, so the bytes can
// be counted as they come out and the stream destroyed the moment a limit is passed. JSZip (inside mammoth
// and exceljs) inflates a whole entry before it compares the result with the declared size, and fflate's
// unzipSync allocates what the header declares; neither can stop a lying entry early. Inflating is
// node:zlib's inflateRaw (inside yauzl); nothing here parses deflate data by hand.
//
// The parser then gets a fresh zip of stored (uncompressed) entries built from these checked bytes
// (storedZip), not the original file: whatever the original's headers say, the parser can only read what
// was counted here, and reading a stored entry inflates nothing. Each entry is inflated straight into its
// place in that zip (one buffer sized from the checked headers), so a document costs its inflated size
// once, not three times (chunks, the entry, the copy in the zip).
import { read as fsRead } from 'node:fs';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { OfficeError } from './errors.js';
import { E } from '../errors.js';

export interface ZipLimits {
  /** Entries in the central directory, directories included. */
  maxEntries: number;
  /** Inflated bytes of one entry. */
  maxEntryBytes: number;
  /** Inflated bytes of all entries handed to the parser. */
  maxTotalBytes: number;
  /** Inflated / compressed bytes of one entry, checked once the entry passes RATIO_GRACE_BYTES. */
  maxRatio: number;
  /** Bytes of one entry name. */
  maxNameBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 64 * 1024 * 1024,
  maxTotalBytes: 128 * 1024 * 1024,
  // Apache POI's default minimum inflate ratio is 0.01, i.e. 100x.
  maxRatio: 100,
  maxNameBytes: 1024,
};

// Small entries are not held to the ratio (as in POI): a few KiB of repeated XML can pass 100x legitimately,
// and a small entry cannot hurt anyway.
const RATIO_GRACE_BYTES = 1024 * 1024;

export interface CheckOptions {
  limits?: Partial<ZipLimits>;
  /**
   * Entries the parser does not need (embedded objects, macros, thumbnails): counted and name-checked but
   * never inflated, and left out of the result. An embedded Office file is itself a zip; skipping it is
   * why a real document with an embedded chart workbook still reads, while a zip anywhere else is refused.
   */
  skip?: (name: string) => boolean;
  /**
   * Called once the headers have passed, with the inflated bytes they declare in all, before anything is
   * inflated: the caller takes its share of a memory budget here (run.ts).
   */
  beforeInflate?: (declaredBytes: number) => Promise<void>;
  /**
   * Entries whose reader inflates them itself, as far as it needs (a range read stops inside a worksheet):
   * checked like the others up to inflating (name, flags, declared sizes and ratio, both headers), then
   * handed over compressed, with the limits that reader must apply (`inflateLimitError`).
   */
  defer?: (name: string) => boolean;
  /**
   * Entries the caller keeps for itself (a document's images, returned as attachments): checked like the
   * others up to inflating, and replaced in the stored zip by `placeholder(name)`, so the parser never sees
   * their bytes. CheckedArchive.readHeld then inflates and checks them all under the same counters, once
   * the parser is done with its memory, and keeps those asked for; a hostile one fails the read as before.
   */
  hold?: { match: (name: string) => boolean; placeholder: (name: string) => Buffer };
}

/** An entry handed over compressed (CheckOptions.defer): its bytes are at `offset` of CheckedArchive.deferred. */
export interface DeferredEntry {
  name: string;
  offset: number;
  length: number;
  /** 0 stored, 8 deflated. */
  method: number;
  /** The inflated size both headers declare. */
  declared: number;
}

export interface CheckedArchive {
  /** Entry name → inflated bytes (views into `stored`), for every file entry that was not skipped. */
  entries: Map<string, Buffer>;
  /** Entries held back from the stored zip (CheckOptions.hold): name → declared inflated size. */
  held: Map<string, number>;
  /** Inflates and checks every held entry, keeping those named (each in a buffer of its own); call it once. */
  readHeld: (names: Iterable<string>) => Promise<Map<string, Buffer>>;
  /** The stored zip of `entries` (storedZip), owning its ArrayBuffer. */
  stored: Buffer;
  /** Names left out by `skip`. */
  skipped: string[];
  /** Sum of the inflated bytes in `entries`. */
  inflatedBytes: number;
  /** The compressed bytes of the deferred entries, one after another (owning its ArrayBuffer). */
  deferred: Buffer;
  deferredEntries: DeferredEntry[];
  /** The limits a reader of deferred entries applies; inflatedBytes already counts against maxTotalBytes. */
  limits: ZipLimits & { ratioGraceBytes: number };
}

/** A file descriptor to read the zip from (not closed here), instead of a Buffer. */
export interface FdSource {
  fd: number;
}

const ZIP_MAGIC = [0x50, 0x4b]; // "PK"
const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const NESTED_NAME = /\.(zip|jar|docx|docm|xlsx|xlsm|pptx|pptm|odt|ods|odp|epub|gz|tgz|7z|rar|bz2|xz|zst)$/i;
const XML_NAME = /\.(xml|rels|vml)$/i;
// Office never writes a DTD; one in a part is an entity-expansion attempt (billion laughs) or an external
// entity. Searched in UTF-8 and both UTF-16 byte orders, since an XML part may be UTF-16.
const DTD_MARKERS = ['<!DOCTYPE', '<!ENTITY'].flatMap((s) => [Buffer.from(s, 'latin1'), Buffer.from(s, 'utf16le'), Buffer.from(s, 'utf16le').subarray(1)]);

const readFd = promisify(fsRead);
const EMPTY = Buffer.alloc(0);

async function head(source: Buffer | FdSource): Promise<Buffer> {
  if (Buffer.isBuffer(source)) return source.subarray(0, 8);
  const buf = Buffer.alloc(8);
  const { bytesRead } = await readFd(source.fd, buf, 0, 8, 0);
  return buf.subarray(0, bytesRead);
}

/** Refuses what is no zip at all, with a message that says what the file seems to be instead. */
function assertZipMagic(start: Buffer): void {
  if (start.length >= 8 && start.equals(OLE_MAGIC)) {
    throw E.oleNotZip();
  }
  if (start.length < 4 || start[0] !== ZIP_MAGIC[0] || start[1] !== ZIP_MAGIC[1]) {
    throw E.notZip();
  }
}

function open(source: Buffer | FdSource): Promise<yauzl.ZipFile> {
  // lazyEntries: entries are read one at a time, on demand. decodeStrings off: names are decoded and
  // validated below, so that a bad name is our typed error rather than a yauzl Error. Entry sizes are
  // checked by the counter below, which also covers the limits, so yauzl's own size check is off.
  const options = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false };
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, zip: yauzl.ZipFile) => (err ? reject(err) : resolve(zip));
    if (Buffer.isBuffer(source)) yauzl.fromBuffer(source, options, done);
    else yauzl.fromFd(source.fd, options, done);
  });
}

function readEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** Decodes and validates one name; returns it, or throws ARCHIVE_UNSAFE. */
function checkName(entry: yauzl.Entry, limits: ZipLimits): string {
  const raw = entry.fileNameRaw;
  if (raw.length === 0) throw E.entryNameEmpty();
  if (raw.length > limits.maxNameBytes) {
    throw E.entryNameTooLong(raw.length, limits.maxNameBytes);
  }
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
  const problem = yauzl.validateFileName(name) ?? (/[\u0000-\u001f]/.test(name) ? `control character in ${JSON.stringify(name)}` : null);
  if (problem) throw E.entryNameUnsafe(problem, name);
  return name;
}

function isNestedArchive(name: string, start: Buffer): boolean {
  if (NESTED_NAME.test(name)) return true;
  // Zip local header, empty zip, spanned zip; gzip.
  if (start.length >= 4 && start[0] === 0x50 && start[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes(start.readUInt16BE(2))) return true;
  return start.length >= 2 && start[0] === 0x1f && start[1] === 0x8b;
}

function hasDtd(name: string, data: Buffer): boolean {
  return XML_NAME.test(name) && DTD_MARKERS.some((marker) => data.includes(marker));
}

/**
 * The counter's verdict on an entry that has inflated `count` bytes so far (with `totalBefore` bytes of other
 * entries before it): null while within its declared size, the per-entry limit, the remaining total and the
 * ratio. Shared with the office worker, which inflates the worksheets of a range read itself
 * (xlsx-stream.ts), so it is shipped there as source text: self-contained, no imports.
 */
export function inflateLimitError(
  name: string,
  count: number,
  declared: number,
  compressedSize: number,
  limits: { maxEntryBytes: number; maxTotalBytes: number; maxRatio: number; ratioGraceBytes: number },
  totalBefore: number,
): { code: 'ARCHIVE_UNSAFE' | 'ARCHIVE_TOO_LARGE'; message: string } | null {
  if (count > declared) {
    return { code: 'ARCHIVE_UNSAFE', message: `Entry '${name}' inflates past the ${declared} bytes its header declares: the size fields lie (a zip bomb pattern); the document was not parsed.` };
  }
  if (count > limits.maxEntryBytes) return { code: 'ARCHIVE_TOO_LARGE', message: `Entry '${name}' inflates to more than ${limits.maxEntryBytes} bytes, the per-entry limit.` };
  if (totalBefore + count > limits.maxTotalBytes) {
    return { code: 'ARCHIVE_TOO_LARGE', message: `The document inflates to more than ${limits.maxTotalBytes} bytes in all, the limit; it was not parsed.` };
  }
  if (count > limits.ratioGraceBytes && count > limits.maxRatio * Math.max(compressedSize, 1)) {
    return { code: 'ARCHIVE_UNSAFE', message: `Entry '${name}' inflates more than ${limits.maxRatio}x its compressed size (a zip bomb pattern); the document was not parsed.` };
  }
  return null;
}

/**
 * Inflates one entry under a counter: stops (destroying the inflate stream) as soon as the entry passes its
 * declared size, the per-entry limit, the remaining total, or the ratio; never trusts the size fields.
 */
async function inflateCounted(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  name: string,
  limits: ZipLimits,
  totalSoFar: number,
  target: Buffer | null,
): Promise<{ data: Buffer; crc: number; head: Buffer }> {
  // With no target the entry is only counted and checked (a held entry's first pass): its start is kept.
  const head = Buffer.alloc(4);
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw E.zipCorrupt(`${name}: ${(err as Error).message}`);
  }
  const declared = entry.uncompressedSize;
  let count = 0;
  // The stored zip's CRC, chunk by chunk: one pass over 120 MiB at the end held the event loop for a tenth of a second.
  let crc = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      count += chunk.length;
      const limitError = inflateLimitError(name, count, declared, entry.compressedSize, { ...limits, ratioGraceBytes: RATIO_GRACE_BYTES }, totalSoFar);
      if (limitError) throw E.entryInflateLimit(limitError.code, limitError.message, name);
      // `target` holds exactly `declared` bytes, and count never passes it here.
      if (count - chunk.length < head.length) chunk.copy(head, count - chunk.length);
      if (target) chunk.copy(target, count - chunk.length);
      crc = crc32(chunk, crc);
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof OfficeError) throw err;
    throw E.zipCorrupt(`${name}: ${(err as Error).message}`);
  }
  if (count !== declared) throw E.zipCorrupt(`entry '${name}' has ${count} bytes, its header declares ${declared}`);
  return { data: target ? target.subarray(0, count) : EMPTY, crc, head: head.subarray(0, Math.min(count, head.length)) };
}

/** Copies one entry's compressed bytes into `target` (exactly its compressed size), inflating nothing. */
async function readCompressed(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string, target: Buffer): Promise<void> {
  let count = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry, { decodeFileData: false });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (count + chunk.length > target.length) throw new Error('longer than its compressed size');
        chunk.copy(target, count);
        count += chunk.length;
      }
    } finally {
      stream.destroy();
    }
  } catch (err) {
    throw E.zipCorrupt(`${name}: ${(err as Error).message}`);
  }
  if (count !== target.length) throw E.zipCorrupt(`entry '${name}' has ${count} compressed bytes, its header declares ${target.length}`);
}

/** Compares the local header with the central directory: two readers that disagree are an attack surface. */
async function checkLocalHeader(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string): Promise<void> {
  let local: yauzl.LocalFileHeader;
  try {
    local = await zip.readLocalFileHeaderPromise(entry);
  } catch (err) {
    throw E.zipCorrupt(`${name}: ${(err as Error).message}`);
  }
  if (!local.fileName.equals(entry.fileNameRaw)) {
    throw E.entryLocalNameDiffers(name);
  }
  // Bit 3: sizes come in a data descriptor after the data (the local fields are zero); 0xffffffff: zip64.
  const deferred = (local.generalPurposeBitFlag & 0x8) !== 0;
  const sizesMatch = (localSize: number, centralSize: number) => localSize === 0xffffffff || localSize === centralSize || (deferred && localSize === 0);
  if (!sizesMatch(local.compressedSize, entry.compressedSize) || !sizesMatch(local.uncompressedSize, entry.uncompressedSize)) {
    throw E.entryLocalSizesDiffer(name);
  }
}

/** An entry that passed the header checks, with the name checkName decoded. */
interface WantedEntry {
  entry: yauzl.Entry;
  name: string;
}

/**
 * Checks every entry of the zip in `source` against `limits` and returns the inflated entries the parser may
 * read. Throws OfficeError: NOT_AN_ARCHIVE, ARCHIVE_CORRUPT, ARCHIVE_TOO_LARGE or ARCHIVE_UNSAFE.
 */
export async function checkZip(source: Buffer | FdSource, options: CheckOptions = {}): Promise<CheckedArchive> {
  const limits = { ...DEFAULT_ZIP_LIMITS, ...options.limits };
  assertZipMagic(await head(source));
  let zip: yauzl.ZipFile;
  try {
    zip = await open(source);
  } catch (err) {
    throw E.zipCorrupt((err as Error).message);
  }
  let closeLater = false;
  try {
    // The count is known from the end record before a single entry is read.
    if (zip.entryCount > limits.maxEntries) {
      throw E.archiveTooManyEntries(zip.entryCount, limits.maxEntries);
    }
    let entries: yauzl.Entry[];
    try {
      entries = await readEntries(zip);
    } catch (err) {
      throw E.zipCorrupt((err as Error).message);
    }
    const { wanted, skipped, declaredTotal } = checkHeaders(entries, limits, options);
    await options.beforeInflate?.(declaredTotal);
    const later = wanted.filter(({ name }) => options.defer?.(name) === true);
    const { deferred, deferredEntries } = await readDeferred(zip, later);
    const inflated = await inflateWanted(zip, later.length > 0 ? wanted.filter((w) => !later.includes(w)) : wanted, limits, options);
    closeLater = inflated.heldEntries.size > 0;
    return {
      entries: inflated.out,
      held: new Map([...inflated.heldEntries].map(([name, entry]) => [name, entry.uncompressedSize])),
      readHeld: heldReader(zip, source, inflated.heldEntries, limits, inflated.total),
      stored: inflated.stored,
      skipped,
      inflatedBytes: inflated.total,
      deferred, deferredEntries, limits: { ...limits, ratioGraceBytes: RATIO_GRACE_BYTES } };
  } finally {
    // yauzl's close() also closes a file descriptor, which belongs to the caller; with entries held, readHeld closes.
    if (Buffer.isBuffer(source) && !closeLater) zip.close();
  }
}

/** First pass, headers only: names, flags and declared sizes, before anything is inflated. */
function checkHeaders(entries: yauzl.Entry[], limits: ZipLimits, options: CheckOptions): { wanted: WantedEntry[]; skipped: string[]; declaredTotal: number } {
  const names = new Set<string>();
  const wanted: WantedEntry[] = [];
  const skipped: string[] = [];
  let declaredTotal = 0;
  for (const entry of entries) {
    const name = checkName(entry, limits);
    if (names.has(name)) throw E.entryNameTwice(name);
    names.add(name);
    if (name.endsWith('/')) continue;
    if (options.skip?.(name)) {
      skipped.push(name);
      continue;
    }
    checkEntryHeader(entry, name, limits);
    declaredTotal += entry.uncompressedSize;
    if (declaredTotal > limits.maxTotalBytes) {
      throw E.archiveDeclaredTotal(limits.maxTotalBytes);
    }
    wanted.push({ entry, name });
  }
  return { wanted, skipped, declaredTotal };
}

/** One wanted entry's flags, method, name and declared sizes, against the limits. */
function checkEntryHeader(entry: yauzl.Entry, name: string, limits: ZipLimits): void {
  if (entry.isEncrypted()) throw E.entryEncrypted(name);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw E.entryCompressionUnknown(name, entry.compressionMethod);
  }
  if (NESTED_NAME.test(name)) throw E.archiveNested(name);
  if (entry.uncompressedSize > limits.maxEntryBytes) {
    throw E.entryDeclaredTooLarge(name, entry.uncompressedSize, limits.maxEntryBytes);
  }
  if (entry.uncompressedSize > RATIO_GRACE_BYTES && entry.uncompressedSize > limits.maxRatio * Math.max(entry.compressedSize, 1)) {
    throw E.entryDeclaredRatio(name, limits.maxRatio);
  }
}

/** Copies the deferred entries' compressed bytes one after another into one buffer (CheckOptions.defer). */
async function readDeferred(zip: yauzl.ZipFile, later: WantedEntry[]): Promise<{ deferred: Buffer; deferredEntries: DeferredEntry[] }> {
  const deferredEntries: DeferredEntry[] = [];
  const deferred = Buffer.allocUnsafeSlow(later.reduce((n, { entry }) => n + entry.compressedSize, 0));
  for (const { entry, name } of later) {
    await checkLocalHeader(zip, entry, name);
    const offset = deferredEntries.reduce((n, e) => n + e.length, 0);
    await readCompressed(zip, entry, name, deferred.subarray(offset, offset + entry.compressedSize));
    deferredEntries.push({ name, offset, length: entry.compressedSize, method: entry.compressionMethod, declared: entry.uncompressedSize });
  }
  return { deferred, deferredEntries };
}

/**
 * Second pass: inflates under the counter into the stored zip (a held entry into its own buffer, its
 * placeholder into the zip), then looks inside.
 */
async function inflateWanted(
  zip: yauzl.ZipFile,
  wanted: WantedEntry[],
  limits: ZipLimits,
  options: CheckOptions,
): Promise<{ out: Map<string, Buffer>; stored: Buffer; total: number; heldEntries: Map<string, yauzl.Entry> }> {
  // An XML part is never held: the DTD check reads it whole.
  const placeholders = wanted.map(({ name }) => (options.hold?.match(name) && !XML_NAME.test(name) ? options.hold.placeholder(name) : undefined));
  const layout = new StoredZipWriter(wanted.map(({ entry, name }, i) => ({ name, size: placeholders[i]?.length ?? entry.uncompressedSize })));
  const out = new Map<string, Buffer>();
  let total = 0;
  const heldEntries = new Map<string, yauzl.Entry>();
  for (const [i, { entry, name }] of wanted.entries()) {
    await checkLocalHeader(zip, entry, name);
    const placeholder = placeholders[i];
    if (placeholder) {
      // Inflated and checked by readHeld, once the parser (which never sees these bytes) is done.
      placeholder.copy(layout.slot(i));
      layout.setCrc(i, crc32(placeholder));
      heldEntries.set(name, entry);
      continue;
    }
    const { data, crc } = await inflateCounted(zip, entry, name, limits, total, layout.slot(i));
    layout.setCrc(i, crc);
    total += data.length;
    if (isNestedArchive(name, data.subarray(0, 4))) throw E.archiveNested(name);
    if (hasDtd(name, data)) {
      throw E.partHasDtd(name);
    }
    out.set(name, data);
  }
  return { out, stored: layout.finish(), total, heldEntries };
}

/** CheckedArchive.readHeld: the held entries, inflated under the same counters after `totalSoFar` bytes. */
function heldReader(
  zip: yauzl.ZipFile,
  source: Buffer | FdSource,
  heldEntries: Map<string, yauzl.Entry>,
  limits: ZipLimits,
  totalSoFar: number,
): (names: Iterable<string>) => Promise<Map<string, Buffer>> {
  let total = totalSoFar;
  return async (names) => {
    const wantedNames = new Set(names);
    const held = new Map<string, Buffer>();
    try {
      // Every held entry passes the counter and the checks, as all others did; only those asked for are kept.
      for (const [name, entry] of heldEntries) {
        const keep = wantedNames.has(name);
        const { data, head } = await inflateCounted(zip, entry, name, limits, total, keep ? Buffer.allocUnsafeSlow(entry.uncompressedSize) : null);
        total += entry.uncompressedSize;
        if (isNestedArchive(name, head)) throw E.archiveNested(name);
        if (keep) held.set(name, data);
      }
    } finally {
      if (Buffer.isBuffer(source)) zip.close();
    }
    return held;
  };
}

/**
 * A zip of stored (method 0) entries laid out in one buffer from the names and sizes the headers declared:
 * each entry's data is written into `slot(i)` (by inflateCounted, which fills it exactly or throws) and its
 * CRC given to `setCrc(i)`, then `finish()` writes the headers. Names are UTF-8 (flag bit 11); the
 * limits keep every size and count within classic zip fields (no zip64).
 */
class StoredZipWriter {
  readonly #buffer: Buffer;
  readonly #entries: Array<{ name: Buffer; size: number; offset: number; crc: number }> = [];
  readonly #centralAt: number;

  constructor(files: Array<{ name: string; size: number }>) {
    let offset = 0;
    for (const f of files) {
      const name = Buffer.from(f.name, 'utf8');
      this.#entries.push({ name, size: f.size, offset, crc: 0 });
      offset += 30 + name.length + f.size;
    }
    this.#centralAt = offset;
    const central = this.#entries.reduce((n, e) => n + 46 + e.name.length, 0);
    // Not zero-filled (a tenth of a second for 120 MiB): every data byte is inflated into it or the whole
    // buffer is dropped, and finish() zeroes each header before writing it.
    this.#buffer = Buffer.allocUnsafeSlow(offset + central + 22);
  }

  setCrc(i: number, crc: number): void {
    (this.#entries[i] as { crc: number }).crc = crc;
  }

  slot(i: number): Buffer {
    const e = this.#entries[i] as { name: Buffer; size: number; offset: number; crc: number };
    const start = e.offset + 30 + e.name.length;
    return this.#buffer.subarray(start, start + e.size);
  }

  finish(): Buffer {
    const b = this.#buffer;
    let at = this.#centralAt;
    b.fill(0, at);
    for (const e of this.#entries) {
      const crc = e.crc;
      b.fill(0, e.offset, e.offset + 30);
      b.writeUInt32LE(0x04034b50, e.offset);
      b.writeUInt16LE(20, e.offset + 4);
      b.writeUInt16LE(0x800, e.offset + 6);
      b.writeUInt32LE(crc, e.offset + 14);
      b.writeUInt32LE(e.size, e.offset + 18);
      b.writeUInt32LE(e.size, e.offset + 22);
      b.writeUInt16LE(e.name.length, e.offset + 26);
      e.name.copy(b, e.offset + 30);
      b.writeUInt32LE(0x02014b50, at);
      b.writeUInt16LE(20, at + 4);
      b.writeUInt16LE(20, at + 6);
      b.writeUInt16LE(0x800, at + 8);
      b.writeUInt32LE(crc, at + 16);
      b.writeUInt32LE(e.size, at + 20);
      b.writeUInt32LE(e.size, at + 24);
      b.writeUInt16LE(e.name.length, at + 28);
      b.writeUInt32LE(e.offset, at + 42);
      e.name.copy(b, at + 46);
      at += 46 + e.name.length;
    }
    b.writeUInt32LE(0x06054b50, at);
    b.writeUInt16LE(this.#entries.length, at + 8);
    b.writeUInt16LE(this.#entries.length, at + 10);
    b.writeUInt32LE(at - this.#centralAt, at + 12);
    b.writeUInt32LE(this.#centralAt, at + 16);
    return b;
  }
}

/**
 * The zip of the checked entries, all stored (method 0): what the parser opens instead of the original, so
 * that it reads exactly the bytes that were counted and inflates nothing itself. It owns its ArrayBuffer
 * (offset 0), so it can be transferred to a worker (which detaches `archive.entries`).
 */
export function storedZip(archive: CheckedArchive): Buffer {
  return archive.stored;
}
