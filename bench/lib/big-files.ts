// Big files on a fresh toolgate instance (so RSS figures start from an idle process): line ranges of
// a 1 GiB file, a one-line edit in a 50 MiB file against a plain durable write of the same bytes,
// and a 5 MiB overwrite that changes every line (the diff bound). Each with the extra RSS of the
// toolgate process over its RSS just before the call.
import fs from 'node:fs/promises';
import path from 'node:path';
import { BACKUP_KEEP, durableWrite, guardedEdit } from './durable-write.js';
import { editFor, EDIT_MARKER, EDIT_STATES, makeEditFile, sha256, slicePool, type BigFileInfo } from './fixtures.js';
import { envelopeOf, post, type Answer } from './http-client.js';
import { progress } from './log.js';
import { options } from './options.js';
import type { Peer } from './peer.js';
import { rssOf, watchPeak } from './rss.js';
import type { Server } from './servers.js';
import { fmt, median, MiB, pairedRatio } from './stats.js';
import { READ_REL } from './workloads.js';

export interface Timed {
  ms: number;
  extraRssMiB: number;
}

export interface Figure {
  median: number;
  rounds: number[];
}

export interface BigResults {
  file: { bytes: number; lines: number };
  /** RSS of the fresh instance before any call, and after one call of each kind (the baseline of the figures). */
  freshRssMiB: number;
  idleRssMiB: number;
  read4kMs: Figure;
  head100Ms: Figure;
  head100ExtraRssMiB: Figure;
  head100Ratio: number;
  tail100Ms: Figure;
  tail100ExtraRssMiB: Figure;
  /** Absolute peak RSS of the process during the call (the extra RSS depends on what the heap kept from earlier calls). */
  tail100PeakRssMiB: Figure;
  /** The last 100 lines asked as `tail: 100`: read backwards from the end, so its cost follows the lines, not the file. */
  tailFromEnd100Ms: Figure;
  tailFromEnd100ExtraRssMiB: Figure;
  /** tail: 100 against lines 1-100, paired request by request. */
  tailFromEnd100Ratio: number;
  peer: { head100Ms: Figure; tail100Ms: Figure } | null;
  edit50Ms: Figure;
  edit50ExtraRssMiB: Figure;
  edit50PeakRssMiB: Figure;
  plainWrite50Ms: Figure;
  edit50Ratio: number;
  /** The floor of the same edit (read, both hashes, backup copy, durable write; in the bench process) and its ratio to the plain write. */
  guardedEdit50Ms: Figure;
  guardedEdit50Ratio: number;
  overwrite5: { ms: Figure; extraRssMiB: Figure; peakRssMiB: Figure; plainWriteMs: Figure; ratio: number; linesAdded: number; linesRemoved: number; diffTruncated: boolean; status: string };
  rssMethod: string;
}

const fig = (rounds: number[]): Figure => ({ median: median(rounds), rounds });

export async function bigSection(tg: Server, auth: Record<string, string>, ws: string, big: BigFileInfo, pool: Buffer, peer: Peer | null): Promise<BigResults> {
  const call = async (tool: string, args: Record<string, unknown>, body?: string): Promise<{ answer: Answer; extra: number; peak: number; env: ReturnType<typeof envelopeOf> }> => {
    const watch = watchPeak(tg.pid);
    const answer = await post(tg.port, `/v1/tools/${tool}`, body ?? JSON.stringify(args), auth);
    const peak = watch.stop();
    return { answer, extra: (peak - watch.before) / MiB, peak: peak / MiB, env: envelopeOf(answer, `${tool} ${String(args.path ?? '')}`) };
  };
  const dir = path.join(ws, 'scratch', 'big');
  await fs.mkdir(dir, { recursive: true });
  const rel = (f: string) => path.relative(ws, f).split(path.sep).join('/');

  // 50 MiB file with one marker line, in both states, and the plain-write target beside it.
  const editFile = path.join(dir, 'edit-50m.txt');
  const plainFile = path.join(dir, 'plain-50m.txt');
  const s0 = makeEditFile(pool, 31337, 50 * MiB);
  const s1 = Buffer.from(s0.toString('latin1').replace(`${EDIT_MARKER}${EDIT_STATES[0]}`, `${EDIT_MARKER}${EDIT_STATES[1]}`), 'latin1');
  await fs.writeFile(editFile, s0);
  let editState: 0 | 1 = 0;
  const floorFile = path.join(dir, 'floor-50m.txt');
  await fs.writeFile(floorFile, s0);
  let floorState: 0 | 1 = 0;
  let floorBackups = 0;
  // The floor keeps its backups as toolgate does (the newest BACKUP_KEEP, the oldest removed in the timed part):
  // 50 MiB backups left dirty in the page cache are written back while later edits fsync.
  const floorBackup = (n: number) => path.join(dir, `floor-50m.bak.${n}`);

  // 5 MiB overwrite: B changes every line of A (a suffix per line), both under TOOLGATE_MAX_WRITE_BYTES.
  const overFile = path.join(dir, 'over-5m.txt');
  const overA = slicePool(pool, 99991, Math.floor(4.8 * MiB));
  const overB = Buffer.from(overA.toString('latin1').replace(/\n/g, ' ~\n'), 'latin1');
  if (overB.length > 5 * MiB) throw new Error('5 MiB overwrite: B is over 5 MiB');
  await fs.writeFile(overFile, overA);
  const overBodies = [
    JSON.stringify({ path: rel(overFile), content: overB.toString('latin1'), expected_sha256: sha256(overA) }),
    JSON.stringify({ path: rel(overFile), content: overA.toString('latin1'), expected_sha256: sha256(overB) }),
  ] as const;
  const overPlain = path.join(dir, 'plain-5m.txt');
  let overState: 0 | 1 = 0;

  const head = { path: big.rel, start_line: 1, end_line: 100 };
  const tail = { path: big.rel, start_line: big.lines - 99, end_line: big.lines };
  const tailFromEnd = { path: big.rel, tail: 100 };
  const editBody = () => {
    const e = editFor(editState);
    return JSON.stringify({ path: rel(editFile), old_text: e.old, new_text: e.new });
  };

  const freshRssMiB = rssOf(tg.pid) / MiB;
  // Warm-up: each kind of call once (JIT, page cache), then the idle baseline.
  await call('read_file', { path: READ_REL });
  await call('read_file', head);
  await call('edit_file', {}, editBody());
  editState = editState === 0 ? 1 : 0;
  await call('write_file', {}, overBodies[overState]);
  overState = overState === 0 ? 1 : 0;
  await new Promise((r) => setTimeout(r, 500));
  const idleRssMiB = rssOf(tg.pid) / MiB;
  const rssMethod = watchPeak(tg.pid).method;
  progress(`  big files: toolgate RSS ${fmt(freshRssMiB)} MiB fresh, ${fmt(idleRssMiB)} MiB after one call of each kind (peak RSS via ${rssMethod})`);

  const r4k: number[] = [];
  const rHead: number[] = [];
  const rHeadRss: number[] = [];
  const rTail: number[] = [];
  const rTailRss: number[] = [];
  const rTailPeak: number[] = [];
  const rTailEnd: number[] = [];
  const rTailEndRss: number[] = [];
  const rTailEndPaired: number[] = [];
  const rEditPeak: number[] = [];
  const rOverPeak: number[] = [];
  const pHead: number[] = [];
  const pTail: number[] = [];
  const rEdit: number[] = [];
  const rEditRss: number[] = [];
  const rPlain: number[] = [];
  const rFloor: number[] = [];
  const rOver: number[] = [];
  const rOverRss: number[] = [];
  const rOverPlain: number[] = [];
  let overFacts = { linesAdded: 0, linesRemoved: 0, diffTruncated: false, status: '' };

  for (let r = 0; r < options.bigRounds; r++) {
    // Lines 1-100 of 1 GiB against the whole 4 KiB file, request by request.
    const a: number[] = [];
    const b: number[] = [];
    const bRss: number[] = [];
    for (let i = 0; i < options.pairs; i++) {
      const first = (i + r) % 2 === 0;
      if (!first) {
        const h = await call('read_file', head);
        b.push(h.answer.ms);
        bRss.push(h.extra);
      }
      a.push((await call('read_file', { path: READ_REL })).answer.ms);
      if (first) {
        const h = await call('read_file', head);
        b.push(h.answer.ms);
        bRss.push(h.extra);
      }
    }
    r4k.push(median(a));
    rHead.push(median(b));
    rHeadRss.push(median(bRss));

    // The last 100 lines asked as tail: read from the end, paired with lines 1-100.
    {
      const h: number[] = [];
      const e: number[] = [];
      const eRss: number[] = [];
      for (let i = 0; i < options.pairs; i++) {
        h.push((await call('read_file', head)).answer.ms);
        const te = await call('read_file', tailFromEnd);
        if (te.env.data.end_line !== -1) throw new Error(`tail: 100: end_line ${String(te.env.data.end_line)}, expected -1`);
        e.push(te.answer.ms);
        eRss.push(te.extra);
      }
      rTailEnd.push(median(e));
      rTailEndRss.push(median(eRss));
      rTailEndPaired.push(median(h));
    }

    // The last 100 lines by line numbers scan the whole file: three rounds at most, to keep the run short.
    if (r < 3) {
      const tl = await call('read_file', tail);
      if (tl.env.data.end_line !== big.lines) throw new Error(`last 100 lines: end_line ${String(tl.env.data.end_line)}, expected ${big.lines}`);
      rTail.push(tl.answer.ms);
      rTailRss.push(tl.extra);
      rTailPeak.push(tl.peak);
    }
    if (peer) {
      let t0 = performance.now();
      await peer.call('read_text_file', { path: big.file, head: 100 });
      pHead.push(performance.now() - t0);
      t0 = performance.now();
      await peer.call('read_text_file', { path: big.file, tail: 100 });
      pTail.push(performance.now() - t0);
    }

    // One-line edit of 50 MiB against the plain durable write of the bytes it produces.
    const doEdit = async () => {
      const e = await call('edit_file', {}, editBody());
      editState = editState === 0 ? 1 : 0;
      rEdit.push(e.answer.ms);
      rEditRss.push(e.extra);
      rEditPeak.push(e.peak);
    };
    const doPlain = async () => {
      const t0 = performance.now();
      await durableWrite(plainFile, editState === 0 ? s1 : s0);
      rPlain.push(performance.now() - t0);
    };
    const doFloor = async () => {
      const e = editFor(floorState);
      const n = floorBackups++;
      const t0 = performance.now();
      await guardedEdit(floorFile, floorBackup(n), Buffer.from(e.old), Buffer.from(e.new));
      if (n >= BACKUP_KEEP) await fs.rm(floorBackup(n - BACKUP_KEEP));
      rFloor.push(performance.now() - t0);
      floorState = floorState === 0 ? 1 : 0;
    };
    for (const step of r % 2 === 0 ? [doEdit, doPlain, doFloor] : [doFloor, doPlain, doEdit]) await step();

    // 5 MiB overwrite with every line changed, against a plain durable write of the same 5 MiB.
    const doOver = async () => {
      const o = await call('write_file', {}, overBodies[overState]);
      overState = overState === 0 ? 1 : 0;
      rOver.push(o.answer.ms);
      rOverRss.push(o.extra);
      rOverPeak.push(o.peak);
      overFacts = {
        linesAdded: Number(o.env.stats.lines_added ?? o.env.data.lines_added),
        linesRemoved: Number(o.env.stats.lines_removed ?? o.env.data.lines_removed),
        diffTruncated: o.env.data.diff_truncated === true,
        status: o.env.status,
      };
    };
    const doOverPlain = async () => {
      const t0 = performance.now();
      await durableWrite(overPlain, overState === 0 ? overB : overA);
      rOverPlain.push(performance.now() - t0);
    };
    if (r % 2 === 0) {
      await doOver();
      await doOverPlain();
    } else {
      await doOverPlain();
      await doOver();
    }
    progress(
      `  big files round ${r + 1}/${options.bigRounds}: 4KiB ${fmt(r4k[r])} ms, 1GiB lines 1-100 ${fmt(rHead[r])} ms (+${fmt(rHeadRss[r])} MiB), last 100 ${r < 3 ? `${fmt(rTail[r])} ms (+${fmt(rTailRss[r])} MiB)` : 'skipped'}, ` +
        `edit 50MiB ${fmt(rEdit[r])} ms (+${fmt(rEditRss[r])} MiB, peak ${fmt(rEditPeak[r])} MiB) vs plain ${fmt(rPlain[r])} ms (floor ${fmt(rFloor[r])} ms), overwrite 5MiB ${fmt(rOver[r])} ms (+${fmt(rOverRss[r])} MiB) vs plain ${fmt(rOverPlain[r])} ms`,
    );
  }
  await fs.rm(plainFile, { force: true });
  await fs.rm(floorFile, { force: true });
  for (let n = Math.max(0, floorBackups - BACKUP_KEEP); n < floorBackups; n++) await fs.rm(floorBackup(n), { force: true });
  await fs.rm(overPlain, { force: true });
  return {
    file: { bytes: big.bytes, lines: big.lines },
    freshRssMiB,
    idleRssMiB,
    read4kMs: fig(r4k),
    head100Ms: fig(rHead),
    head100ExtraRssMiB: fig(rHeadRss),
    head100Ratio: pairedRatio(rHead, r4k),
    tail100Ms: fig(rTail),
    tail100ExtraRssMiB: fig(rTailRss),
    tail100PeakRssMiB: fig(rTailPeak),
    tailFromEnd100Ms: fig(rTailEnd),
    tailFromEnd100ExtraRssMiB: fig(rTailEndRss),
    tailFromEnd100Ratio: pairedRatio(rTailEnd, rTailEndPaired),
    peer: peer ? { head100Ms: fig(pHead), tail100Ms: fig(pTail) } : null,
    edit50Ms: fig(rEdit),
    edit50ExtraRssMiB: fig(rEditRss),
    edit50PeakRssMiB: fig(rEditPeak),
    plainWrite50Ms: fig(rPlain),
    edit50Ratio: pairedRatio(rEdit, rPlain),
    guardedEdit50Ms: fig(rFloor),
    guardedEdit50Ratio: pairedRatio(rFloor, rPlain),
    overwrite5: { ms: fig(rOver), extraRssMiB: fig(rOverRss), peakRssMiB: fig(rOverPeak), plainWriteMs: fig(rOverPlain), ratio: pairedRatio(rOver, rOverPlain), ...overFacts },
    rssMethod,
  };
}
