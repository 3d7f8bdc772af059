import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runInProcess } from './helpers/cli.js';
import { realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';
import { join } from 'node:path';
import { seeded } from './helpers/prng.js';

/** No input, however broken, crashes the tool: a clean result (0/10/11) or a clean error (4). */
async function assertClean(name: string, input: Buffer): Promise<void> {
  const result = await runInProcess(['analyze', '-', '--json'], { input });
  assert.ok([0, 4, 10, 11].includes(result.exitCode), `${name}: exit ${result.exitCode}: ${result.stdout.slice(0, 500)} ${result.stderr}`);
  const doc = JSON.parse(result.stdout) as { schemaVersion?: number; error?: { code: string } };
  // A report is analyze's schema 2; an error document keeps the errors' schema 1.
  assert.equal(doc.schemaVersion, result.exitCode === 4 ? 1 : 2, name);
  if (result.exitCode === 4) assert.equal(doc.error?.code, 'invalid_transcript', name);
}

test('random bytes never crash the tool', async () => {
  const rand = seeded(42);
  for (let i = 0; i < 60; i++) {
    const length = Math.floor(rand() * 4000);
    const bytes = Buffer.alloc(length);
    for (let j = 0; j < length; j++) bytes[j] = rand() < 0.1 ? 10 : Math.floor(rand() * 256);
    await assertClean(`random #${i}`, bytes);
  }
});

test('random JSON-ish text never crashes the tool', async () => {
  const rand = seeded(7);
  const pieces = [
    '{',
    '}',
    '[',
    ']',
    '"',
    ':',
    ',',
    '\n',
    '"role"',
    '"type"',
    '"content"',
    '"id"',
    '"user"',
    '"message"',
    'null',
    '1',
    '\\',
    '\u0000',
    'é',
    '{"id":"a","role":"user","type":"message","content":"x"}',
  ];
  for (let i = 0; i < 80; i++) {
    let text = '';
    const n = Math.floor(rand() * 200);
    for (let j = 0; j < n; j++) text += pieces[Math.floor(rand() * pieces.length)];
    await assertClean(`jsonish #${i}`, Buffer.from(text));
  }
});

/** `{"a":{"a":…1…}}`, nested `depth` times: parses, but naive recursion over it overflows. */
function deep(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

test('deeply nested JSON, NUL bytes and invalid UTF-8 never crash the tool', async () => {
  const depth = 200_000;
  const cases: Array<[string, Buffer]> = [
    ['nested arrays', Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}\n`)],
    ['nested objects in a turn', Buffer.from(`{"id":"a","role":"user","type":"message","content":"x","deep":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}\n`)],
    ['nested envelope action', Buffer.from(`{"thought":{"reasoning":"r"},"action":${'['.repeat(5000)}${']'.repeat(5000)}}\n`)],
    ['NUL in a line', Buffer.from('{"id":"a","role":"user","type":"message","content":"x"}\n{"id":"b",\u0000"role":"user"}\n')],
    [
      'invalid UTF-8 in content',
      Buffer.concat([Buffer.from('{"id":"a","role":"user","type":"message","content":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}\n')]),
    ],
    ['only blank lines', Buffer.from('\n\r\n   \n')],
    ['a JSON string per line', Buffer.from('"a"\n"b"\n')],
    ['unbalanced glued', Buffer.from('{"a":1}{"b":\n')],
    [
      'claude tool_use input nested deep',
      Buffer.from(
        `{"type":"assistant","uuid":"a","parentUuid":null,"sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":${deep(5000)}}]}}\n`,
      ),
    ],
    [
      'codex arguments nested deep',
      Buffer.from(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"f","call_id":"c","arguments":${deep(5000)}}}\n`),
    ],
    [
      'gemini args nested deep',
      Buffer.from(
        `{"sessionId":"s","projectHash":"h","startTime":"t"}\n{"id":"g","timestamp":"t","type":"gemini","content":"x","toolCalls":[{"id":"c","name":"f","args":${deep(5000)}}]}\n`,
      ),
    ],
    [
      'openai tool_call arguments nested deep',
      Buffer.from(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":${deep(5000)}}}]}\n`),
    ],
  ];
  for (const [name, bytes] of cases) await assertClean(name, bytes);
});

test('truncated transcripts read what is there', { skip: realdataSkip }, async () => {
  const rand = seeded(99);
  const files = [...realdataFiles(), join(repoRoot, 'fixtures', 'devs', 'basic-session.jsonl')];
  for (const path of files) {
    const bytes = readFileSync(path);
    for (let k = 0; k < 3; k++) {
      const cut = Math.floor(rand() * bytes.length);
      await assertClean(`${realdataName(path)} cut at ${cut}`, bytes.subarray(0, cut));
    }
  }
});
