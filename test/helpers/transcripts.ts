import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Transcript } from '../../src/formats/index.js';
import { parseDocument } from '../../src/io/jsonl.js';
import type { ParsedDocument } from '../../src/io/jsonl.js';
import { repoRoot } from './realdata.js';

/** A fixture under `fixtures/<format>/`, read with its bytes kept. */
export function fixtureDoc(format: string, name: string): ParsedDocument {
  const path = join(repoRoot, 'fixtures', format, name);
  return parseDocument(readFileSync(path), { path, keepRaw: true });
}

/**
 * A native transcript of `turns` turns of 900 generated words each, written to `file` (400 turns:
 * about 2.4 million characters, enough for a prune or analyze to count across worker threads).
 */
export function wordTranscript(file: string, turns: number): string {
  const words = 'invoice export parser window budget token cache prune summary module record field'.split(' ');
  const lines = Array.from({ length: turns }, (_, i) => {
    const content = Array.from({ length: 900 }, (_, k) => `${words[(i * 7 + k * 3) % words.length]}${(i * 31 + k) % 97}`).join(' ');
    return JSON.stringify({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user', type: 'message', content });
  });
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** A document of one JSON value per line, for small hand-made cases. */
export function inlineDoc(...lines: unknown[]): ParsedDocument {
  return parseDocument(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`), { path: 'inline', keepRaw: true });
}

/**
 * What every adapter's reading must keep, whatever the format: unique turn ids, each entry linked to
 * records that exist, and (where turns carry a `callId`) no tool result before its call.
 */
export function assertTranscriptInvariants(doc: ParsedDocument, t: Transcript, options: { resultsNeedCallId?: boolean } = {}): void {
  const ids = new Set<string>();
  const calls = new Set<string>();
  for (const [i, e] of t.entries.entries()) {
    assert.ok(!ids.has(e.turn.id), `duplicate turn id ${e.turn.id}`);
    ids.add(e.turn.id);
    assert.ok(e.source.records.length > 0, `entry ${i} has no record`);
    for (const r of e.source.records) assert.ok(r >= 0 && r < doc.records.length, `entry ${i}: record ${r} out of range`);
    const callId = e.turn['callId'];
    if (e.turn.type === 'tool_call' && typeof callId === 'string') calls.add(callId);
    if (e.turn.type !== 'tool_result') continue;
    if (options.resultsNeedCallId) assert.equal(typeof callId, 'string', `tool result ${e.turn.id} has no callId`);
    if (typeof callId === 'string') {
      assert.ok(calls.has(callId), `tool result ${e.turn.id} answers ${callId}, which has no earlier call`);
    }
  }
}

/**
 * A Claude Code subagent transcript (`subagents/agent-a1.jsonl`): only sidechain lines, one user request
 * and one assistant answer whose recorded context is 12,510 tokens (10 + 12,000 cache read + 500 written).
 */
export function subagentLines(sessionId: string, answer: string): Record<string, unknown>[] {
  const base = { sessionId, cwd: '/p', version: '2.1.20', userType: 'external', isSidechain: true, agentId: 'a1' };
  return [
    {
      ...base,
      type: 'user',
      uuid: 'u1',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:00Z',
      message: { role: 'user', content: 'Find every caller of parseConfig in src' },
    },
    {
      ...base,
      type: 'assistant',
      uuid: 'a1',
      parentUuid: 'u1',
      timestamp: '2026-01-01T00:00:01Z',
      requestId: 'r1',
      message: {
        id: 'm1',
        role: 'assistant',
        model: 'claude-haiku-4-5-20251001',
        content: [{ type: 'text', text: answer }],
        usage: { input_tokens: 10, cache_read_input_tokens: 12_000, cache_creation_input_tokens: 500, output_tokens: 20 },
      },
    },
  ];
}
