import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { BpeCounter } from '../src/core/tokens/bpe.js';
import { ENCODING_NAMES, loadCounter, usePrebuiltRankTables } from '../src/core/tokens/encodings.js';
import type { EncodingName } from '../src/core/tokens/encodings.js';
import { encodeRankTable, RankTable } from '../src/core/tokens/rank-table.js';
import { realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';

// The prebuilt binary rank tables (dist/ranks/, written by `npm run build` from js-tiktoken's own
// ranks) count exactly as js-tiktoken does, and loadCounter uses them when it is given them.

const sources = { o200k_base: o200k, cl100k_base: cl100k } as const;
const oracles: Record<EncodingName, Tiktoken> = { o200k_base: new Tiktoken(o200k), cl100k_base: new Tiktoken(cl100k) };
const shipped = (name: EncodingName): Uint8Array => {
  const file = join(repoRoot, 'dist', 'ranks', `${name}.bin`);
  assert.ok(existsSync(file), 'run `npm run build` first (npm test does)');
  return readFileSync(file);
};

for (const name of ENCODING_NAMES) {
  test(`${name}: the shipped binary table is js-tiktoken's table, byte for byte as encoded from its ranks`, () => {
    assert.deepEqual(Buffer.from(shipped(name)), Buffer.from(encodeRankTable(sources[name])));
    const table = RankTable.decode(shipped(name));
    assert.equal(table.pattern, sources[name].pat_str);
    // Every token of the source has its rank, and a byte string that is no token has none.
    for (const line of sources[name].bpe_ranks.split('\n').slice(0, 50)) {
      const fields = line.split(' ');
      const offset = Number(fields[1]);
      for (let i = 2; i < fields.length; i += 97) {
        const token = atob(fields[i] as string);
        assert.equal(table.rank(`x${token}y`, 1, token.length + 1), offset + i - 2);
      }
    }
    assert.equal(table.rank('\u00ff\u00fe\u00fd\u00fc\u00fb\u00fa\u00f9', 0, 7), -1);
  });

  test(`${name}: a counter on the shipped table equals js-tiktoken on every line of the real transcripts`, { skip: realdataSkip }, () => {
    const counter = new BpeCounter(RankTable.decode(shipped(name)));
    let lines = 0;
    for (const file of realdataFiles()) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        // The oracle is quadratic in a piece's length: long lines (base64 images) would take minutes.
        if (line.length > 20_000) continue;
        assert.equal(counter.count(line), oracles[name].encode(line, [], []).length, `${file}: ${line.slice(0, 120)}`);
        lines++;
      }
    }
    assert.ok(lines > 100);
  });
}

test('loadCounter counts with the prebuilt table it is given, and falls back to js-tiktoken on a damaged one', () => {
  const asked: string[] = [];
  usePrebuiltRankTables((name) => {
    asked.push(name);
    return name === 'o200k_base' ? shipped(name) : new Uint8Array([1, 2, 3, 4]);
  });
  const text = 'const total = rows.reduce((sum, r) => sum + r.amount, 0); // 合計 🚀';
  for (const name of ENCODING_NAMES) assert.equal(loadCounter(name).count(text), oracles[name].encode(text, [], []).length);
  assert.deepEqual(asked.sort(), ['cl100k_base', 'o200k_base']);
});

test('RankTable.decode refuses what is not a rank table, or is cut short', () => {
  assert.throws(() => RankTable.decode(new Uint8Array(10)), /not a devs-ctx rank table/);
  assert.throws(() => RankTable.decode(Buffer.from('{"not":"a table"}............')), /not a devs-ctx rank table/);
  const whole = shipped('cl100k_base');
  assert.throws(() => RankTable.decode(whole.subarray(0, whole.length - 1)), /damaged/);
  // An unaligned copy still decodes (typed views need 4-byte alignment).
  const unaligned = new Uint8Array(whole.length + 1).subarray(1);
  unaligned.set(whole);
  assert.equal(RankTable.decode(unaligned).maxRank, RankTable.decode(whole).maxRank);
});
