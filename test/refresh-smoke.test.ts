import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './helpers/realdata.js';

/**
 * Seed 004's automated verification, adapted: the built package (dist/, ESM), in a fresh Node
 * process, ten `onTurn` calls, exactly two refreshes, `context_refresh_ok` and exit 0.
 * The package is imported by its own name, through package.json "exports", as a user would.
 */
test('seed 004 smoke script against the built package: ten onTurn calls, two refreshes', () => {
  assert.ok(existsSync(join(repoRoot, 'dist', 'index.js')), 'run `npm run build` first (npm test does)');
  const script = `
    const { ContextRefresher } = await import('devs-ctx');
    const mockProvider = { getSummary: async () => ({ tasSummary: 'TAS', prdSummary: 'PRD' }) };
    const r = new ContextRefresher({ threshold: 5, summaryProvider: mockProvider });
    let refreshCount = 0;
    for (let i = 1; i <= 10; i++) {
      const result = await r.onTurn(i);
      if (result.refreshed) refreshCount++;
    }
    if (refreshCount !== 2) process.exit(1);
    console.log('context_refresh_ok');
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: repoRoot });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, 'context_refresh_ok\n');
});

test('the package root exports the refresh and loop API', async () => {
  const packageName = 'devs-ctx';
  const lib = (await import(packageName)) as Record<string, unknown>;
  for (const name of [
    'ContextRefresher',
    'OrchestratorContextInjector',
    'OrchestratorLoop',
    'planRefresh',
    'PinnedTurnsSummaryProvider',
    'FileSummaryProvider',
    'CondensingSummaryProvider',
    'OutlineCondenser',
  ]) {
    assert.equal(typeof lib[name], 'function', name);
  }
});
