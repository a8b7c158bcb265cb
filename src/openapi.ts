// The OpenAPI 3.1 document, generated from the routes and the zod tool definitions.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

/** Builds the app over a throw-away workspace and returns its OpenAPI document as YAML. */
export async function generateOpenApi(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-openapi-'));
  try {
    const app = await buildApp(loadConfig({ TOOLGATE_ROOT: dir }));
    try {
      return (await app.openApiDocument({ yaml: true })) as string;
    } finally {
      await app.close();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
