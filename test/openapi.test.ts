import fs from 'node:fs/promises';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateOpenApi } from '../src/openapi.js';
import { TOOLS } from '../src/tools/registry.js';
import { makeApp } from './helpers.js';

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
