// Loads the edit corpus (test/fixtures/edit-corpus/<case>/case.json + files) for the engine test, the HTTP test and the benchmark.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorCode } from '../../src/envelope.js';
import type { EditRequest, MatchStage } from '../../src/edit/engine.js';

/**
 * Layout: one directory per case with case.json ({ description, file, edits | old_text/new_text/replace_all,
 * expect: "expected.<file>" | { error, ... }, stages? }), the input file and the expected file, byte-exact.
 * JavaScript/TypeScript inputs carry a `.fixture` suffix on disk so that tsc and eslint, which cover
 * test/, leave them alone; `Case.file` is the name without it.
 */
export const CORPUS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/edit-corpus');

/** What a failing case must report. Only the fields given are checked. */
export interface ExpectedError {
  error: ErrorCode;
  /** The whole message. */
  message?: string;
  message_includes?: string;
  /** MULTIPLE_MATCHES: details.lines. */
  lines?: number[];
  /** NO_MATCH: details.closest.start_line. */
  closest_start_line?: number;
  /** NO_MATCH: each of these is in details.differences. */
  differences?: string[];
  edit_index?: number;
}

export interface Case {
  /** Directory name. */
  name: string;
  dir: string;
  description: string;
  /** Name for the file in a workspace (e.g. `store.ts`). */
  file: string;
  /** The input's file name inside the case directory (`store.ts.fixture`). */
  fixtureFile: string;
  inputBytes: Buffer;
  /** The input decoded as UTF-8, BOM kept as U+FEFF. */
  input: string;
  edits: EditRequest[];
  expect: { bytes: Buffer; text: string } | ExpectedError;
  /** Stage each edit should match at, when the case pins it. */
  stages?: MatchStage[];
}

interface CaseJson {
  description: string;
  file: string;
  edits?: EditRequest[];
  old_text?: string;
  new_text?: string;
  replace_all?: boolean;
  expect: string | ExpectedError;
  stages?: MatchStage[];
}

const decode = (b: Buffer) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);

export function loadCorpus(dir: string = CORPUS_DIR): Case[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const caseDir = path.join(dir, name);
      const json = JSON.parse(fs.readFileSync(path.join(caseDir, 'case.json'), 'utf8')) as CaseJson;
      const edits: EditRequest[] =
        json.edits ??
        [{ old_text: json.old_text ?? '', new_text: json.new_text ?? '', ...(json.replace_all !== undefined ? { replace_all: json.replace_all } : {}) }];
      const inputBytes = fs.readFileSync(path.join(caseDir, json.file));
      let expect: Case['expect'];
      if (typeof json.expect === 'string') {
        const bytes = fs.readFileSync(path.join(caseDir, json.expect));
        expect = { bytes, text: decode(bytes) };
      } else {
        expect = json.expect;
      }
      return {
        name,
        dir: caseDir,
        description: json.description,
        file: json.file.replace(/\.fixture$/, ''),
        fixtureFile: json.file,
        inputBytes,
        input: decode(inputBytes),
        edits,
        expect,
        ...(json.stages ? { stages: json.stages } : {}),
      };
    });
}

export function isErrorCase(expect: Case['expect']): expect is ExpectedError {
  return 'error' in expect;
}
