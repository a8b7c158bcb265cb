// What the MCP client libraries that agent platforms install hand their model of a tool result (issue 36),
// each set up as its own documentation shows, with no option for toolgate, over the real HTTP door:
// - the Vercel AI SDK's MCP client (@ai-sdk/mcp), its tools in generateText with a mock model that asks for
//   read_file, then records the prompt of its second step;
// - LangChain (@langchain/mcp-adapters' MultiServerMCPClient), the tool invoked with a tool call as an agent's
//   tool node does: the ToolMessage is what the model gets;
// - the OpenAI Agents SDK (MCPServerStreamableHttp on an Agent), run against a fake Responses API (a custom
//   fetch) that records the function_call_output of the second request.
// The model reads the file once, with its version, and never the envelope (structuredContent) beside it.
import fs from 'node:fs/promises';
import { createMCPClient } from '@ai-sdk/mcp';
import type { ToolMessage } from '@langchain/core/messages';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { Agent, MCPServerStreamableHttp, OpenAIResponsesModel, run, setTracingDisabled } from '@openai/agents';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, sha256OfFile, type TestApp } from '../helpers.js';
import { mcpUrl } from './mcp-helpers.js';

// The Agents SDK would export traces to OpenAI: nothing leaves loopback.
setTracingDisabled(true);

/** 3,000 bytes of text, 75 lines: the size the issue measured. */
const FILE = Array.from({ length: 75 }, (_, i) => `line ${String(i + 1).padStart(3, '0')}: ${'the quick brown fox jumps'.padEnd(29, '.')}\n`).join('');

let t: TestApp;
let url = '';
let sha = '';
beforeAll(async () => {
  t = await makeApp();
  await fs.writeFile(t.file('notes.txt'), FILE);
  sha = await sha256OfFile(t.file('notes.txt'));
  url = await mcpUrl(t.app);
});
afterAll(() => t.close());

const ARGS = { path: 'notes.txt' };

/** A content block as text: a plain text block by its text, anything else as the JSON a provider is sent. */
function blockText(block: unknown): string {
  const b = block as { type?: unknown; text?: unknown };
  const plain = b.type === 'text' || b.type === 'input_text';
  return plain && typeof b.text === 'string' && Object.keys(b).every((k) => ['type', 'text', 'id'].includes(k)) ? b.text : JSON.stringify(block);
}
const joined = (content: unknown): string => (typeof content === 'string' ? content : Array.isArray(content) ? content.map(blockText).join('\n') : JSON.stringify(content));

/** What the Vercel AI SDK hands the model: the tool result in the prompt of the step after the call. */
async function vercelReads(): Promise<string> {
  const client = await createMCPClient({ transport: { type: 'http', url } });
  try {
    const tools = await client.tools();
    const prompts: ModelMessage[][] = [];
    const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        prompts.push(prompt as ModelMessage[]);
        return prompts.length === 1
          ? { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: JSON.stringify(ARGS) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
          : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
      },
    });
    await generateText({ model, tools, prompt: 'Read notes.txt.', stopWhen: stepCountIs(2) });
    const message = prompts[1]?.at(-1);
    if (message?.role !== 'tool') throw new Error('no tool message in the second step');
    const part = message.content[0];
    if (part?.type !== 'tool-result') throw new Error('no tool result');
    const out = part.output;
    if (out.type === 'content') return joined(out.value);
    return out.type === 'text' || out.type === 'error-text' ? out.value : JSON.stringify(out);
  } finally {
    await client.close();
  }
}

/** What LangChain hands the model: the ToolMessage of the call. */
async function langchainReads(): Promise<string> {
  const client = new MultiServerMCPClient({ mcpServers: { toolgate: { transport: 'http', url } } });
  try {
    const read = (await client.getTools()).find((x) => x.name === 'read_file');
    if (!read) throw new Error('no read_file');
    const message = (await read.invoke({ name: 'read_file', args: ARGS, id: 'call_1', type: 'tool_call' })) as ToolMessage;
    return joined(message.content);
  } finally {
    await client.close();
  }
}

/** What the OpenAI Agents SDK hands the model: the function_call_output it sends with the next request. */
async function openaiAgentsReads(): Promise<string> {
  const sent: { input?: { type?: string; output?: unknown }[] }[] = [];
  const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    sent.push(JSON.parse(String(init?.body)) as (typeof sent)[number]);
    const output =
      sent.length === 1
        ? [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read_file', arguments: JSON.stringify(ARGS), status: 'completed' }]
        : [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }];
    return new Response(JSON.stringify({ id: `resp_${sent.length}`, object: 'response', created_at: 0, status: 'completed', model: 'test-model', output, usage }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const server = new MCPServerStreamableHttp({ url, name: 'toolgate' });
  await server.connect();
  try {
    const model = new OpenAIResponsesModel(new OpenAI({ apiKey: 'test-key', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 }), 'test-model');
    await run(new Agent({ name: 'reader', instructions: 'Read files when asked.', model, mcpServers: [server] }), 'Read notes.txt.');
  } finally {
    await server.close();
  }
  const output = sent[1]?.input?.find((item) => item.type === 'function_call_output')?.output;
  if (output === undefined) throw new Error('no function_call_output in the second request');
  return joined(output);
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('what each MCP client library hands its model of a read_file', () => {
  it.each([
    ['Vercel AI SDK (@ai-sdk/mcp)', vercelReads],
    ['LangChain (@langchain/mcp-adapters)', langchainReads],
    ['OpenAI Agents SDK (@openai/agents)', openaiAgentsReads],
  ])('%s: the file once, with its version, no envelope', async (_name, reads) => {
    const text = await reads();
    expect(occurrences(text, FILE)).toBe(1);
    expect(text).toContain(`Version: sha256 ${sha}`);
    // The envelope's fields (structuredContent) do not come along.
    expect(text).not.toMatch(/"(params_input|request_id|structuredContent)"/);
    // The summary before the file and the status after it: a few hundred characters on top of the file.
    expect(text.length - FILE.length).toBeLessThan(300);
  });
});
