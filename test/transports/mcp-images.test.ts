// Images over MCP: read_file of a PNG and the pictures read_docx extracts reach the model as image content,
// within a bound per result, and only for the caller that read them.
import fs from 'node:fs/promises';
import type { CallToolResult, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_IMAGE_BYTES_PER_RESULT } from '../../src/transports/mcp-server.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { largeDocx, png, sampleDocx } from '../office/fixtures.js';
import { makeToken } from '../ops/ops-helpers.js';
import { contentOf, envelopeOf, httpClient, mcpUrl, stdioClient, textOf } from './mcp-helpers.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

async function app(env: Record<string, string> = {}, tokens = [makeToken('a')]): Promise<TestApp> {
  const t = await makeApp(env, { tokens: tokens.map((x) => x.entry) });
  cleanup.push(() => t.close());
  return t;
}

const imagesOf = (r: unknown) => contentOf(r).filter((c): c is ImageContent => c.type === 'image');

describe('MCP image content', () => {
  it('read_file of a PNG answers the image, not its base64 as text', async () => {
    const a = makeToken('a');
    const t = await app({}, [a]);
    await fs.writeFile(t.file('dot.png'), png());
    const client = await httpClient(await mcpUrl(t.app), a.header);
    cleanup.push(() => client.close());
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'dot.png' } });
    expect(envelopeOf(read)).toMatchObject({ status: 'success', data: { media_type: 'image/png', encoding: 'base64' } });
    expect(imagesOf(read)).toEqual([{ type: 'image', data: png().toString('base64'), mimeType: 'image/png' }]);
    expect(textOf(read)).not.toContain(png().toString('base64'));
  });

  it('read_docx answers its pictures as images, for the caller that read the document only', async () => {
    const a = makeToken('a');
    const b = makeToken('b');
    const t = await app({}, [a, b]);
    await fs.writeFile(t.file('doc.docx'), await sampleDocx());
    const client = await httpClient(await mcpUrl(t.app), a.header);
    cleanup.push(() => client.close());
    const read = await client.callTool({ name: 'read_docx', arguments: { path: 'doc.docx' } });
    const attachments = (envelopeOf(read).data as { attachments: { id: string; media_type: string }[] }).attachments;
    expect(attachments).toHaveLength(1);
    expect(imagesOf(read)).toEqual([{ type: 'image', data: png().toString('base64'), mimeType: 'image/png' }]);
    // The attachment is stored for token a: token b cannot fetch it.
    const other = await t.app.inject({ method: 'GET', url: `/v1/attachments/${attachments[0]?.id}`, headers: b.header });
    expect(other.statusCode).toBe(404);
  });

  it(`shows at most ${MAX_IMAGE_BYTES_PER_RESULT} image bytes per result and names the rest`, async () => {
    const a = makeToken('a');
    const t = await app({}, [a]);
    // Four pictures of just under 1 MiB: three fit the 3 MiB bound, the fourth is named in the text.
    await fs.writeFile(t.file('big.docx'), await largeDocx(4 * (1024 * 1024 - 64), 1));
    const client = await httpClient(await mcpUrl(t.app), a.header);
    cleanup.push(() => client.close());
    const read = (await client.callTool({ name: 'read_docx', arguments: { path: 'big.docx' } })) as CallToolResult;
    const attachments = (envelopeOf(read).data as { attachments: { id: string }[] }).attachments;
    expect(attachments).toHaveLength(4);
    const shown = imagesOf(read);
    expect(shown).toHaveLength(3);
    expect(shown.reduce((n, img) => n + Buffer.byteLength(img.data, 'base64'), 0)).toBeLessThanOrEqual(MAX_IMAGE_BYTES_PER_RESULT);
    expect(textOf(read)).toMatch(/Not shown as images/);
    expect(textOf(read)).toContain(attachments[3]?.id);
  });

  it('over stdio too', async () => {
    const root = await makeTempDir('toolgate-mcp-img-');
    cleanup.push(() => fs.rm(root, { recursive: true, force: true }));
    await fs.writeFile(`${root}/doc.docx`, await sampleDocx());
    const { client } = await stdioClient(root, {});
    cleanup.push(() => client.close());
    const read = await client.callTool({ name: 'read_docx', arguments: { path: 'doc.docx' } });
    expect(imagesOf(read)).toEqual([{ type: 'image', data: png().toString('base64'), mimeType: 'image/png' }]);
  }, 30_000);
});
