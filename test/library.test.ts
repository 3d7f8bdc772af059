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

test('the library entry never imports the CLI', () => {
  const index = readFileSync(join(repoRoot, 'src', 'index.ts'), 'utf8');
  assert.doesNotMatch(index, /from '\.\/cli\//);
});
