import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers/realdata.js';

// Imports the built package by its own name, through package.json "exports", as a user would.
test('the package root exports the library surface (SPEC §9 names built so far)', async () => {
  const packageName = 'devs-ctx'; // a variable, so the typecheck does not need dist/ to exist
  const lib = (await import(packageName)) as Record<string, unknown>;
  for (const name of [
    'annotateWithTokenEstimates',
    'shouldTriggerSoftPrune',
    'shouldTriggerHardPrune',
    'classifyPruneUrgency',
    'selectTurnsForSummarization',
    'partitionTurns',
    'parseDocument',
    'readTranscript',
    'detectFormat',
    'resolveSettings',
    'buildAnalyzeReport',
    'ExitCode',
    'ContextPruner',
    'createDefaultContextPruner',
    'SlidingRelevanceWindow',
    'ContextCompressor',
    'TieredMemoryManager',
    'MemoryRefresher',
    'planPrune',
    'pruneDocument',
    'ArchiveStore',
    'openArchiveAt',
    'SqliteArchive',
    'PostgresArchive',
    'copyArchive',
    'PINNED_TURN_TYPES',
    'ContextRefresher',
    'OrchestratorContextInjector',
    'OrchestratorLoop',
    'GeminiClient',
    'FlashSummarizer',
    'GeminiEmbedder',
    'redactSecrets',
  ]) {
    assert.equal(typeof lib[name] === 'function' || typeof lib[name] === 'object', true, name);
  }
  const { annotateWithTokenEstimates, classifyPruneUrgency, toContextWindow, DEFAULT_PRUNER_CONFIG } = lib as {
    annotateWithTokenEstimates: (t: unknown[]) => Array<{ tokenCount?: number }>;
    classifyPruneUrgency: (w: unknown, c: unknown) => string;
    toContextWindow: (t: unknown[]) => { totalTokenEstimate: number };
    DEFAULT_PRUNER_CONFIG: unknown;
  };
  const turns = annotateWithTokenEstimates([{ id: 'a', role: 'user', type: 'message', content: 'hello world' }]);
  assert.equal(turns[0]?.tokenCount, 2);
  assert.equal(classifyPruneUrgency(toContextWindow(turns), DEFAULT_PRUNER_CONFIG), 'none');
});

test('the package root keeps internals to itself, and ContextPruner names its two forms', async () => {
  const packageName = 'devs-ctx';
  const lib = (await import(packageName)) as Record<string, unknown>;
  for (const name of [
    'countEntries',
    'buildUnits',
    'WRITERS',
    'renderOutput',
    'analyzeContext',
    'calibrate',
    'pruneToBudget',
    'buildPruneReport',
    'isPostgresUrl',
  ]) {
    assert.equal(lib[name], undefined, name);
  }
  const pruner = lib['ContextPruner'] as { prototype: Record<string, unknown> };
  for (const method of ['prune', 'pruneWindow', 'pruneToBudget']) assert.equal(typeof pruner.prototype[method], 'function', method);
});

test("the exported schemas parse and safeParse, with zod's English messages, from the built package", async () => {
  const packageName = 'devs-ctx';
  type Issue = { path: PropertyKey[]; message: string };
  type Schema = { parse(value: unknown): unknown; safeParse(value: unknown): { success: boolean; data?: unknown; error?: { issues: Issue[] } } };
  const lib = (await import(packageName)) as { TurnSchema: Schema; SaopEnvelopeSchema: Schema };
  const turn = { id: 't1', role: 'user', type: 'message', content: 'hi', extra: { kept: true } };
  assert.deepEqual(lib.TurnSchema.parse(turn), turn);
  const bad = lib.TurnSchema.safeParse({ id: '', role: 'bot', type: 'message', content: 1 });
  assert.equal(bad.success, false);
  assert.deepEqual(
    bad.error?.issues.map((issue) => [issue.path.join('.'), issue.message]),
    [
      ['id', 'Too small: expected string to have >=1 characters'],
      ['role', 'Invalid option: expected one of "system"|"user"|"assistant"|"tool"'],
      ['content', 'Invalid input: expected string, received number'],
    ],
  );
  assert.throws(
    () => lib.SaopEnvelopeSchema.parse({ thought: 1 }),
    (error: unknown) => error instanceof Error && /Invalid input: expected object, received number/.test(error.message),
  );
});

test('the library entry never imports the CLI', () => {
  const index = readFileSync(join(repoRoot, 'src', 'index.ts'), 'utf8');
  assert.doesNotMatch(index, /from '\.\/cli\//);
});

test('createDefaultContextPruner prunes offline with the seed limits, from the built package', async () => {
  const packageName = 'devs-ctx';
  const lib = (await import(packageName)) as {
    createDefaultContextPruner: () => {
      prune: (w: unknown, task: string) => Promise<{ pruned: boolean; window: { turns: Array<{ content: string }>; totalTokenEstimate: number } }>;
    };
  };
  const turns = [
    { id: 's', role: 'system', type: 'system', content: 'system prompt', tokenCount: 1000 },
    { id: 'p', role: 'user', type: 'prd', content: 'PRD', tokenCount: 1000 },
    ...Array.from({ length: 20 }, (_, i) => ({
      id: `t${i}`,
      role: 'assistant',
      type: 'message',
      content: `edited src/file${i}.ts for REQ-${i}`,
      tokenCount: 30_000,
    })),
  ];
  const result = await lib.createDefaultContextPruner().prune({ turns, totalTokenEstimate: 602_000 }, 'REQ-19');
  assert.equal(result.pruned, true);
  assert.ok(result.window.totalTokenEstimate <= 250_000);
  const summary = result.window.turns.find((t) => t.content.startsWith('[Context Summary]'));
  assert.ok(summary?.content.includes('src/file3.ts'), 'the offline summary keeps file paths verbatim');
});
