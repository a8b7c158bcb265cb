// Environment -> typed, validated configuration. Every setting is a TOOLGATE_* variable (README table).
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseAllowList } from './web/address-policy.js';
import { SEARCH_PROVIDERS, searchSettingsFromEnv } from './web/search.js';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
// TOOLGATE_WEB_ALLOW read once at start: an entry that cannot be read stops the service, named in the message.
const allowList = z.string().transform((spec, ctx) => {
  try {
    return parseAllowList(spec);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^TOOLGATE_WEB_ALLOW: /, '') });
    return z.NEVER;
  }
});
/** A comma list read by `parse` at start; an entry it cannot read stops the service, named in the message. */
const listOf = (parse: (spec: string) => string[]) =>
  z.string().transform((spec, ctx) => {
    try {
      return parse(spec);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

/** TOOLGATE_EXEC_BULK_DIRS: directory names, comma-separated; a name with '/' or a dot name cannot be one segment. */
function parseDirNames(spec: string): string[] {
  const out: string[] = [];
  for (const raw of spec.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (name.includes('/') || name === '.' || name === '..' || name.includes('\0')) throw new Error(`'${name}' is not a directory name (give names such as node_modules, without '/')`);
    out.push(name);
  }
  return out;
}

/** `*.corp.example` or a name: letters, digits, dashes and underscores in dot-separated labels. */
const HOST_NAME = /^(\*\.)?[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;

/**
 * TOOLGATE_ALLOWED_HOSTS: names (`toolgate.corp.example`, `*.corp.example`) and IP addresses, comma-separated,
 * without scheme or port (any port is accepted); src/ops/browser-guard.ts applies them. Throws with the entry that cannot be read.
 */
function parseAllowedHosts(spec: string): string[] {
  const out: string[] = [];
  for (const raw of spec.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const ipv6 = entry.replace(/^\[|\]$/g, '');
    if (net.isIPv6(ipv6)) out.push(ipv6);
    else if (net.isIPv4(entry) || HOST_NAME.test(entry)) out.push(entry.replace(/\.$/, ''));
    else throw new Error(`'${raw.trim()}' is not a host name or IP address (give names such as toolgate.corp.example or *.corp.example, without scheme, port or path)`);
  }
  return out;
}

/**
 * TOOLGATE_ALLOWED_ORIGINS: web origins (`https://app.corp.example`, `http://localhost:3000`), comma-separated,
 * that may call the service from a browser besides its own pages. Throws with the entry that cannot be read.
 */
function parseAllowedOrigins(spec: string): string[] {
  const out: string[] = [];
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const url = URL.canParse(entry) ? new URL(entry) : null;
    const bare = url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash && !url.username;
    if (!url || !bare || entry.replace(/\/$/, '').toLowerCase() !== url.origin) {
      throw new Error(`'${entry}' is not a web origin (give scheme, host and port only, e.g. https://app.corp.example or http://localhost:3000)`);
    }
    out.push(url.origin);
  }
  return out;
}

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** One row per setting: variable name, schema (over the raw string), default, description. */
export const SETTINGS = {
  host: { env: 'TOOLGATE_HOST', schema: z.string().min(1), default: '127.0.0.1', doc: 'Address to listen on.' },
  port: { env: 'TOOLGATE_PORT', schema: int(0, 65535), default: '8080', doc: 'TCP port (0 picks a free one).' },
  root: { env: 'TOOLGATE_ROOT', schema: z.string().min(1), default: './workspace', doc: 'Workspace directory (created when missing).' },
  projectsRoot: { env: 'TOOLGATE_PROJECTS_ROOT', schema: z.string().min(1).optional(), default: undefined, doc: 'Multi-project mode: one sub-directory per project id.' },
  stateDir: { env: 'TOOLGATE_STATE_DIR', schema: z.string().min(1).optional(), default: undefined, doc: 'State directory (locks, backups, audit); default `<root>/.toolgate`.' },
  allowWeakSandbox: { env: 'TOOLGATE_ALLOW_WEAK_SANDBOX', schema: bool, default: 'false', doc: 'Start even where `/proc/self/fd` is missing (not Linux, /proc not mounted): paths are then checked by path string, and a directory swapped for a symlink during a call can redirect it. Without this setting the service refuses to start there.' },
  allowAbsolute: { env: 'TOOLGATE_ALLOW_ABSOLUTE', schema: bool, default: 'false', doc: 'Accept absolute paths that lie inside the root.' },
  requireVersion: { env: 'TOOLGATE_REQUIRE_VERSION', schema: z.enum(['overwrite', 'always', 'never']), default: 'overwrite', doc: '`overwrite`: write_file over an existing file needs a version; `always`: every mutation does; `never`.' },
  maxReadBytes: { env: 'TOOLGATE_MAX_READ_BYTES', schema: int(1), default: String(10 * 1024 * 1024), doc: 'Largest file read whole; larger files are read by line range.' },
  maxOutputBytes: { env: 'TOOLGATE_MAX_OUTPUT_BYTES', schema: int(1), default: String(256 * 1024), doc: 'Cap on the content one read returns (`truncated`, `next_start_line`).' },
  maxWriteBytes: { env: 'TOOLGATE_MAX_WRITE_BYTES', schema: int(1), default: String(5 * 1024 * 1024), doc: 'Largest content a write or append accepts.' },
  maxEditBytes: { env: 'TOOLGATE_MAX_EDIT_BYTES', schema: int(1), default: String(64 * 1024 * 1024), doc: 'Largest file edit_file / replace_in_file will load.' },
  patchMaxFiles: { env: 'TOOLGATE_PATCH_MAX_FILES', schema: int(1), default: '1000', doc: 'Files one `apply_patch` call may name (each section\'s file, and a move\'s destination); a larger patch is refused with `INVALID_PARAM` before any file is read. Send such a change as several patches.' },
  lockTimeoutMs: { env: 'TOOLGATE_LOCK_TIMEOUT_MS', schema: int(0), default: '5000', doc: 'How long a writer waits for a file lock before `LOCKED`.' },
  toolTimeoutMs: { env: 'TOOLGATE_TOOL_TIMEOUT_MS', schema: int(1), default: '30000', doc: 'Time limit of one tool call (`TIMEOUT`).' },
  regexTimeoutMs: { env: 'TOOLGATE_REGEX_TIMEOUT_MS', schema: int(1), default: '2000', doc: 'Hard time limit of a user regex.' },
  backupKeep: { env: 'TOOLGATE_BACKUP_KEEP', schema: int(0), default: '10', doc: 'Backups kept per file (0 disables backups).' },
  backupMaxBytes: { env: 'TOOLGATE_BACKUP_MAX_BYTES', schema: int(0), default: String(256 * 1024 * 1024), doc: 'Total bytes of all backups kept.' },
  checkpointMaxTurns: { env: 'TOOLGATE_CHECKPOINT_MAX_TURNS', schema: int(1), default: '100', doc: 'Checkpoints (agent turns, and calls without a turn) kept per project for `list_checkpoints` and `rewind`; past it the oldest go. The backups a kept checkpoint needs are kept with it, beyond `TOOLGATE_BACKUP_KEEP` and `TOOLGATE_BACKUP_MAX_BYTES` (docs/api.md, "Turns, checkpoints and rewind").' },
  checkpointMaxAgeDays: { env: 'TOOLGATE_CHECKPOINT_MAX_AGE_DAYS', schema: int(1), default: '30', doc: 'Days a checkpoint is kept at most; older ones go, with the hold on their backups.' },
  officeMaxBytes: { env: 'TOOLGATE_OFFICE_MAX_BYTES', schema: int(1), default: String(64 * 1024 * 1024), doc: 'Largest .docx/.xlsx file read_docx and read_excel open (their zip entries are bounded separately while inflating).' },
  attachmentRetentionS: { env: 'TOOLGATE_ATTACHMENT_RETENTION_S', schema: int(1), default: '3600', doc: 'Seconds an extracted image (`GET /v1/attachments/{id}`) is kept before it expires and is swept.' },
  bodyLimitBytes: { env: 'TOOLGATE_BODY_LIMIT_BYTES', schema: int(1024), default: String(12 * 1024 * 1024), doc: 'Largest HTTP request body.' },
  searchMaxFiles: { env: 'TOOLGATE_SEARCH_MAX_FILES', schema: int(1), default: '50000', doc: 'Entries a search or tree walk visits before it stops (`truncated`).' },
  searchTimeoutMs: { env: 'TOOLGATE_SEARCH_TIMEOUT_MS', schema: int(1), default: '10000', doc: 'Time a search may run before it stops (`truncated`).' },
  memoryBudgetBytes: { env: 'TOOLGATE_MEMORY_BUDGET_BYTES', schema: int(1), default: String(64 * 1024 * 1024), doc: 'File bytes the tools of this process hold in memory at once (files loaded whole by edits, replacements and searches, counted with their working copies); calls wait their turn first in, first out, and one call larger than the budget runs alone.' },
  tokensFile: { env: 'TOOLGATE_TOKENS_FILE', schema: z.string().min(1).optional(), default: undefined, doc: 'YAML/JSON list of bearer tokens `{id, sha256, projects, risks}` (`toolgate hash-token`). With tokens every `/v1` route needs `Authorization: Bearer …`; without, the service only listens on loopback. `/livez`, `/readyz`, `/healthz`, `/metrics` stay open.' },
  allowedHosts: { env: 'TOOLGATE_ALLOWED_HOSTS', schema: listOf(parseAllowedHosts).optional(), default: undefined, doc: 'Host names (`toolgate.corp.example`, `*.corp.example`) and IP addresses, comma-separated, that requests may carry in `Host` besides the loopback names (`localhost`, `127.0.0.1`, `[::1]`) and the address in `TOOLGATE_HOST`; any port. Every other Host is refused with `ACCESS_DENIED` (a page that rebinds its DNS name to this address carries its own name). `/livez`, `/readyz`, `/healthz` and `/metrics` answer any Host.' },
  allowedOrigins: { env: 'TOOLGATE_ALLOWED_ORIGINS', schema: listOf(parseAllowedOrigins).optional(), default: undefined, doc: 'Web origins (`https://app.corp.example`), comma-separated, whose pages may call the service from a browser. A request whose `Origin` is neither listed nor the service\'s own (the console, `/docs`) is refused with `ACCESS_DENIED`; requests without `Origin` (not from a browser) pass.' },
  selfApprove: { env: 'TOOLGATE_SELF_APPROVE', schema: bool, default: 'false', doc: 'Without tokens only: the calling client may decide its own calls in band (WebSocket `confirmation_request`, MCP elicitation). Off, such a call answers pending and a person decides in the console or on `/v1/approvals`. With tokens, mark a token `self_approve` instead (setting this with tokens stops the service).' },
  rateLimit: { env: 'TOOLGATE_RATE_LIMIT', schema: int(0), default: '100', doc: 'Tool calls per window per token (client IP without auth); 0 disables.' },
  rateLimitWindowMs: { env: 'TOOLGATE_RATE_LIMIT_WINDOW_MS', schema: int(1), default: '60000', doc: 'Rate-limit window.' },
  authFailLimit: { env: 'TOOLGATE_AUTH_FAIL_LIMIT', schema: int(0), default: '20', doc: 'Failed authentications per window per client address; past it the address gets `RATE_LIMITED` (429, `Retry-After`) before its token is even checked, a valid one included, until the window ends (shared through Redis with `TOOLGATE_REDIS_URL`); 0 disables.' },
  authFailWindowMs: { env: 'TOOLGATE_AUTH_FAIL_WINDOW_MS', schema: int(1), default: '60000', doc: 'Window of `TOOLGATE_AUTH_FAIL_LIMIT`; also the window in which an address\'s refused tool calls past its first 10 are counted in one audit line instead of one line each.' },
  redisUrl: { env: 'TOOLGATE_REDIS_URL', schema: z.string().regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL').optional(), default: undefined, secret: true, doc: 'Share the rate-limit budget between replicas through Redis (`redis://[:password@]host:port/db`).' },
  redisFailureMode: { env: 'TOOLGATE_REDIS_FAILURE_MODE', schema: z.enum(['open', 'closed']), default: 'open', doc: 'When Redis is unreachable: `open` lets tool calls through without a budget check (the service keeps answering); `closed` refuses them with `RATE_LIMITED`.' },
  trustProxy: { env: 'TOOLGATE_TRUST_PROXY', schema: bool, default: 'false', doc: 'Take the client address from `X-Forwarded-For` (behind an ingress); used for rate limits without auth and in the audit log.' },
  policy: { env: 'TOOLGATE_POLICY', schema: z.string().min(1).optional(), default: undefined, doc: 'Policy file (YAML): rules that allow, ask for approval or deny by path, tool, risk and switch. Validated at start-up; a bad file stops the service naming its line. Without one nothing needs approval.' },
  approvalSecret: { env: 'TOOLGATE_APPROVAL_SECRET', schema: z.string().min(16, 'at least 16 characters').optional(), default: undefined, secret: true, doc: 'Key that signs approval records (HMAC), the same on every replica; generated into the state directory when unset.' },
  approvalMaxWaitS: { env: 'TOOLGATE_APPROVAL_MAX_WAIT_S', schema: int(0, 3600), default: '300', doc: 'Longest `Prefer: wait=N` a call may hold for a person\'s decision, in seconds (0: never wait, answer 202 at once).' },
  audit: { env: 'TOOLGATE_AUDIT', schema: bool, default: 'true', doc: 'Write the audit log (one hash-chained JSON line per tool call) to `<state>/audit/<instance>-<date>.jsonl`.' },
  auditStdout: { env: 'TOOLGATE_AUDIT_STDOUT', schema: bool, default: 'true', doc: 'Also write each audit line to stdout (JSON, `"log":"audit"`).' },
  metrics: { env: 'TOOLGATE_METRICS', schema: bool, default: 'true', doc: 'Serve Prometheus metrics at `/metrics`.' },
  shutdownTimeoutMs: { env: 'TOOLGATE_SHUTDOWN_TIMEOUT_MS', schema: int(0), default: '30000', doc: 'On SIGTERM, how long in-flight calls may finish before the process exits anyway.' },
  webAllow: { env: 'TOOLGATE_WEB_ALLOW', schema: allowList.optional(), default: undefined, doc: 'Hosts (`wiki.corp`, `*.corp.example`), IP addresses and CIDRs, comma-separated, that `web_fetch` and `web_search` may reach although loopback, private, link-local or metadata addresses (on any port). Read at start: an entry that cannot be read stops the service.' },
  webSearchProvider: { env: 'TOOLGATE_WEB_SEARCH_PROVIDER', schema: z.enum(SEARCH_PROVIDERS), default: 'duckduckgo', doc: '`web_search` provider: `duckduckgo` (Instant Answer API: an abstract and related topics, not a full result list), `searxng` (needs `TOOLGATE_WEB_SEARCH_URL`) or `brave` (needs `TOOLGATE_WEB_SEARCH_KEY`).' },
  webSearchUrl: { env: 'TOOLGATE_WEB_SEARCH_URL', schema: z.string().optional(), default: undefined, doc: 'The search provider\'s endpoint (for SearXNG the instance\'s base URL); reached through the same address checks as `web_fetch`.' },
  webSearchKey: { env: 'TOOLGATE_WEB_SEARCH_KEY', schema: z.string().optional(), default: undefined, secret: true, doc: 'The search provider\'s API key (Brave\'s subscription token).' },
  webMaxBytes: { env: 'TOOLGATE_WEB_MAX_BYTES', schema: int(1024), default: String(5 * 1024 * 1024), doc: 'Largest response body `web_fetch` and `web_search` read (after content decoding); a call\'s `max_bytes` may only lower it.' },
  webTimeoutMs: { env: 'TOOLGATE_WEB_TIMEOUT_MS', schema: int(1), default: '15000', doc: 'Time for one fetch or search, redirects and body included (`TIMEOUT`).' },
  exec: { env: 'TOOLGATE_EXEC', schema: z.enum(['off', 'sandboxed', 'direct']), default: 'off', doc: '`run_command`: `off` (not offered; calls answer `NOT_FOUND`), `sandboxed` (each command runs in bubblewrap with new user, PID, IPC, UTS and network namespaces, the project at `/workspace` as a copy-on-write overlay whose changes land after the command, backed up, decided by the policy and undoable, and nothing else writable; docs/run-command.md) or `direct` (the same sandbox with the project bound read-write and no overlay: a command\'s changes land as it makes them, without backups, undo, review or conflict checks, and a policy with path rules refuses commands; docs/run-command.md, "Direct mode"). The service checks at start that it can create the sandbox, and refuses to start, naming the cause, when it cannot; with `sandboxed` where only the overlay cannot be mounted (Linux 5.11+ with overlayfs), it starts without `run_command` and logs why.' },
  execConcurrency: { env: 'TOOLGATE_EXEC_CONCURRENCY', schema: int(1, 1024), default: '4', doc: 'Commands this process runs at once; one more is refused with `RATE_LIMITED` (each run may hold its own process, memory and CPU limits).' },
  execTimeoutS: { env: 'TOOLGATE_EXEC_TIMEOUT_S', schema: int(1, 3600), default: '30', doc: 'Longest wall-clock time of one command (its `timeout_s` may only lower it; TOOLGATE_TOOL_TIMEOUT_MS bounds it too); the whole process tree is killed then.' },
  execCpuS: { env: 'TOOLGATE_EXEC_CPU_S', schema: int(1, 3600), default: '60', doc: 'CPU seconds each process of a command may use (RLIMIT_CPU).' },
  execMemoryBytes: { env: 'TOOLGATE_EXEC_MEMORY_BYTES', schema: int(16 * 1024 * 1024), default: String(1024 * 1024 * 1024), doc: 'Memory (heap and private mappings, RLIMIT_DATA) each process of a command may allocate, and, where the service can create a cgroup per run (v2 `memory.max`, or v1), the memory all the processes of a run may hold together (docs/run-command.md).' },
  execMaxProcesses: { env: 'TOOLGATE_EXEC_MAX_PROCESSES', schema: int(1, 65536), default: '128', doc: 'Processes and threads a command may run at once (a pids cgroup per run where the service can create one, as it must when it runs as root; RLIMIT_NPROC in the run\'s user namespace otherwise).' },
  execMaxFileBytes: { env: 'TOOLGATE_EXEC_MAX_FILE_BYTES', schema: int(1), default: String(256 * 1024 * 1024), doc: 'Largest file a command may write (RLIMIT_FSIZE).' },
  execMaxOpenFiles: { env: 'TOOLGATE_EXEC_MAX_OPEN_FILES', schema: int(16, 65536), default: '1024', doc: 'Open files per process of a command (RLIMIT_NOFILE).' },
  execOutputMaxBytes: { env: 'TOOLGATE_EXEC_OUTPUT_MAX_BYTES', schema: int(1024), default: String(64 * 1024), doc: 'Bytes of stdout and of stderr a command\'s answer keeps (each); past it the head and the tail are kept and the middle is counted, not held.' },
  execTmpBytes: { env: 'TOOLGATE_EXEC_TMP_BYTES', schema: int(1024 * 1024), default: String(64 * 1024 * 1024), doc: 'Size of the fresh `/tmp` (tmpfs, in memory) each command gets.' },
  execQuotaBytes: { env: 'TOOLGATE_EXEC_QUOTA_BYTES', schema: int(0), default: String(1024 * 1024 * 1024), doc: 'How much a command may grow the project (bytes of regular files the command wrote in its overlay layer, measured about every second); past it the command is killed (`quota_exceeded`) and nothing of it lands. 0: no quota.' },
  execBulkDirs: { env: 'TOOLGATE_EXEC_BULK_DIRS', schema: listOf(parseDirNames), default: 'node_modules,.venv,__pycache__,.pytest_cache,target,.gradle,.next,.nuxt,.turbo,.cache', doc: "Directory names (comma-separated; any path with such a segment) whose files a command's changes land without a backup or a version per file: dependency folders, build output and caches the command makes again. The answer counts them. Empty: every change keeps its backup." },
  execMinFreeBytes: { env: 'TOOLGATE_EXEC_MIN_FREE_BYTES', schema: int(0), default: String(256 * 1024 * 1024), doc: 'A command is refused (`DISK_FULL`) when the project\'s volume has less free space than this.' },
  execNetwork: { env: 'TOOLGATE_EXEC_NETWORK', schema: bool, default: 'false', doc: 'Give commands network access (off: an empty network namespace). On, each run gets a user-mode network (slirp4netns) whose egress rules (nftables in the run\'s own namespace) refuse the metadata addresses (`169.254.0.0/16`, `fd00:ec2::254`) and every address of the service\'s host, so neither the service\'s port nor any other listener of the host is reachable; the service refuses to start when `slirp4netns`, `nft` or `unshare` is missing or the rules cannot be installed (docs/run-command.md, "Network").' },
  logLevel: { env: 'TOOLGATE_LOG_LEVEL', schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), default: 'info', doc: 'Log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent` (JSON lines; readable when stdout is a terminal; Authorization headers redacted).' },
  logRequests: { env: 'TOOLGATE_LOG_REQUESTS', schema: bool, default: 'false', doc: 'Also log every HTTP request (Fastify\'s "incoming request"/"request completed" lines); off by default because the audit log already has one line per tool call.' },
  instanceId: { env: 'TOOLGATE_INSTANCE_ID', schema: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash, underscore').optional(), default: undefined, doc: 'Name of this replica in audit file names (default: host name, process id and a random suffix, so unique per process; a set name is used as is, so give each process its own).' },
} as const;

/**
 * The instance id when none is set: the host name alone was shared by two processes on one host (or two apps in
 * one process), which then wrote one audit file and broke its chain. The pid and a random suffix make it unique.
 */
export function defaultInstanceId(): string {
  const host = os.hostname().replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  return `${host}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

type Settings = typeof SETTINGS;
export type SettingKey = keyof Settings;

/** The CLI flag of a setting: `maxReadBytes` -> `--max-read-bytes`. */
export function flagOf(key: SettingKey): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Settings that are switches (a bare `--flag` means true, `--no-flag` false). */
export function isSwitch(key: SettingKey): boolean {
  return SETTINGS[key].schema === bool;
}
export type Config = { -readonly [K in keyof Settings]: z.output<Settings[K]['schema']> };

export class ConfigError extends Error {}

/**
 * Reads and validates every TOOLGATE_* variable; `overrides` are CLI flag values, which win. Throws
 * ConfigError naming the variable (or flag) and what it accepts.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Record<keyof Config, string>> = {}): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(SETTINGS) as [keyof Config, Settings[keyof Config]][]) {
    const raw = overrides[key] ?? env[setting.env] ?? setting.default;
    const parsed = (setting.schema as z.ZodType).safeParse(raw === '' ? setting.default : raw);
    if (parsed.success) out[key] = parsed.data;
    else {
      const source = overrides[key] !== undefined ? `${flagOf(key)} (${setting.env})` : setting.env;
      const shown = 'secret' in setting ? '(hidden)' : JSON.stringify(raw);
      problems.push(`${source}=${shown}: ${describeAccepted(setting.schema as z.ZodType, parsed.error)}`);
    }
  }
  const config = out as Config;
  if (problems.length === 0) {
    // The search settings' combinations (brave needs a key, searxng a URL) are checked by the engine's own reader.
    try {
      searchSettingsFromEnv({ TOOLGATE_WEB_SEARCH_PROVIDER: config.webSearchProvider, TOOLGATE_WEB_SEARCH_URL: config.webSearchUrl, TOOLGATE_WEB_SEARCH_KEY: config.webSearchKey });
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  config.root = path.resolve(config.root);
  if (config.projectsRoot) config.projectsRoot = path.resolve(config.projectsRoot);
  if (config.stateDir) config.stateDir = path.resolve(config.stateDir);
  if (config.tokensFile) config.tokensFile = path.resolve(config.tokensFile);
  if (config.policy) config.policy = path.resolve(config.policy);
  return config;
}

function describeAccepted(schema: z.ZodType, error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue?.code === 'invalid_value') return `accepted values: ${issue.values.map(String).join(', ')}`;
  if (issue?.code === 'too_small') return `must be at least ${String(issue.minimum)}`;
  if (issue?.code === 'too_big') return `must be at most ${String(issue.maximum)}`;
  void schema;
  return issue?.message ?? 'invalid value';
}
