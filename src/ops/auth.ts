// Bearer-token auth (docs/operations.md): tokens are stored as sha256 hashes in TOOLGATE_TOKENS_FILE, each with an
// id, the projects it may use and the risk classes it may run. Presented tokens are hashed and compared
// in constant time against every entry; a token never reaches a log, a response or the audit line.
import { createHash, hash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import { z } from 'zod';
import { ConfigError } from '../config.js';
import { RISKS, type Risk } from '../envelope.js';
import { E } from '../errors.js';

/**
 * A token's classes: the tools' risks and `approve` for the people who decide approval requests (docs/api.md,
 * "Approvals"). A token without `risks` gets every tool risk but `execute` (run_command; never a default,
 * docs/run-command.md).
 */
const TOKEN_RISKS = [...RISKS, 'approve'] as const;
const DEFAULT_TOKEN_RISKS = RISKS.filter((r) => r !== 'execute');
export type TokenRisk = (typeof TOKEN_RISKS)[number];

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const TokenEntrySchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9._:@-]{1,64}$/, 'letters, digits and . _ : @ - (at most 64)'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, '64 hex digits (toolgate hash-token <token>)')
      .transform((h) => h.toLowerCase()),
    projects: z.array(z.string().min(1)).default(['*']),
    risks: z.array(z.enum(TOKEN_RISKS)).default([...DEFAULT_TOKEN_RISKS]),
    /** May approve its own requests (an IDE that shows its own confirmation dialog). */
    self_approve: z.boolean().optional(),
  })
  .strict();

const TokensFileSchema = z.union([z.array(TokenEntrySchema), z.object({ tokens: z.array(TokenEntrySchema) }).transform((f) => f.tokens)]);

export type TokenEntry = z.output<typeof TokenEntrySchema>;

/** The authenticated caller that the transports hand to the executor (as CallInfo.actor). */
export interface Principal {
  id: string;
  projects: readonly string[];
  risks: readonly TokenRisk[];
  selfApprove: boolean;
}

/** sha256 (hex) of a bearer token: what the tokens file stores. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads and validates a tokens file (YAML or JSON: a list of {id, sha256, projects, risks}). */
export async function loadTokens(file: string): Promise<TokenEntry[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`TOOLGATE_TOKENS_FILE: cannot read the tokens file (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  let raw: unknown;
  try {
    // JSON is YAML too; the YAML parser is loaded only for files that are not JSON.
    raw = parseJsonOrUndefined(text) ?? (await import('yaml')).parse(text);
  } catch {
    throw new ConfigError('TOOLGATE_TOKENS_FILE: the tokens file is neither valid YAML nor JSON.');
  }
  const parsed = TokensFileSchema.safeParse(raw ?? []);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new ConfigError(
      `TOOLGATE_TOKENS_FILE: invalid tokens file${where}: ${issue?.message ?? 'invalid'}. Expected a list of {id, sha256, projects: [ids] or ['*'], risks: [read, write, destructive, execute, approve], self_approve}.`,
    );
  }
  const ids = new Set<string>();
  for (const t of parsed.data) {
    if (ids.has(t.id)) throw new ConfigError(`TOOLGATE_TOKENS_FILE: token id '${t.id}' appears twice; ids must be unique.`);
    ids.add(t.id);
  }
  return parsed.data;
}

export class Authenticator {
  private readonly entries: { entry: TokenEntry; digest: string }[];
  private readonly byId = new Map<string, Principal>();

  constructor(tokens: readonly TokenEntry[]) {
    this.entries = tokens.map((entry) => ({ entry, digest: entry.sha256.toLowerCase() }));
    for (const t of tokens) this.byId.set(t.id, { id: t.id, projects: t.projects, risks: t.risks, selfApprove: t.self_approve ?? false });
  }

  /** Auth is on as soon as one token is configured. */
  get enabled(): boolean {
    return this.entries.length > 0;
  }

  /**
   * The principal of an `Authorization: Bearer <token>` header. Throws UNAUTHORIZED when auth is on
   * and the header is missing or wrong; returns null when auth is off.
   */
  authenticate(header: string | undefined): Principal | null {
    if (!this.enabled) return null;
    const m = header === undefined ? null : /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
    if (!m) throw E.tokenMissing();
    // One call, no Hash object and no Buffer per request (docs/development.md, "Work done once").
    const presented = hash('sha256', m[1] as string, 'hex');
    let found: TokenEntry | null = null;
    // Compare against every entry (no early exit), so timing says nothing about which or whether one matched.
    for (const { entry, digest } of this.entries) {
      if (sameDigest(presented, digest) && found === null) found = entry;
    }
    if (!found) throw E.tokenInvalid();
    return this.byId.get(found.id) ?? null;
  }

  principal(id: string | null | undefined): Principal | null {
    return id ? (this.byId.get(id) ?? null) : null;
  }
}

/**
 * Two hex digests of equal length compared in constant time: every character is looked at whatever differs, as
 * timingSafeEqual does for buffers, without making a Buffer per request (making one cost more than the hash).
 */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export function allowsProject(principal: Principal | null, projectId: string): boolean {
  return principal === null || principal.projects.includes('*') || principal.projects.includes(projectId);
}

export function allowsRisk(principal: Principal | null, risk: TokenRisk): boolean {
  return principal === null || principal.risks.includes(risk);
}

/** Executor before-hook check: a token without a risk class may not run tools of that class. */
export function assertRiskAllowed(principal: Principal | null, toolName: string, risk: Risk): void {
  if (!allowsRisk(principal, risk)) {
    throw E.riskNotAllowed(principal?.id, risk, toolName);
  }
}

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return net.isIPv4(h.slice(7)) && h.slice(7).startsWith('127.');
  return false;
}

/** Start-up check (docs/operations.md): without tokens the service only binds to loopback. */
export function assertSafeBind(host: string, auth: Authenticator): void {
  if (!auth.enabled && !isLoopbackHost(host)) {
    throw new ConfigError(
      `TOOLGATE_HOST=${host} is not a loopback address, and no bearer tokens are configured: refusing to listen. ` +
        'Set TOOLGATE_TOKENS_FILE (see `toolgate hash-token`), or listen on 127.0.0.1.',
    );
  }
}

/** Paths pino must never print (Fastify request logs, errors that carry headers). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["sec-websocket-protocol"]',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'token',
  'err.config.headers.authorization',
];

/** Subprotocol prefix that carries a bearer token for browsers, which cannot set headers on a WebSocket. */
export const BEARER_SUBPROTOCOL = 'toolgate.bearer.';

/**
 * The credentials of a request: its Authorization header, or for a WebSocket upgrade without one the
 * `toolgate.bearer.<token>` subprotocol (never a URL parameter, which would end up in access logs).
 */
export function credentialsOf(headers: { authorization?: string | undefined; upgrade?: string | undefined; 'sec-websocket-protocol'?: string | undefined }): string | undefined {
  if (headers.authorization !== undefined || headers.upgrade?.toLowerCase() !== 'websocket') return headers.authorization;
  const offered = (headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const token = offered.find((p) => p.startsWith(BEARER_SUBPROTOCOL))?.slice(BEARER_SUBPROTOCOL.length);
  return token ? `Bearer ${token}` : undefined;
}
