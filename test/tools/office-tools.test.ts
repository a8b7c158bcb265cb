// read_docx and read_excel over the real HTTP app: exact text of generated documents, images fetched back
// byte for byte through GET /v1/attachments/{id} by the same caller only, engine errors as envelopes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { png, SAMPLE_DOCX_MARKDOWN, sampleDocx, sampleXlsx } from '../office/fixtures.js';
import { makeToken } from '../ops/ops-helpers.js';

interface Attachment {
  id: string;
  name: string;
  media_type: string;
  bytes: number;
}
interface OfficeData {
  content: string;
  truncated: boolean;
  attachments: Attachment[];
  sheets?: Array<{ name: string }>;
  truncated_at?: { sheet: string; row: number } | null;
}

const DOCX_TEXT = SAMPLE_DOCX_MARKDOWN;

describe('read_docx and read_excel (single project, no auth)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
    await fs.writeFile(t.file('report.docx'), await sampleDocx());
    await fs.writeFile(t.file('book.xlsx'), await sampleXlsx());
    await fs.writeFile(t.file('legacy.xls'), Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]));
    await fs.writeFile(t.file('notes.docx'), '# not a zip\n');
  });
  afterAll(() => t.close());
  afterEach(() => vi.useRealTimers());

  it('reads a .docx as Markdown and serves its image through the attachments route, byte for byte', async () => {
    const res = await t.call('read_docx', { path: 'report.docx' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('success');
    const data = res.body.data as OfficeData;
    expect(data.content).toBe(DOCX_TEXT);
    expect(data.truncated).toBe(false);
    expect(data.attachments).toHaveLength(1);
    const [att] = data.attachments as [Attachment];
    expect(att).toMatchObject({ name: 'image1.png', media_type: 'image/png', bytes: png().length });
    expect(att.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(res.body.context.path_resolved).toBe('report.docx');
    const got = await t.app.inject({ method: 'GET', url: `/v1/attachments/${att.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(got.rawPayload, png())).toBe(0);
    // Stored under the state directory, invisible to the file tools.
    const names = await fs.readdir(path.join(t.root, '.toolgate', 'attachments'));
    expect(names).toContain(`${att.id}.bin`);
    expect((await t.call('list_directory', { path: '.toolgate/attachments' })).body.error?.code).toBe('ACCESS_DENIED');
  });

  it('answers the alias file-read-docx', async () => {
    const res = await t.call('file-read-docx', { path: 'report.docx' });
    expect((res.body.data as OfficeData).content).toBe(DOCX_TEXT);
  });

  it('reads a workbook, one sheet, a range; its image comes back too', async () => {
    const all = await t.call('read_excel', { path: 'book.xlsx' });
    expect(all.status).toBe(200);
    const data = all.body.data as OfficeData;
    expect(data.content).toContain('| 3 | Birnen \\| gelb | 5 | 2.25 | 2024-03-02T13:30:00 |');
    expect(data.sheets?.map((s) => s.name)).toEqual(['Übersicht', 'Zweites Blatt']);
    const img = await t.app.inject({ method: 'GET', url: `/v1/attachments/${data.attachments[0]?.id}` });
    expect(Buffer.compare(img.rawPayload, png())).toBe(0);
    const one = await t.call('file-read-excel', { path: 'book.xlsx', sheet: 'Zweites Blatt', range: 'C3:C3' });
    expect((one.body.data as OfficeData).content).toBe('## Sheet 2: Zweites Blatt\n\n|  | C |\n|---|---|\n| 3 | 42 |\n');
    const formulas = await t.call('read_excel', { path: 'book.xlsx', sheet: 1, range: 'A4:B4', formulas: true });
    expect((formulas.body.data as OfficeData).content).toContain('| 4 | Summe | 8 (=SUM(B2:B3)) |');
  });

  it('refuses .xls with the engine message, a bad selector and a non-zip as envelope errors', async () => {
    const xls = await t.call('read_excel', { path: 'legacy.xls' });
    expect(xls.status).toBe(400);
    expect(xls.body.error?.code).toBe('INVALID_PARAM');
    expect(xls.body.error?.message).toContain('Save the workbook as .xlsx');
    expect(xls.body.error?.details).toMatchObject({ office_code: 'UNSUPPORTED_FORMAT' });
    const sheet = await t.call('read_excel', { path: 'book.xlsx', sheet: 'Gibt es nicht' });
    expect(sheet.body.error).toMatchObject({ code: 'INVALID_PARAM', details: { office_code: 'INVALID_SELECTOR' } });
    const notZip = await t.call('read_docx', { path: 'notes.docx' });
    expect(notZip.status).toBe(422);
    expect(notZip.body.error).toMatchObject({ code: 'ENCODING_ERROR', details: { office_code: 'NOT_AN_ARCHIVE' } });
    expect((await t.call('read_docx', { path: 'missing.docx' })).body.error?.code).toBe('NOT_FOUND');
  });

  it('404s an unknown or malformed id with an envelope', async () => {
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', '..%2F..%2Fetc', 'x']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/attachments/${id}` });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND' } });
    }
  });

  it('expires attachments after the retention and sweeps them', async () => {
    const res = await t.call('read_docx', { path: 'report.docx' });
    const id = (res.body.data as OfficeData).attachments[0]?.id as string;
    expect((await t.app.inject({ method: 'GET', url: `/v1/attachments/${id}` })).statusCode).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3601_000);
    expect((await t.app.inject({ method: 'GET', url: `/v1/attachments/${id}` })).statusCode).toBe(404);
    // The fetch swept it (at most once a minute, and the clock moved an hour).
    await vi.waitFor(async () => expect(await fs.readdir(path.join(t.root, '.toolgate', 'attachments'))).not.toContain(`${id}.bin`));
  });
});

describe('read_docx output cap', () => {
  it('truncates like read_file and says so', async () => {
    const t = await makeApp({ TOOLGATE_MAX_OUTPUT_BYTES: '30' });
    try {
      await fs.writeFile(t.file('report.docx'), await sampleDocx());
      const res = await t.call('read_docx', { path: 'report.docx' });
      expect(res.body.status).toBe('partial');
      expect(res.body.data).toMatchObject({ truncated: true, content: '# Quarterly Überblick\n\n' });
      expect(res.body.text).toContain('truncated');
    } finally {
      await t.close();
    }
  });

  it('refuses a document over TOOLGATE_OFFICE_MAX_BYTES before parsing it', async () => {
    const t = await makeApp({ TOOLGATE_OFFICE_MAX_BYTES: '1000' });
    try {
      await fs.writeFile(t.file('report.docx'), await sampleDocx());
      const res = await t.call('read_docx', { path: 'report.docx' });
      expect(res.status).toBe(413);
      expect(res.body.error?.message).toContain('TOOLGATE_OFFICE_MAX_BYTES');
    } finally {
      await t.close();
    }
  });
});

describe('attachments belong to their caller and project', () => {
  const alice = makeToken('alice');
  const bob = makeToken('bob');
  let t: TestApp;
  let projectsRoot: string;
  beforeAll(async () => {
    projectsRoot = await makeTempDir('toolgate-office-projects-');
    for (const p of ['a', 'b']) {
      await fs.mkdir(path.join(projectsRoot, p));
      await fs.writeFile(path.join(projectsRoot, p, 'report.docx'), await sampleDocx());
    }
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot }, { tokens: [alice.entry, bob.entry] });
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });

  it('serves the bytes to the same token in the same project only', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/projects/a/tools/read_docx', payload: { path: 'report.docx' }, headers: alice.header });
    const id = (res.json().data as OfficeData).attachments[0]?.id as string;
    const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });
    const own = await get(`/v1/projects/a/attachments/${id}`, alice.header);
    expect(own.statusCode).toBe(200);
    expect(Buffer.compare(own.rawPayload, png())).toBe(0);
    expect((await get(`/v1/attachments/${id}`, { ...alice.header, 'x-project-id': 'a' })).statusCode).toBe(200);
    expect((await get(`/v1/projects/a/attachments/${id}`, bob.header)).statusCode).toBe(404);
    expect((await get(`/v1/projects/b/attachments/${id}`, alice.header)).statusCode).toBe(404);
    expect((await get(`/v1/projects/a/attachments/${id}`, {})).statusCode).toBe(401);
  });
});
