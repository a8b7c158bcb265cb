// A tool call's audit line is written without its entry object (src/ops/audit.ts, auditLineBody) and its time by a
// clock that makes the part up to the second once per second (IsoClock): both must give the bytes of
// JSON.stringify(auditEntryOf(...)) and of toISOString, whatever the call and the time.
import { describe, expect, it } from 'vitest';
import { bareContext, errorEnvelope, resultEnvelope, ToolError } from '../../src/envelope.js';
import { auditEntryOf, auditLineBody, IsoClock } from '../../src/ops/audit.js';
import type { CallInfo, CallOutcome } from '../../src/tools/call.js';
import type { ToolDefinition } from '../../src/tools/define.js';
import { TOOLS } from '../../src/tools/registry.js';
import { makeApp, type TestApp } from '../helpers.js';
import { captureStream } from './ops-helpers.js';

const readFile = TOOLS.find((t) => t.name === 'read_file') as ToolDefinition;
const runCommand = TOOLS.find((t) => t.name === 'run_command') as ToolDefinition;

function callOf(over: Partial<CallInfo>): CallInfo {
  return { ws: { stateDir: '/state', id: null } as unknown as CallInfo['ws'], requestId: 'rid-1', actor: 'agent', clientIp: '127.0.0.1', ...over };
}

const context = (over: Record<string, unknown> = {}) => ({ ...bareContext('rid-1'), project: 'p', path_resolved: 'a.txt', risk: 'write' as const, risk_level: 'medium' as const, ...over });

const OUTCOMES: CallOutcome[] = [
  { envelope: resultEnvelope(context(), { data: {}, text: 'ok' }), httpStatus: 200, version: null, tool: readFile, audit: { bytes_read: 4096, sha256_before: 'a'.repeat(64) }, durationMs: 0.8234567 },
  { envelope: errorEnvelope(context({ project: null, path_resolved: null }), new ToolError('NOT_FOUND', 'gone')), httpStatus: 404, version: null, tool: null, audit: {}, durationMs: 12 },
  { envelope: resultEnvelope(context(), { data: null, text: 'ran' }), httpStatus: 200, version: null, tool: runCommand, audit: { bytes_written: 0, exec: { argv: ['ls', '-la'], exit_code: 0, changed: ['a "quoted"\u2028 name', '\ud800'] } }, durationMs: Number.NaN },
  { envelope: resultEnvelope(context({ path_resolved: 'dir/ünïcødé 🙂.txt' }), { data: null, text: 'x', partial: true }), httpStatus: 202, version: null, tool: readFile, audit: { sha256_after: null, bytes_written: undefined }, durationMs: 1e-9 },
  { envelope: { ...errorEnvelope(context({ project: undefined }), new ToolError('INVALID_PARAM', 'bad')), status: 'error' }, httpStatus: 400, version: null, tool: null, audit: { exec: undefined }, durationMs: -0 },
];

const CALLS: CallInfo[] = [callOf({}), callOf({ actor: null, clientIp: undefined }), callOf({ requestId: 'rid "with" \\ odd \u0001 chars', actor: undefined })];

describe('the audit line of a tool call', () => {
  it('is JSON.stringify of its entry, for every kind of call and outcome', () => {
    const time = '2026-11-28T04:31:07.012Z';
    for (const call of CALLS) {
      for (const outcome of OUTCOMES) {
        for (const name of ['read_file', 'a-name-longer-than-sixty-four-characters-'.repeat(3)]) {
          expect(`{${auditLineBody(call, name, outcome, time)}`).toBe(JSON.stringify(auditEntryOf(call, name, outcome, new Date(time))));
        }
      }
    }
  });

  it('has the time toISOString gives, across seconds, days, leap days and the ends of the range', () => {
    const clock = new IsoClock();
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 951_782_399_999, 951_782_400_000, 1_764_300_000_000, 1_764_300_000_999, 1_764_300_001_000, 253_402_300_799_999, 253_402_300_800_000, -1, -1000, 1.5];
    for (let i = 0; i < 2000; i++) times.push(Math.floor(Math.random() * 253_402_300_800_000));
    // The same second again and again, then the next: the clock's kept part must follow.
    for (let ms = 1_764_300_000_990; ms < 1_764_300_001_020; ms++) times.push(ms);
    for (const ms of times) expect(clock.at(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});

describe('audit lines of an app', () => {
  let t: TestApp | undefined;

  it('go to stdout and the file as JSON.stringify writes them, keys in the documented order', async () => {
    const out = captureStream();
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'line-1' }, { auditStream: out.stream });
    await t.call('write_file', { path: 'a.txt', content: 'hello' }, { 'x-request-id': 'rid-a' });
    await t.call('read_file', { path: 'a.txt' });
    await t.call('read_file', { path: 'missing.txt' });
    await t.app.toolgate.audit.flush();
    const lines = out.text().trim().split('\n');
    expect(lines).toHaveLength(3);
    const keys = ['level', 'log', 'time', 'request_id', 'actor', 'client_ip', 'project', 'tool', 'path', 'risk', 'risk_level', 'outcome', 'error_code', 'http_status', 'bytes_read', 'bytes_written', 'sha256_before', 'sha256_after', 'duration_ms'];
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(JSON.stringify(parsed)).toBe(line);
      expect(Object.keys(parsed)).toEqual(keys);
      expect(new Date(parsed.time as string).toISOString()).toBe(parsed.time);
    }
    await t.close();
    t = undefined;
  });
});
