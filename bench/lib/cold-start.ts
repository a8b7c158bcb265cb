// Start-up: process spawn to the first 200 from /readyz, toolgate (production settings, empty
// workspace) against the bare Fastify server, interleaved.
import fs from 'node:fs/promises';
import path from 'node:path';
import { progress } from './log.js';
import { options } from './options.js';
import { rssOf } from './rss.js';
import { startCeiling, startToolgate, type ToolgateEnv } from './servers.js';
import { fmt, median, MiB, pairedRatio } from './stats.js';

/** Issue 22: a start (spawn to the first 200 from /readyz) costs at most this many times the bare Fastify route's. */
export const COLD_START_MAX_RATIO = 1.5;

export interface ColdResults {
  toolgateMs: { median: number; rounds: number[] };
  bareMs: { median: number; rounds: number[] };
  ratio: number;
  toolgateIdleRssMiB: number;
  bareIdleRssMiB: number;
}

export async function coldSection(env: Omit<ToolgateEnv, 'root' | 'instanceId'>, cacheDir: string, logDir: string): Promise<ColdResults> {
  const root = path.join(cacheDir, 'ws-cold');
  await fs.rm(root, { recursive: true, force: true });
  await fs.mkdir(root, { recursive: true });
  const tg: number[] = [];
  const bare: number[] = [];
  const tgRss: number[] = [];
  const bareRss: number[] = [];
  const one = {
    toolgate: async () => {
      const s = await startToolgate('toolgate (cold)', { ...env, root, instanceId: 'bench-cold' }, path.join(logDir, 'toolgate-cold.log'));
      tg.push(s.startMs);
      tgRss.push(rssOf(s.pid) / MiB);
      await s.stop();
    },
    bare: async () => {
      const s = await startCeiling('bare (cold)', 'const', null, path.join(logDir, 'bare-cold.log'));
      bare.push(s.startMs);
      bareRss.push(rssOf(s.pid) / MiB);
      await s.stop();
    },
  };
  for (let r = 0; r < options.coldRounds; r++) {
    if (r % 2 === 0) {
      await one.toolgate();
      await one.bare();
    } else {
      await one.bare();
      await one.toolgate();
    }
    progress(`  cold start round ${r + 1}/${options.coldRounds}: toolgate ${fmt(tg[r])} ms, bare ${fmt(bare[r])} ms`);
  }
  return {
    toolgateMs: { median: median(tg), rounds: tg },
    bareMs: { median: median(bare), rounds: bare },
    ratio: pairedRatio(tg, bare),
    toolgateIdleRssMiB: median(tgRss),
    bareIdleRssMiB: median(bareRss),
  };
}
