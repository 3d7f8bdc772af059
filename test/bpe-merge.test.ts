import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { BpeCounter } from '../src/core/tokens/bpe.js';
import { WASM_MERGE_MAX_BYTES, WasmMerge } from '../src/core/tokens/bpe-merge.js';
import { ENCODING_NAMES, loadCounter } from '../src/core/tokens/encodings.js';
import { RankTable } from '../src/core/tokens/rank-table.js';
import { cliEnv } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { seeded } from './helpers/prng.js';
import { tempFolders } from './helpers/temp.js';

// The merge itself is checked against js-tiktoken, beside the JavaScript one, in test/tokens.test.ts.

const temp = tempFolders('devs-ctx-bpe-merge-');
/** A limit on the address space (KiB) that Node runs under and a WebAssembly memory's reservation does not fit in (64-bit). */
const ADDRESS_LIMIT_KIB = 4_000_000;

/** Runs `command` under `ulimit -v ADDRESS_LIMIT_KIB`, set by the shell that then runs it. */
function underAddressLimit(command: readonly string[], env?: Record<string, string>): SpawnSyncReturns<string> {
  return spawnSync('bash', ['-c', `ulimit -v ${ADDRESS_LIMIT_KIB} && exec "$@"`, 'bash', ...command], { encoding: 'utf8', ...(env ? { env } : {}) });
}

test('the WebAssembly modules in the sources are their .wat files compiled (bpe-merge.wat, terms.wat)', () => {
  const check = spawnSync(process.execPath, ['scripts/build-wasm.mjs', '--check'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('the counter the CLI loads merges pieces in WebAssembly once warm, and not before; one made not to, never', () => {
  // Words never seen before, in 300K characters: past the warm-up (256K), and new pieces after it.
  const next = seeded(45);
  const text = Array.from(
    { length: 40_000 },
    () => `${String.fromCharCode(97 + Math.floor(next() * 26), 97 + Math.floor(next() * 26))}ζ${Math.floor(next() * 1e4)}`,
  ).join(' ');
  for (const name of ENCODING_NAMES) {
    const counter = loadCounter(name);
    counter.count(text.slice(0, 100_000));
    assert.equal(counter.mergedInWebAssembly, 0, `${name}: before the warm-up`);
    counter.count(text.slice(100_000));
    assert.ok(counter.mergedInWebAssembly > 0, `${name}: none merged in WebAssembly once warm`);
  }
  const javascript = new BpeCounter(o200k, { wasmMerge: false, warmAfterChars: 0 });
  javascript.count(text);
  assert.equal(javascript.mergedInWebAssembly, 0);
});

test(`the WebAssembly merge takes a piece of up to ${WASM_MERGE_MAX_BYTES} bytes, and leaves a longer one (-1)`, () => {
  const merge = WasmMerge.over(RankTable.fromSource(o200k));
  assert.ok(merge);
  const javascript = new BpeCounter(o200k, { wasmMerge: false });
  // 85 three-byte characters and one of one byte: 256 bytes, then 257.
  const piece = `${'水总她党父に之未毛华息对间近定'.repeat(6).slice(0, 85)}a`;
  assert.equal(Buffer.byteLength(piece), WASM_MERGE_MAX_BYTES);
  assert.equal(merge.count(piece), javascript.countPiece(piece));
  assert.equal(merge.count(`${piece}b`), -1);
  // A lone surrogate is U+FFFD's three bytes, as js-tiktoken (TextEncoder) encodes it.
  assert.equal(merge.count('\ud800\ud800'), javascript.countPiece('\ud800\ud800'));
});

test('without WebAssembly (node --jitless), or without the address space its memory reserves (ulimit -v), the CLI counts in JavaScript, the same tokens', () => {
  const dir = temp.fresh('no-wasm');
  const file = join(dir, 'session.jsonl');
  const lines = [
    { id: 'u1', role: 'user', type: 'message', content: 'Transactional outboxes, idempotency keys and at-least-once delivery: 再试一次，指数退避。' },
    {
      id: 'a1',
      role: 'assistant',
      type: 'message',
      content: '水总她党父に之未毛华息对间近定つツ正钱几孩学还力由数地到听着 — unsubscribable ʻokina ☃️ réessayer',
    },
  ];
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  const tokens = (nodeFlags: string[], limited = false): unknown => {
    const command = [process.execPath, ...nodeFlags, join(repoRoot, 'bin', 'devs-ctx.js'), 'analyze', file, '--json', '--no-cache'];
    const run = limited ? underAddressLimit(command, cliEnv()) : spawnSync(process.execPath, command.slice(1), { env: cliEnv(), encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout) as { totalTokens: number; perTurn: unknown };
    assert.ok(report.totalTokens > 40, run.stdout);
    return { totalTokens: report.totalTokens, perTurn: report.perTurn };
  };
  const jitless = spawnSync(process.execPath, ['--jitless', '-p', 'typeof WebAssembly'], { encoding: 'utf8' });
  assert.equal(jitless.stdout.trim(), 'undefined', 'node --jitless has no WebAssembly, which this test relies on');
  const limited = underAddressLimit([process.execPath, '-e', 'new WebAssembly.Memory({ initial: 80 })']);
  assert.match(limited.stderr, /could not allocate memory/, 'under the limit, a WebAssembly memory cannot be had, which this test relies on');
  const expected = tokens([]);
  assert.deepEqual(tokens(['--jitless']), expected);
  assert.deepEqual(tokens([], true), expected);
});
