#!/usr/bin/env node
// The `toolgate` command: serve, list tools, call a tool on a running server, print the OpenAPI
// document, hash a token for the tokens file, verify an audit file.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CliUsageError, formatEnvelope, parseCallArgs, parseJsonArgs } from './cli-client.js';
import type { Envelope } from './envelope.js';

// Commands import what they need when they run, so `toolgate call` does not load the whole service.
const version = async () => (await import('./version.js')).VERSION;

const HELP = `toolgate: sandboxed file tools over HTTP for AI agents.

Usage:
  toolgate serve [--root DIR] [--port N] [--host ADDR] …   run the service (toolgate serve --help)
  toolgate mcp [options of serve]                          MCP server on stdio (TOOLGATE_TOKEN, TOOLGATE_PROJECT)
  toolgate tools [--format openai|openai-responses|anthropic|mcp]  list the tools
  toolgate call <tool> [key=value | key:=json …]           call a tool on a running server
      key=@FILE        the value is FILE's UTF-8 text; key=@- standard input; key:=@FILE JSON from FILE
      key=@@text       the string '@text' (double a leading @)
  toolgate call <tool> --json '{"path":"a.txt"}'          (or --json @FILE, --json @-)
      --url URL        server (TOOLGATE_URL, default http://127.0.0.1:8080)
      --token TOKEN    bearer token (TOOLGATE_TOKEN)
      --project ID     project in multi-project mode (TOOLGATE_PROJECT)
      --raw            print the envelope as JSON
  toolgate openapi                                         print the OpenAPI document (YAML)
  toolgate hash-token <token|->                            sha256 of a token, for the tokens file ('-': read stdin)
  toolgate audit verify <file>                             check an audit file's hash chain
  toolgate --version
`;

/** Exit codes: 0 done, 1 the call or check failed, 2 usage or configuration error, 3 server unreachable. */
const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;


async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await (await import('./serve.js')).runServe(rest);
      return -1; // keeps running; exits on SIGTERM
    case 'mcp':
      await (await import('./mcp-stdio.js')).runMcpStdio(rest);
      return -1; // serves stdin/stdout until it closes
    case 'tools':
      return tools(rest);
    case 'call':
      return call(rest);
    case 'openapi': {
      const { generateOpenApi } = await import('./openapi.js');
      process.stdout.write(await generateOpenApi());
      return EXIT.ok;
    }
    case 'hash-token':
      return hashTokenCommand(rest);
    case 'audit':
      return audit(rest);
    case '--version':
    case '-v':
      process.stdout.write(`${await version()}\n`);
      return EXIT.ok;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP);
      return command === undefined ? EXIT.usage : EXIT.ok;
    default:
      throw new CliUsageError(`unknown command '${command}'`);
  }
}

async function tools(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { format: { type: 'string' } }, strict: true });
  const { TOOLS } = await import('./tools/registry.js');
  if (values.format) {
    const { exportTools, TOOL_FORMATS } = await import('./transports/function-defs.js');
    const format = TOOL_FORMATS.find((f) => f === values.format);
    if (!format) throw new CliUsageError(`--format accepts ${TOOL_FORMATS.join(', ')}`);
    process.stdout.write(`${JSON.stringify(exportTools(TOOLS, format), null, 2)}\n`);
    return EXIT.ok;
  }
  const width = Math.max(...TOOLS.map((t) => t.name.length));
  for (const t of TOOLS) {
    const summary = t.description.split('\n')[0]?.split(/(?<=\.)\s/)[0] ?? '';
    const aliases = t.aliases?.length ? ` (aliases: ${t.aliases.join(', ')})` : '';
    process.stdout.write(`${t.name.padEnd(width)}  ${t.risk.padEnd(11)}  ${summary}${aliases}\n`);
  }
  return EXIT.ok;
}

async function call(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      project: { type: 'string' },
      json: { type: 'string' },
      raw: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: true,
  });
  const [tool, ...pairs] = positionals;
  if (!tool) throw new CliUsageError('name the tool: toolgate call <tool> key=value …');
  if (values.json !== undefined && pairs.length > 0) throw new CliUsageError('give the arguments either as --json or as key=value pairs, not both');
  const body = values.json !== undefined ? parseJsonArgs(values.json) : parseCallArgs(pairs);
  const base = (values.url ?? process.env.TOOLGATE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const token = values.token ?? process.env.TOOLGATE_TOKEN;
  const project = values.project ?? process.env.TOOLGATE_PROJECT;
  const url = project ? `${base}/v1/projects/${encodeURIComponent(project)}/tools/${encodeURIComponent(tool)}` : `${base}/v1/tools/${encodeURIComponent(tool)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    process.stderr.write(`toolgate: cannot reach ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}\n`);
    return EXIT.unreachable;
  }
  const text = await res.text();
  let envelope: Envelope;
  try {
    envelope = JSON.parse(text) as Envelope;
  } catch {
    process.stderr.write(`toolgate: HTTP ${res.status}: not an envelope: ${text.slice(0, 200)}\n`);
    return EXIT.failed;
  }
  process.stdout.write(values.raw ? `${JSON.stringify(envelope, null, 2)}\n` : formatEnvelope(envelope, res.status));
  return envelope.status === 'error' ? EXIT.failed : EXIT.ok;
}

async function hashTokenCommand(argv: string[]): Promise<number> {
  const [token, ...extra] = argv;
  if (token === undefined || extra.length > 0) throw new CliUsageError('usage: toolgate hash-token <token>   (or - to read it from stdin)');
  const value = token === '-' ? readFileSync(0, 'utf8').replace(/\r?\n$/, '') : token;
  if (value === '') throw new CliUsageError('the token is empty');
  process.stdout.write(`${(await import('./ops/auth.js')).hashToken(value)}\n`);
  return EXIT.ok;
}

async function audit(argv: string[]): Promise<number> {
  const [sub, file, ...extra] = argv;
  if (sub !== 'verify' || !file || extra.length > 0) throw new CliUsageError('usage: toolgate audit verify <file>');
  const { describeVerifyResult, verifyAuditFile } = await import('./ops/audit-verify.js');
  let result;
  try {
    result = await verifyAuditFile(file);
  } catch (err) {
    process.stderr.write(`toolgate: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return EXIT.usage;
  }
  process.stdout.write(describeVerifyResult(file, result));
  return result.ok ? EXIT.ok : EXIT.failed;
}

// `toolgate tools | head` closes the pipe early: that is the reader's choice, not an error to crash on.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof CliUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      // The message and where to look, not the whole help: the message is what the person needs to read.
      process.stderr.write(`toolgate: ${(err as Error).message}\nRun 'toolgate --help' for the commands and their options.\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    process.stderr.write(`toolgate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT.failed;
  },
);
