import fs from 'node:fs/promises';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateOpenApi } from '../src/openapi.js';
import { TOOLS } from '../src/tools/registry.js';
import { ToolError, type Envelope } from '../src/envelope.js';
import type { BeforeHook } from '../src/tools/execute.js';
import { makeApp, type TestApp } from './helpers.js';
import { sampleDocx, sampleXlsx } from './office/fixtures.js';

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

/** The workspace the examples assume: write_file's example has run, and the documents they read exist. */
async function seeded(): Promise<TestApp> {
  // No test reaches the network: the web tools are refused after their arguments were validated.
  const offline: BeforeHook = (_call, tool) => {
    if (WEB_TOOLS.has(tool.name)) throw new ToolError('ACCESS_DENIED', 'No network in this test.');
  };
  const t = await makeApp({}, { before: [offline] });
  await fs.writeFile(t.file('report.docx'), await sampleDocx());
  await fs.writeFile(t.file('data.xlsx'), await sampleXlsx());
  return t;
}

describe('OpenAPI examples', () => {
  it('every tool operation has a request example that its request schema accepts', async () => {
    const { doc, compile, describe: errorsText } = await openApiValidator();
    for (const { tool, op } of toolOperations(doc)) {
      const media = op.requestBody!.content['application/json']!;
      expect(media.example, tool.name).toBeDefined();
      const validate = compile(media.schema);
      expect(validate(media.example), `${tool.name}: ${errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('every request example runs against a fresh workspace without a 400', async () => {
    const doc = YAML.parse(await generateOpenApi()) as Doc;
    const writeExample = doc.paths['/v1/tools/write_file']!.post!.requestBody!.content['application/json']!.example;
    // Refusals that are not about the example: the web is offline here, a backup id names no backup yet, and
    // run_command is off by default (TOOLGATE_EXEC).
    const expected: Record<string, number> = { web_fetch: 403, web_search: 403, restore_backup: 404, run_command: 404 };
    for (const { tool, op } of toolOperations(doc)) {
      const t = await seeded();
      try {
        if (tool.name !== 'write_file') expect((await t.call('write_file', writeExample)).status).toBe(200);
        const res = await t.call(tool.name, op.requestBody!.content['application/json']!.example);
        expect(res.status, `${tool.name}: ${JSON.stringify(res.body.error)}`).toBe(expected[tool.name] ?? 200);
        expect(res.body.error?.code, tool.name).not.toBe('INVALID_PARAM');
      } finally {
        await t.close();
      }
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
          const value = ex.$ref ? doc.components.examples[ex.$ref.replace('#/components/examples/', '')]!.value : ex.value;
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
