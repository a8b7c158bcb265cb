import fs from 'node:fs/promises';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateOpenApi } from '../src/openapi.js';
import { TOOLS } from '../src/tools/registry.js';
import { ToolError, type Envelope } from '../src/envelope.js';
import type { BeforeHook } from '../src/tools/call.js';
import { makeApp, type TestApp } from './helpers.js';

describe('OpenAPI document', () => {
  it('openapi.yaml matches the code (run `npm run openapi` when this fails)', async () => {
    const committed = await fs.readFile(new URL('../openapi.yaml', import.meta.url), 'utf8');
    expect(committed).toBe(await generateOpenApi());
  });

  it('is a valid OpenAPI 3.1 document with one operation per tool', async () => {
    const doc = YAML.parse(await generateOpenApi()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    for (const tool of TOOLS) expect(doc.paths[`/v1/tools/${tool.name}`], tool.name).toBeDefined();
  });

  it('serves Swagger UI at /docs and the document at /docs/json', async () => {
    const t = await makeApp();
    try {
      const ui = await t.app.inject({ method: 'GET', url: '/docs/' });
      expect(ui.statusCode).toBe(200);
      expect(ui.body).toContain('swagger');
      const json = await t.app.inject({ method: 'GET', url: '/docs/json' });
      expect(json.json()).toMatchObject({ openapi: '3.1.0' });
    } finally {
      await t.close();
    }
  });
});

// The examples a reader of /docs runs with "Try it out", and the envelope schemas a generated client relies on.
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown>; examples: Record<string, { value: unknown }> } };
type Media = { schema: unknown; example?: unknown; examples?: Record<string, { $ref?: string; value?: unknown }> };
type Operation = { operationId: string; summary: string; requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

const DOC_ID = 'urn:toolgate:openapi';

/** ajv over the whole document, so that a schema's `#/components/...` references resolve. */
async function openApiValidator() {
  const doc = YAML.parse(await fs.readFile(new URL('../openapi.yaml', import.meta.url), 'utf8')) as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: DOC_ID, components: doc.components });
  const compile = (schema: unknown) => ajv.compile({ $id: `${DOC_ID}:${Math.random()}`, ...rebase(schema) as object });
  return { doc, compile, describe: (errors: ErrorObject[] | null | undefined) => ajv.errorsText(errors) };
}

/** `#/components/...` as a reference into the document added under DOC_ID. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v)]));
}

const toolOperations = (doc: Doc) => TOOLS.map((tool) => ({ tool, op: doc.paths[`/v1/tools/${tool.name}`]!.post! }));

const WEB_TOOLS = new Set(['web_fetch', 'web_search']);
/** What a fresh start answers these examples: the web is offline in this test, TOOLGATE_EXEC is off by default. */
const OFF_BY_DEFAULT: Record<string, number> = { web_fetch: 403, web_search: 403, run_command: 404 };

/** A fresh workspace as `npm start` serves it; no test reaches the network (the web tools are refused). */
async function offlineApp(): Promise<TestApp> {
  const offline: BeforeHook = (_call, tool) => {
    if (WEB_TOOLS.has(tool.name)) throw new ToolError('ACCESS_DENIED', 'No network in this test.');
  };
  return makeApp({}, { before: [offline] });
}

/** The request examples of an operation, in the order Swagger shows them. */
function requestExamples(op: Operation): unknown[] {
  const media = op.requestBody!.content['application/json']!;
  if (media.examples) return Object.values(media.examples).map((e) => e.value);
  return media.example === undefined ? [] : [media.example];
}

const exampleValue = (doc: Doc, ex: { $ref?: string; value?: unknown }) => (ex.$ref ? doc.components.examples[ex.$ref.replace('#/components/examples/', '')]!.value : ex.value);

/** An answer without what differs from run to run: the time taken, the request id, the file's mtime. */
function comparable(envelope: Envelope): unknown {
  const copy = structuredClone(envelope) as Envelope & { data: { version?: { mtime_ms?: number } } | null };
  copy.stats.time_ms = 0;
  copy.context.request_id = '';
  if (copy.data?.version) copy.data.version.mtime_ms = 0;
  return copy;
}

describe('OpenAPI examples', () => {
  it('every tool operation has request examples that its request schema accepts', async () => {
    const { doc, compile, describe: errorsText } = await openApiValidator();
    for (const { tool, op } of toolOperations(doc)) {
      const media = op.requestBody!.content['application/json']!;
      const validate = compile(media.schema);
      expect(requestExamples(op).length, tool.name).toBeGreaterThan(0);
      for (const example of requestExamples(op)) expect(validate(example), `${tool.name}: ${errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('every request example runs on one fresh workspace in the order shown and gets the answer shown', async () => {
    const doc = YAML.parse(await generateOpenApi()) as Doc;
    // Document order: what a reader of /docs who tries each operation in turn runs.
    const operations = Object.entries(doc.paths)
      .filter(([url, item]) => url.startsWith('/v1/tools/') && item.post?.requestBody)
      .map(([url, item]) => ({ name: url.slice('/v1/tools/'.length), op: item.post! }));
    expect(operations.map((o) => o.name)).toEqual(TOOLS.map((tool) => tool.name));
    const t = await offlineApp();
    try {
      for (const { name, op } of operations) {
        const examples = requestExamples(op);
        for (const [i, example] of examples.entries()) {
          const res = await t.call(name, example);
          // The web is offline here (refused after the arguments were validated); run_command is off by default.
          expect(res.status, `${name} example ${i + 1}: ${JSON.stringify(res.body.error)}`).toBe(OFF_BY_DEFAULT[name] ?? 200);
          const shown = i === 0 ? Object.values(op.responses['200']?.content?.['application/json']?.examples ?? {})[0] : undefined;
          if (shown) expect(comparable(res.body), name).toEqual(comparable(exampleValue(doc, shown) as Envelope));
        }
      }
    } finally {
      await t.close();
    }
  });

  it("each tool's 202 example is a pending answer to its own example request", async () => {
    const doc = YAML.parse(await generateOpenApi()) as Doc;
    for (const { tool, op } of toolOperations(doc)) {
      const examples = Object.values(op.responses['202']!.content!['application/json']!.examples ?? {});
      expect(examples.length, tool.name).toBe(1);
      const pending = exampleValue(doc, examples[0]!) as Envelope & { data: { approval: { tool: string } } };
      expect(pending.data.approval.tool, tool.name).toBe(tool.name);
      expect(pending.context.params_input, tool.name).toEqual(requestExamples(op)[0]);
    }
  });

  it('gives every envelope shape an example that its response schema accepts', async () => {
    const { doc, compile, describe: errorsText } = await openApiValidator();
    const seen = new Set<string>();
    for (const { tool, op } of toolOperations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content!['application/json']!;
        const validate = compile(media.schema);
        for (const [name, ex] of Object.entries(media.examples ?? {})) {
          const value = exampleValue(doc, ex);
          expect(validate(value), `${tool.name} ${status} ${name}: ${errorsText(validate.errors)}`).toBe(true);
          seen.add(`${status}:${(value as Envelope).status}`);
        }
      }
    }
    expect([...seen].sort()).toEqual(['200:partial', '200:success', '202:partial', '4XX:error', '5XX:error']);
  });

  it('the error envelope schema requires status "error" and an error; a success envelope is not one', async () => {
    const { doc, compile } = await openApiValidator();
    const isError = compile({ $ref: '#/components/schemas/ErrorEnvelope' });
    const t = await makeApp();
    try {
      const ok = await t.call('write_file', { path: 'notes.txt', content: 'hello\n' });
      expect(ok.body.status).toBe('success');
      expect(isError({ ...ok.body, data: null })).toBe(false);
      const conflict = await t.call('edit_file', { path: 'notes.txt', old_text: 'hello', new_text: 'hi', expected_sha256: '0'.repeat(64) });
      expect(conflict.status).toBe(409);
      expect(isError(conflict.body), JSON.stringify(isError.errors)).toBe(true);
      const { error: _error, ...withoutError } = conflict.body;
      expect(isError(withoutError)).toBe(false);
    } finally {
      await t.close();
    }
    expect(doc.components.schemas.ErrorEnvelope).toMatchObject({ properties: { status: { const: 'error' } }, required: expect.arrayContaining(['status', 'error']) });
  });

  it('no description holds a bare <placeholder>, which Markdown would swallow as an HTML tag', async () => {
    const doc = YAML.parse(await generateOpenApi()) as unknown;
    const bare: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((v, i) => walk(v, `${at}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node)) {
        if ((k === 'description' || k === 'summary') && typeof v === 'string' && /<[A-Za-z/!]/.test(v.replace(/`[^`]*`/g, ''))) bare.push(`${at}: ${v}`);
        else if (k !== 'examples' && k !== 'example') walk(v, `${at}/${k}`);
      }
    };
    walk(doc, '');
    expect(bare).toEqual([]);
  });

  it('operation summaries say what the tool does', async () => {
    const doc = YAML.parse(await generateOpenApi()) as Doc;
    for (const { tool, op } of toolOperations(doc)) {
      expect(op.summary, tool.name).not.toBe(tool.name);
      expect(tool.description.startsWith(op.summary), tool.name).toBe(true);
      expect(op.summary.length, tool.name).toBeLessThanOrEqual(80);
    }
  });
});
