// `npm run bench:edit`: runs the edit corpus (test/fixtures/edit-corpus) through toolgate's edit_file
// (the real HTTP app, driven by inject) and through the edit_file of @modelcontextprotocol/server-filesystem
// (stdio, MCP SDK client), scores both on what happened to the file, prints the scores, a per-category
// table and the cases each tool got wrong, and writes bench/results/edit-compare.json and the figures
// section of bench/EDIT.md. EDIT_BENCH_KEEP=1 keeps the temporary workspaces for inspection.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { FastifyInstance } from 'fastify';
import { buildApp, VERSION } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Envelope } from '../src/envelope.js';
import { isErrorCase, loadCorpus, type Case } from '../test/edit/corpus-cases.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_DIR = path.resolve(BENCH_DIR, '..');
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'edit-compare.json');
const EDIT_MD = path.join(BENCH_DIR, 'EDIT.md');
const PEER_PACKAGE = '@modelcontextprotocol/server-filesystem';
const PEER_DIR = path.join(REPO_DIR, 'node_modules', ...PEER_PACKAGE.split('/'));
const PEER_SERVER = path.join(PEER_DIR, 'dist', 'index.js');
const SECTION_START = '<!-- edit-compare:start (written by npm run bench:edit) -->';
const SECTION_END = '<!-- edit-compare:end -->';

type ToolName = 'toolgate' | 'peer';
/**
 * correct: the file equals the expected bytes, or the expected refusal happened with the file unchanged.
 * refused: the file is unchanged but the case expected an edit, or the refusal was of another kind.
 * wrong_place: the file changed and differs from the expected bytes (or the case expected a refusal).
 * unflagged_noop: the case expected a refusal, the tool answered success and left the file unchanged.
 */
type Outcome = 'correct' | 'refused' | 'wrong_place' | 'unflagged_noop';

/** What a tool answered: success, or a refusal with a code (toolgate) or none (the peer has no codes). */
interface Reply {
  ok: boolean;
  code?: string;
  message?: string;
}

interface ToolResult {
  outcome: Outcome;
  reply: string;
  /** Why a case is not correct: the reply, or where the file went wrong. */
  detail?: string;
}

interface CaseResult {
  name: string;
  category: string;
  description: string;
  expect: string;
  /** The case uses replace_all, which the peer's schema lacks: it got the edits without the flag. */
  replace_all_dropped_for_peer: boolean;
  toolgate: ToolResult;
  peer: ToolResult;
}

type Tally = Record<Outcome, number>;

interface Runner {
  name: ToolName;
  root: string;
  edit(c: Case, file: string): Promise<Reply>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// The two tools

async function startToolgate(root: string): Promise<Runner> {
  // The same settings as the test harness: no audit lines on stdout, no rate limit.
  const config = loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' });
  const app: FastifyInstance = await buildApp(config);
  return {
    name: 'toolgate',
    root,
    async edit(c, file) {
      const res = await app.inject({ method: 'POST', url: '/v1/tools/edit_file', payload: { path: path.relative(root, file), edits: c.edits } });
      const body = res.json() as Envelope;
      if (body.error === undefined && res.statusCode === 200) return { ok: true };
      return { ok: false, code: body.error?.code ?? `HTTP_${res.statusCode}`, message: body.error?.message ?? body.text };
    },
    close: () => app.close(),
  };
}

interface PeerInfo {
  /** What the server says in the MCP handshake (its code carries its own number, not the package's). */
  serverVersion: string;
  /** Property names of one edit in the peer's advertised edit_file schema. */
  editFields: string[];
}

/** The peer over stdio; the server is confined to `root` by its command line. */
async function startPeer(root: string): Promise<Runner & { info: PeerInfo }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [PEER_SERVER, root], cwd: REPO_DIR, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const client = new Client({ name: 'toolgate-edit-bench', version: VERSION });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`peer did not start: ${(err as Error).message}\n${stderr}`, { cause: err });
  }
  const { tools } = await client.listTools();
  const schema = tools.find((t) => t.name === 'edit_file')?.inputSchema as { properties?: { edits?: { items?: { properties?: object } } } } | undefined;
  const editFields = Object.keys(schema?.properties?.edits?.items?.properties ?? {});
  if (!editFields.includes('oldText') || !editFields.includes('newText')) throw new Error(`peer edit_file schema is not { oldText, newText }: ${JSON.stringify(schema)}`);
  return {
    name: 'peer',
    root,
    info: { serverVersion: client.getServerVersion()?.version ?? 'unknown', editFields },
    async edit(c, file) {
      // The peer knows only { oldText, newText }: replace_all is dropped (and the case scored as usual).
      const edits = c.edits.map((e) => ({ oldText: e.old_text, newText: e.new_text }));
      try {
        const res = await client.callTool({ name: 'edit_file', arguments: { path: file, edits, dryRun: false } });
        if (!res.isError) return { ok: true };
        const content = res.content as { type: string; text?: string }[] | undefined;
        return { ok: false, message: content?.map((x) => x.text ?? '').join('') ?? '' };
      } catch (err) {
        return { ok: false, message: (err as Error).message };
      }
    },
    close: () => client.close(),
  };
}

// ---------------------------------------------------------------------------------------------------
// Scoring

const CATEGORY_NAMES: Record<string, string> = { no: 'no-match', multi: 'multi-edit' };

function categoryOf(name: string): string {
  const prefix = name.split('-')[0] ?? name;
  return CATEGORY_NAMES[prefix] ?? prefix;
}

const usesReplaceAll = (c: Case) => c.edits.some((e) => e.replace_all === true);

const clip = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** JSON-quoted, with the invisible characters the corpus is about (BOM, NBSP, zero-width) spelled out. */
const quote = (s: string) => JSON.stringify(clip(s)).replace(/[\u00a0\u200b-\u200f\u2028\u2029\ufeff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Where `actual` first departs from `want`, line by line, with the lines JSON-quoted so \r and tabs show. */
function firstDifference(want: Buffer, actual: Buffer): string {
  const a = want.toString('utf8').split('\n');
  const b = actual.toString('utf8').split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      const show = (line: string | undefined) => (line === undefined ? '(end of file)' : quote(line));
      return `line ${i + 1}: expected ${show(a[i])}, got ${show(b[i])}`;
    }
  }
  return `${want.length} bytes expected, ${actual.length} written`;
}

/** Likely causes of a wrong edit, read off the case: they help the reader, the score ignores them. */
function hints(c: Case, actual: Buffer): string[] {
  const out: string[] = [];
  const input = c.inputBytes.toString('utf8');
  if (c.inputBytes.includes('\r\n') && !actual.includes('\r\n')) out.push('CRLF line endings turned into LF');
  c.edits.forEach((e, i) => {
    const tag = c.edits.length > 1 ? `edit ${i + 1}: ` : '';
    if (e.old_text === '') out.push(`${tag}empty old_text matched at the start of the file`);
    else {
      const n = input.replaceAll('\r\n', '\n').split(e.old_text.replaceAll('\r\n', '\n')).length - 1;
      if (n > 1) out.push(`${tag}old_text occurs ${n} times in the input${e.replace_all === true ? ' (replace_all)' : ''}`);
    }
  });
  return out;
}

function score(tool: ToolName, c: Case, reply: Reply, after: Buffer): ToolResult {
  const replyText = reply.ok ? 'success' : tool === 'toolgate' ? (reply.code ?? 'error') : 'error';
  const refusal = reply.ok ? 'success' : `${replyText}: ${clip((reply.message ?? '').split('\n')[0] ?? '', 100)}`;
  const changed = !after.equals(c.inputBytes);
  const want = c.expect;
  if (isErrorCase(want)) {
    if (changed) return { outcome: 'wrong_place', reply: replyText, detail: [`expected ${want.error}, ${refusal === 'success' ? 'answered success' : `answered ${refusal}`} and changed the file; ${firstDifference(c.inputBytes, after)}`, ...hints(c, after)].join('; ') };
    if (reply.ok) return { outcome: 'unflagged_noop', reply: replyText, detail: `expected ${want.error}, answered success with the file unchanged` };
    // The peer has no error codes: any refusal is the right one. Toolgate must give the expected code.
    if (tool === 'peer' || reply.code === want.error) return { outcome: 'correct', reply: replyText };
    return { outcome: 'refused', reply: replyText, detail: `expected ${want.error}, got ${refusal}` };
  }
  if (after.equals(want.bytes)) return reply.ok ? { outcome: 'correct', reply: replyText } : { outcome: 'correct', reply: replyText, detail: `file is right but the tool answered ${refusal}` };
  if (!changed) return { outcome: 'refused', reply: replyText, detail: reply.ok ? 'answered success but left the file unchanged' : refusal };
  return { outcome: 'wrong_place', reply: replyText, detail: [firstDifference(want.bytes, after), ...hints(c, after)].join('; ') };
}

async function runCase(runner: Runner, c: Case): Promise<ToolResult> {
  const dir = path.join(runner.root, c.name);
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, c.file);
  await fs.writeFile(file, c.inputBytes);
  const reply = await runner.edit(c, file);
  const after = await fs.readFile(file);
  return score(runner.name, c, reply, after);
}

const emptyTally = (): Tally => ({ correct: 0, refused: 0, wrong_place: 0, unflagged_noop: 0 });

function tally(results: CaseResult[], tool: ToolName): Tally {
  const t = emptyTally();
  for (const r of results) t[r[tool].outcome]++;
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Reporting

const pct = (n: number, total: number) => `${((100 * n) / total).toFixed(1)}%`;

function scoreLine(label: string, t: Tally, total: number): string {
  return `${label.padEnd(10)} correct ${t.correct}/${total} (${pct(t.correct, total)})   refused ${t.refused}   wrong place ${t.wrong_place}   unflagged no-op ${t.unflagged_noop}`;
}

const cell = (t: Tally) => `${t.correct} / ${t.refused} / ${t.wrong_place}${t.unflagged_noop > 0 ? ` (+${t.unflagged_noop} no-op)` : ''}`;

async function packageVersion(dir: string): Promise<string> {
  const pkg = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

interface Report {
  date: string;
  node: string;
  toolgate: { version: string; commit: string };
  peer: { package: string; version: string; server_version: string; edit_fields: string[] };
  cases: number;
  scoring: Record<Outcome, string>;
  totals: Record<ToolName, Tally>;
  categories: { category: string; cases: number; toolgate: Tally; peer: Tally }[];
  replace_all_dropped_for_peer: string[];
  wrong: Record<ToolName, { name: string; detail: string }[]>;
  results: CaseResult[];
}

function markdownSection(r: Report): string {
  const lines = [
    SECTION_START,
    `## Figures (run of ${r.date})`,
    '',
    `${r.cases} cases; toolgate ${r.toolgate.version} (${r.toolgate.commit || 'no commit'}), ${r.peer.package} ${r.peer.version}, Node ${r.node}.`,
    '',
    '| tool | correct | refused | wrong place | unflagged no-op |',
    '|---|---|---|---|---|',
    ...(['toolgate', 'peer'] as const).map((tool) => {
      const t = r.totals[tool];
      const label = tool === 'peer' ? 'server-filesystem' : tool;
      return `| ${label} | ${t.correct}/${r.cases} (${pct(t.correct, r.cases)}) | ${t.refused} | ${t.wrong_place} | ${t.unflagged_noop} |`;
    }),
    '',
    'Per category (correct / refused / wrong place):',
    '',
    '| category | cases | toolgate | server-filesystem |',
    '|---|---|---|---|',
    ...r.categories.map((c) => `| ${c.category} | ${c.cases} | ${cell(c.toolgate)} | ${cell(c.peer)} |`),
    '',
  ];
  for (const tool of ['toolgate', 'peer'] as const) {
    const wrong = r.wrong[tool];
    lines.push(`Wrong place, ${tool === 'peer' ? 'server-filesystem' : tool}:${wrong.length === 0 ? ' none.' : ''}`);
    if (wrong.length > 0) lines.push('', ...wrong.map((w) => `- \`${w.name}\`: ${w.detail}`));
    lines.push('');
  }
  lines.push(
    `replace_all was dropped for server-filesystem (its schema has no such field) in: ${r.replace_all_dropped_for_peer.map((n) => `\`${n}\``).join(', ') || 'none'}.`,
    '',
    'Full per-case results: `bench/results/edit-compare.json`.',
    SECTION_END,
  );
  return lines.join('\n');
}

const EDIT_MD_INTRO = `# Edit corpus: toolgate vs. the MCP filesystem server

\`npm run bench:edit\` (bench/edit-compare.ts) replays the edit corpus (\`test/fixtures/edit-corpus\`,
the edits as a model sends them) through toolgate's \`edit_file\` and through the \`edit_file\` of
\`@modelcontextprotocol/server-filesystem\`, each case on a fresh copy of its input file.
`;

async function writeEditMd(section: string): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(EDIT_MD, 'utf8');
  } catch {
    text = `${EDIT_MD_INTRO}\n${SECTION_START}\n${SECTION_END}\n`;
  }
  const start = text.indexOf(SECTION_START);
  const end = text.indexOf(SECTION_END);
  text = start >= 0 && end > start ? text.slice(0, start) + section + text.slice(end + SECTION_END.length) : `${text.trimEnd()}\n\n${section}\n`;
  await fs.writeFile(EDIT_MD, text);
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const corpus = loadCorpus();
  const runDir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-edit-bench-')));
  const roots = { toolgate: path.join(runDir, 'toolgate'), peer: path.join(runDir, 'peer') };
  await fs.mkdir(roots.toolgate);
  await fs.mkdir(roots.peer);
  const toolgate = await startToolgate(roots.toolgate);
  const peer = await startPeer(roots.peer);
  const results: CaseResult[] = [];
  try {
    for (const c of corpus) {
      results.push({
        name: c.name,
        category: categoryOf(c.name),
        description: c.description,
        expect: isErrorCase(c.expect) ? c.expect.error : 'edit',
        replace_all_dropped_for_peer: usesReplaceAll(c),
        toolgate: await runCase(toolgate, c),
        peer: await runCase(peer, c),
      });
    }
  } finally {
    await toolgate.close();
    await peer.close();
    if (process.env.EDIT_BENCH_KEEP === '1') console.log(`workspaces kept in ${runDir}`);
    else await fs.rm(runDir, { recursive: true, force: true });
  }

  const categories = [...new Set(results.map((r) => r.category))].sort().map((category) => {
    const inCat = results.filter((r) => r.category === category);
    return { category, cases: inCat.length, toolgate: tally(inCat, 'toolgate'), peer: tally(inCat, 'peer') };
  });
  const wrongOf = (tool: ToolName) => results.filter((r) => r[tool].outcome === 'wrong_place').map((r) => ({ name: r.name, detail: r[tool].detail ?? '' }));
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const report: Report = {
    date: new Date().toISOString().slice(0, 10),
    node: process.versions.node,
    toolgate: { version: VERSION, commit: commit && git(['status', '--porcelain', '--untracked-files=no']) ? `${commit}+dirty` : commit },
    peer: { package: PEER_PACKAGE, version: await packageVersion(PEER_DIR), server_version: peer.info.serverVersion, edit_fields: peer.info.editFields },
    cases: corpus.length,
    scoring: {
      correct: 'file equals the expected bytes, or the expected refusal happened with the file unchanged (toolgate: the expected error code; the peer has no codes, so any refusal)',
      refused: 'file unchanged but the case expected an edit, or (toolgate) a refusal with another code',
      wrong_place: 'file changed but differs from the expected bytes, or the case expected a refusal and the file changed anyway',
      unflagged_noop: 'the case expected a refusal; the tool answered success and left the file unchanged',
    },
    totals: { toolgate: tally(results, 'toolgate'), peer: tally(results, 'peer') },
    categories,
    replace_all_dropped_for_peer: results.filter((r) => r.replace_all_dropped_for_peer).map((r) => r.name),
    wrong: { toolgate: wrongOf('toolgate'), peer: wrongOf('peer') },
    results,
  };

  const total = corpus.length;
  console.log(`edit corpus: ${total} cases (${report.date}, Node ${report.node})\n`);
  console.log(scoreLine('toolgate', report.totals.toolgate, total));
  console.log(scoreLine('peer', report.totals.peer, total));
  console.log(`(peer: ${PEER_PACKAGE} ${report.peer.version}; replace_all dropped in ${report.replace_all_dropped_for_peer.length} case(s): ${report.replace_all_dropped_for_peer.join(', ')})\n`);
  console.log(`${'category'.padEnd(12)}${'cases'.padStart(6)}   ${'toolgate c/r/w'.padEnd(22)}peer c/r/w`);
  for (const c of categories) console.log(`${c.category.padEnd(12)}${String(c.cases).padStart(6)}   ${cell(c.toolgate).padEnd(22)}${cell(c.peer)}`);
  for (const tool of ['toolgate', 'peer'] as const) {
    const odd = results.filter((r) => r[tool].outcome !== 'correct');
    console.log(`\n${tool}: not correct (${odd.length})`);
    for (const r of odd) console.log(`  ${r[tool].outcome.padEnd(14)} ${r.name}: ${r[tool].detail ?? ''}`);
  }
  if (report.totals.toolgate.wrong_place > 0) console.log('\ntoolgate changed a file the wrong way: that is a bug.');

  await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await fs.writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  await writeEditMd(markdownSection(report));
  console.log(`\nwrote ${path.relative(REPO_DIR, RESULTS_FILE)} and ${path.relative(REPO_DIR, EDIT_MD)}`);
}

await main();
