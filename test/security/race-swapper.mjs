// Race swapper for race.test.ts: a separate process that keeps flipping workspace entries between the
// real thing and a symlink that leads out of the sandbox, so checks and uses of a path disagree.
//
//   node race-swapper.mjs <config.json>
//
// config: { durationMs, clockBase, intervalsFile, pairs: [{ live, realPark, linkPark, linkTarget, kind, files? }] }
// For each pair the real entry (a directory, or a file for kind 'leaf') starts at `live`. One cycle:
//   rename live -> realPark; rename linkPark -> live (symlink in place); rename live -> linkPark;
//   rename realPark -> live. Plain renames, because Node has no renameat2(RENAME_EXCHANGE): between the
//   steps `live` is briefly missing. Tools may delete, replace or recreate `live` meanwhile; the swapper
//   repairs what it finds (junk goes to a park directory inside the workspace) and keeps going.
// On stdout: "ready" once, then one JSON line of counts at the end. The symlink-in-place intervals of each
// pair go to intervalsFile (Float64 [pair, from, to] triples, ns on process.hrtime's clock minus clockBase,
// which is CLOCK_MONOTONIC and so shared with the test process), so the test can tell which calls raced.
import fs from 'node:fs';
import path from 'node:path';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const base = BigInt(config.clockBase);
const now = () => Number(process.hrtime.bigint() - base);

let junk = 0;
const counts = { swaps: 0, repairs: 0, errors: 0 };
const intervals = [];

/** Moves whatever sits at `p` out of the way (into the pair's park directory), if anything does. */
function clear(pair, p) {
  try {
    fs.renameSync(p, path.join(path.dirname(pair.realPark), `junk-${process.pid}-${junk++}`));
    counts.repairs++;
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
}

function isLink(p) {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function makeReal(pair) {
  if (pair.kind === 'leaf') fs.writeFileSync(pair.realPark, 'recreated by the swapper\nline two\n');
  else fs.mkdirSync(pair.realPark);
  counts.repairs++;
}

function makeLink(pair) {
  clear(pair, pair.linkPark);
  fs.symlinkSync(pair.linkTarget, pair.linkPark);
  counts.repairs++;
}

/** rename(from, to); when a tool recreated `to` in the gap (create_dirs, a write), clears it and retries once. */
function moveInto(pair, from, to) {
  try {
    fs.renameSync(from, to);
  } catch (err) {
    if (!['EEXIST', 'ENOTEMPTY', 'EISDIR', 'ENOTDIR'].includes(err.code)) throw err;
    clear(pair, to);
    fs.renameSync(from, to);
  }
}

// The four steps of a cycle. Every pair takes the same step in turn, so each state (real, missing,
// symlink, missing) lasts about as long as the others.
const STEPS = [
  (pair) => {
    // The real entry leaves `live`; a tool may have deleted or moved it, then a fresh one is made.
    try {
      fs.renameSync(pair.live, pair.realPark);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
      if (!fs.existsSync(pair.realPark)) makeReal(pair);
    }
    // Parked, the real directory is out of the tools' reach: refill what deletes and moves took from it.
    for (const rel of pair.files ?? []) {
      const file = path.join(pair.realPark, rel);
      if (fs.existsSync(file)) continue;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, 'refilled by the swapper\nline two\n');
    }
    if (!isLink(pair.linkPark)) makeLink(pair);
  },
  (pair, index) => {
    moveInto(pair, pair.linkPark, pair.live);
    pair.from = now();
    pair.index = index;
  },
  (pair) => {
    try {
      moveInto(pair, pair.live, pair.linkPark);
    } finally {
      intervals.push(pair.index, pair.from, now());
    }
    // A tool may have replaced the symlink at `live` by a file of its own (an atomic write): repair it.
    if (!isLink(pair.linkPark)) makeLink(pair);
  },
  (pair) => {
    moveInto(pair, pair.realPark, pair.live);
    counts.swaps++;
  },
];

/** Leaves every pair as it began: the real entry at `live`, the symlink parked. */
function settle(pair) {
  if (isLink(pair.live)) fs.renameSync(pair.live, pair.linkPark);
  if (fs.existsSync(pair.realPark)) moveInto(pair, pair.realPark, pair.live);
}

for (const pair of config.pairs) if (!isLink(pair.linkPark)) makeLink(pair);
process.stdout.write('ready\n');
counts.repairs = 0;
const deadline = now() + config.durationMs * 1e6;
let failed = new Set();
while (now() < deadline) {
  for (const step of STEPS) {
    config.pairs.forEach((pair, i) => {
      if (failed.has(i)) return;
      try {
        step(pair, i);
      } catch {
        counts.errors++;
        failed.add(i);
      }
    });
  }
  // A pair whose step failed starts over from a settled state.
  for (const i of failed) {
    try {
      settle(config.pairs[i]);
    } catch {
      // the next round repairs what is left
    }
  }
  failed = new Set();
}
for (const pair of config.pairs) settle(pair);
fs.writeFileSync(config.intervalsFile, new Float64Array(intervals));
process.stdout.write(`${JSON.stringify(counts)}\n`);
