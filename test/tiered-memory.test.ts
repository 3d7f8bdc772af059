import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveStore } from '../src/archive/store.js';
import { DEFAULT_PRUNE_THRESHOLD, MemoryRefresher, pruneThresholdFromEnv, TieredMemoryManager } from '../src/archive/tiered-memory.js';
import { DRIFT_GUARD_PINNED_TYPES } from '../src/core/prune/context-entry.js';
import type { BudgetPruner, ContextEntry } from '../src/core/prune/context-entry.js';
import { UsageError } from '../src/core/errors.js';

/**
 * A small real pruner for these tests (the real ContextPruner gets its own integration test):
 * keeps pinned types, drops the oldest other entries until the rest fits the budget.
 */
const oldestFirstPruner: BudgetPruner = {
  prune(entries, tokenBudget) {
    const pinned = entries.filter((e) => DRIFT_GUARD_PINNED_TYPES.has(e.type));
    const rest = entries.filter((e) => !DRIFT_GUARD_PINNED_TYPES.has(e.type)).sort((a, b) => a.timestamp - b.timestamp);
    let total = [...pinned, ...rest].reduce((sum, e) => sum + e.tokenCount, 0);
    while (total > tokenBudget && rest.length > 0) total -= rest.shift()!.tokenCount;
    return [...pinned, ...rest].sort((a, b) => a.timestamp - b.timestamp);
  },
};

function tempArchive(t: { after(fn: () => void): void }): { path: string; store: ArchiveStore } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-memory-'));
  const path = join(dir, 'archive.sqlite');
  const store = ArchiveStore.open(path);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, store };
}

function entry(id: string, type: ContextEntry['type'], tokenCount: number, timestamp: number, content = `${type} ${id}`): ContextEntry {
  return { id, type, content, tokenCount, timestamp };
}

const sum = (entries: readonly ContextEntry[]): number => entries.reduce((s, e) => s + e.tokenCount, 0);

test('the prune threshold comes from DEVS_PRUNE_THRESHOLD at construction, else 800,000', () => {
  const refresher = { flush: () => {} };
  const env: Record<string, string | undefined> = { DEVS_PRUNE_THRESHOLD: '1200' };
  const manager = new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, env });
  env['DEVS_PRUNE_THRESHOLD'] = '5';
  assert.equal(manager.pruneThreshold, 1200, 'read once, at construction');
  assert.equal(manager.tokenBudget, 900, 'default budget: 75% of the threshold');
  assert.equal(new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, env: {} }).pruneThreshold, DEFAULT_PRUNE_THRESHOLD);
  assert.equal(DEFAULT_PRUNE_THRESHOLD, 800_000);
  assert.equal(
    new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, env, pruneThreshold: 50, tokenBudget: 50 }).pruneThreshold,
    50,
    'an explicit option wins',
  );
  assert.equal(pruneThresholdFromEnv({ DEVS_PRUNE_THRESHOLD: '800_000' }), 800_000);
  for (const bad of ['0', '-3', '1.5', 'lots']) assert.throws(() => pruneThresholdFromEnv({ DEVS_PRUNE_THRESHOLD: bad }), UsageError, bad);
  assert.throws(() => new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, pruneThreshold: 10, tokenBudget: 11 }), UsageError);
});

test('below the threshold nothing is pruned or flushed', () => {
  let flushes = 0;
  const manager = new TieredMemoryManager({ pruner: oldestFirstPruner, refresher: { flush: () => void flushes++ }, pruneThreshold: 100, tokenBudget: 50 });
  for (let i = 0; i < 10; i++) assert.deepEqual(manager.addEntry(entry(`r${i}`, 'reasoning', 10, i)), []);
  assert.equal(flushes, 0);
  assert.equal(manager.totalTokens(), 100, 'exactly at the threshold is not over it');
  assert.equal(manager.shortTerm().length, 10);
});

test('[3_MCP-RISK-303] over the threshold: TAS and requirements stay, the oldest turns go to the SQLite medium-term store', (t) => {
  const { path, store } = tempArchive(t);
  const refresher = new MemoryRefresher(store, { scope: 'session-1', now: () => new Date('2026-11-23T12:00:00.000Z') });
  const manager = new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, pruneThreshold: 1000, tokenBudget: 600 });

  const all: ContextEntry[] = [entry('tas', 'tas', 150, 1), entry('req', 'requirements', 100, 2)];
  for (let i = 0; i < 40; i++) {
    const kind = i % 3 === 2 ? 'tool_result' : 'reasoning';
    all.push(entry(`turn-${i}`, kind, 40, 10 + i, `${kind} number ${i} about the invoice exporter step${i}`));
  }
  const flushed: ContextEntry[] = [];
  for (const e of all) {
    flushed.push(...manager.addEntry(e));
    assert.ok(manager.totalTokens() <= 1000, 'never left over the threshold');
  }
  const shortTerm = manager.shortTerm();
  assert.ok(flushed.length > 0, 'a prune ran');
  assert.ok(shortTerm.some((e) => e.id === 'tas') && shortTerm.some((e) => e.id === 'req'), 'pinned entries kept');
  assert.ok(
    flushed.every((e) => !DRIFT_GUARD_PINNED_TYPES.has(e.type)),
    'only unpinned entries flushed',
  );
  const newestFlushed = Math.max(...flushed.map((e) => e.timestamp));
  assert.ok(
    shortTerm.filter((e) => e.type !== 'tas' && e.type !== 'requirements').every((e) => e.timestamp > newestFlushed),
    'oldest went first',
  );

  // Nothing is lost: every entry is either still in context or in the medium-term store, once.
  const stored = refresher.recall(flushed.map((e) => e.id));
  assert.deepEqual(stored, flushed, 'stored as flushed, in the order asked');
  assert.deepEqual(new Set([...shortTerm, ...stored].map((e) => e.id)), new Set(all.map((e) => e.id)));
  assert.equal(shortTerm.length + stored.length, all.length);
  assert.equal(sum(shortTerm) + sum(stored), sum(all));

  // Found again by what they say, and still there after reopening the archive file.
  assert.deepEqual(
    refresher.recall('step0').map((e) => e.id),
    ['turn-0'],
  );
  const reopened = ArchiveStore.open(path);
  t.after(() => reopened.close());
  assert.deepEqual(
    new MemoryRefresher(reopened, { scope: 'session-1' }).recall(['turn-1', 'missing', 'turn-0']).map((e) => e.id),
    ['turn-1', 'turn-0'],
  );
  assert.deepEqual(new MemoryRefresher(reopened, { scope: 'other' }).recall('step0'), [], 'scopes are separate');
});

test('pinned entries over the budget are all kept; everything else is flushed', (t) => {
  const { store } = tempArchive(t);
  const refresher = new MemoryRefresher(store);
  const manager = new TieredMemoryManager({ pruner: oldestFirstPruner, refresher, pruneThreshold: 300, tokenBudget: 200 });
  manager.addEntry(entry('r1', 'reasoning', 50, 1));
  manager.addEntry(entry('tas', 'tas', 150, 2));
  manager.addEntry(entry('spec', 'spec', 120, 3));
  assert.deepEqual(
    manager.shortTerm().map((e) => e.id),
    ['tas', 'spec'],
  );
  assert.deepEqual(
    refresher.recall(['r1']).map((e) => e.id),
    ['r1'],
  );
});

test('when the flush fails the short-term buffer is left whole', () => {
  const manager = new TieredMemoryManager({
    pruner: oldestFirstPruner,
    refresher: {
      flush: () => {
        throw new Error('disk full');
      },
    },
    pruneThreshold: 100,
    tokenBudget: 50,
  });
  for (let i = 0; i < 3; i++) manager.addEntry(entry(`r${i}`, 'reasoning', 30, i));
  assert.throws(() => manager.addEntry(entry('r3', 'reasoning', 30, 3)), /disk full/);
  assert.deepEqual(
    manager.shortTerm().map((e) => e.id),
    ['r0', 'r1', 'r2', 'r3'],
  );
});

test('a pruner that returns entries it was not given is refused', () => {
  const manager = new TieredMemoryManager({
    pruner: { prune: (entries) => entries.map((e) => ({ ...e })) },
    refresher: { flush: () => {} },
    pruneThreshold: 10,
    tokenBudget: 5,
  });
  assert.throws(() => manager.addEntry(entry('r0', 'reasoning', 30, 0)), /not one of the entries it was given/);
});

test('flushing an entry again replaces it; metadata round-trips', (t) => {
  const { store } = tempArchive(t);
  const refresher = new MemoryRefresher(store);
  refresher.flush([{ ...entry('x', 'reasoning', 5, 1, 'first text'), metadata: { node: 'plan', n: [1, 2] } }]);
  refresher.flush([entry('x', 'reasoning', 7, 2, 'second text')]);
  assert.deepEqual(refresher.recall(['x']), [entry('x', 'reasoning', 7, 2, 'second text')]);
  assert.deepEqual(refresher.recall('first'), [], 'the old text left the search index');
  refresher.flush([{ ...entry('y', 'summary', 3, 3, 'with meta'), metadata: { node: 'plan', n: [1, 2] } }]);
  assert.deepEqual(refresher.recall('meta')[0]?.metadata, { node: 'plan', n: [1, 2] });
  refresher.flush([]);
});
