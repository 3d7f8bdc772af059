import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { BpeCounter } from '../src/core/tokens/bpe.js';
import { loadCounter, usePrebuiltPieceClasses } from '../src/core/tokens/encodings.js';
import { buildPieceClasses, PieceClasses } from '../src/core/tokens/unicode-pieces.js';
import { seeded } from './helpers/prng.js';
import { filesUnder, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';

// Before a counter is warm, o200k's split is decided by hand from a table of each code point's class
// (src/core/tokens/unicode-pieces.ts), so that a count of a few turns never compiles the regex: every
// piece must be the regex's, as js-tiktoken finds them (matchAll with the pattern's own flags).

const unicode = process.versions.unicode as string;
const built = buildPieceClasses(unicode);
const classes = PieceClasses.decode(built, unicode) as PieceClasses;
const oracle = new Tiktoken(o200k);
const regex = new RegExp(o200k.pat_str, 'ug');
const regexPieces = (text: string): string[] => [...text.matchAll(regex)].map((m) => m[0]);
/** A counter that stays cold (it never warms up) and splits everything by hand: every piece from the table. */
const cold = (): BpeCounter =>
  new BpeCounter(o200k, { pieceClasses: classes, warmAfterChars: Number.POSITIVE_INFINITY, handSplitChars: Number.POSITIVE_INFINITY });

/** Every kind of character the pattern tells apart, each case and script, and what backtracks around them. */
const ALPHABET: readonly string[] = [
  ...'abcxyzABCXYZ0123456789',
  ...' \t\n\r\v\f',
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  '\u0000',
  '\u007f',
  "'s",
  "'S",
  "'t",
  "'re",
  "'Ve",
  "'ll",
  "'LL",
  "'m",
  "'D",
  "'x",
  'é',
  'É',
  'ß',
  'Ω',
  'ω',
  'ǅ', // Lt
  'ʰ', // Lm
  'ー', // Lm
  '中', // Lo
  'ｱ', // Lo
  '\u0301', // Mn
  '\u0903', // Mc
  '\u0345', // Mn, and Other_Lowercase
  '²', // No
  '٣', // Nd
  'ⅷ', // Nl, and Other_Lowercase
  '①', // No
  '\u00a0',
  '\u0085',
  '\u180e',
  '\u2000',
  '\u200b',
  '\u200d',
  '\u2028',
  '\u2029',
  '\u3000',
  '\ufeff',
  '→',
  '—',
  '…',
  '“',
  '😀',
  '\u{1f3fb}',
  '𝐀', // Lu beyond the BMP
  '𝐚', // Ll beyond the BMP
  '𝟎', // Nd beyond the BMP
  '𐐀',
  '𐐨',
  '\ud800', // lone surrogates
  '\udc00',
];

function randomText(next: () => number): string {
  const parts: string[] = [];
  const n = 1 + Math.floor(next() * 24);
  for (let k = 0; k < n; k++) {
    const unit = ALPHABET[Math.floor(next() * ALPHABET.length)] as string;
    parts.push(next() < 0.8 ? unit : unit.repeat(2 + Math.floor(next() * 4)));
  }
  return parts.join('');
}

test('unicode pieces: every code point, beside letters, digits, spaces, symbols and contractions, splits as the regex', () => {
  const counter = cold();
  // A block of 256 code points at a time, each after and before a letter, after a space, twice,
  // before a digit, after a line break, before a contraction, after a symbol and before a tab.
  for (let block = 0; block < 0x110000; block += 256) {
    const settings: string[] = [];
    for (let cp = block; cp < block + 256; cp++) {
      const ch = String.fromCodePoint(cp);
      settings.push(`a${ch}b ${ch}${ch}1\n${ch}'s-${ch}\t`);
    }
    const text = settings.join('');
    const got = counter.pieces(text);
    // Compared only when they differ: deepEqual over every piece would take far longer.
    if (got.join('\u0000') !== regexPieces(text).join('\u0000')) assert.deepEqual(got, regexPieces(text), `the block at U+${block.toString(16)}`);
  }
});

test('unicode pieces: random text of every class splits as the regex, and counts as js-tiktoken', () => {
  const counter = cold();
  const next = seeded(0x0c1a55);
  for (let i = 0; i < 60_000; i++) {
    const text = randomText(next);
    assert.deepEqual(counter.pieces(text), regexPieces(text), JSON.stringify(text));
  }
  const next2 = seeded(0xc0c0a);
  for (let i = 0; i < 2_000; i++) {
    const text = randomText(next2);
    assert.equal(counter.count(text), oracle.encode(text, [], []).length, JSON.stringify(text));
  }
  // The table did all of it: the regex was never compiled.
  assert.equal(counter.compiledPattern, false);
});

test('unicode pieces: the fixtures and the real transcripts split as the regex', { skip: realdataSkip }, () => {
  const counter = cold();
  const files = [...filesUnder(`${repoRoot}fixtures`), ...realdataFiles()];
  assert.ok(files.length >= 10);
  for (const path of files) {
    // As the turns hold it: JSON's escaped line breaks, quotes and tabs decoded.
    const text = readFileSync(path, 'utf8').replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\t/g, '\t');
    const got = counter.pieces(text);
    if (got.join('\u0000') !== regexPieces(text).join('\u0000')) assert.deepEqual(got, regexPieces(text), path);
  }
});

test('unicode pieces: a counter splits by hand until warm, then by the regex, with js-tiktoken counts throughout', () => {
  const counter = new BpeCounter(o200k, { pieceClasses: classes, warmAfterChars: 2_000 });
  const next = seeded(0x3a53);
  let chars = 0;
  while (chars < 1_500) {
    const text = randomText(next);
    chars += text.length;
    assert.equal(counter.count(text), oracle.encode(text, [], []).length, JSON.stringify(text));
  }
  assert.equal(counter.compiledPattern, false);
  for (let i = 0; i < 300; i++) {
    const text = randomText(next);
    assert.equal(counter.count(text), oracle.encode(text, [], []).length, JSON.stringify(text));
  }
  // Warm: the regex splits what the hand split of ASCII leaves (this text has non-ASCII pieces).
  assert.equal(counter.compiledPattern, true);
});

test('unicode pieces: only the first 16K characters are split by hand, and none when more are expected at once', () => {
  const next = seeded(0xb0d6e7);
  const exact = (counter: BpeCounter, text: string): void => assert.equal(counter.count(text), oracle.encode(text, [], []).length, JSON.stringify(text));
  // Texts of a few hundred characters, by hand up to 16K of them; the first that does not fit, and all after it, by the regex.
  const small = new BpeCounter(o200k, { pieceClasses: classes });
  let chars = 0;
  for (;;) {
    const text = randomText(next).repeat(4);
    if (chars + text.length > 16 * 1024) {
      exact(small, text);
      break;
    }
    chars += text.length;
    exact(small, text);
    assert.equal(small.compiledPattern, false);
  }
  assert.equal(small.compiledPattern, true);
  exact(small, 'x — y');
  // Told that more is coming than the hand split has left: the regex from the first text.
  const told = new BpeCounter(o200k, { pieceClasses: classes });
  told.expect(16 * 1024 + 1);
  exact(told, 'a few words — then more');
  assert.equal(told.compiledPattern, true);
  // Told of less: by hand.
  const fewer = new BpeCounter(o200k, { pieceClasses: classes });
  fewer.expect(4_000);
  exact(fewer, 'a few words — then more');
  assert.equal(fewer.compiledPattern, false);
});

test('unicode pieces: a table given as where to get it is got when a first text is split by hand, once, and never by a count of more', () => {
  const text = 'a few words — then more';
  const expected = oracle.encode(text, [], []).length;
  let asked = 0;
  const lazy = new BpeCounter(o200k, {
    pieceClasses: () => {
      asked++;
      return classes;
    },
  });
  assert.equal(asked, 0);
  assert.equal(lazy.count(text), expected);
  assert.equal(lazy.count(text.repeat(3)), oracle.encode(text.repeat(3), [], []).length);
  assert.deepEqual([asked, lazy.compiledPattern], [1, false]);
  const many = new BpeCounter(o200k, {
    pieceClasses: () => {
      asked++;
      return classes;
    },
  });
  many.expect(100_000);
  assert.equal(many.count(text), expected);
  assert.deepEqual([asked, many.compiledPattern], [1, true]);
  // No table to be had (another Unicode, no file): the regex.
  const none = new BpeCounter(o200k, { pieceClasses: () => undefined });
  assert.equal(none.count(text), expected);
  assert.equal(none.compiledPattern, true);
});

test('unicode pieces: a table is used only under the Unicode version it was made with, and only whole', () => {
  assert.ok(PieceClasses.decode(built, unicode));
  // Another Unicode may class a new character otherwise: the regex splits then.
  assert.equal(PieceClasses.decode(built, '15.0'), undefined);
  assert.equal(PieceClasses.decode(buildPieceClasses('15.0'), unicode), undefined);
  assert.equal(PieceClasses.decode(built.subarray(0, built.length - 1), unicode), undefined);
  assert.equal(PieceClasses.decode(built.subarray(0, built.length - 256), unicode), undefined);
  const longer = new Uint8Array(built.length + 256);
  longer.set(built);
  assert.equal(PieceClasses.decode(longer, unicode), undefined);
  // A view into a larger buffer reads the same.
  const shared = new Uint8Array(new SharedArrayBuffer(built.length + 7));
  shared.set(built, 7);
  const viewed = PieceClasses.decode(shared.subarray(7), unicode) as PieceClasses;
  for (const cp of [0x41, 0x61, 0x4e2d, 0x0301, 0x1d400, 0x10ffff]) assert.equal(viewed.of(cp), classes.of(cp));
  assert.equal(PieceClasses.decode(built.subarray(0, 100), unicode), undefined);
  assert.equal(PieceClasses.decode(new Uint8Array(0), unicode), undefined);
  const foreign = built.slice();
  foreign[0] = 0;
  assert.equal(PieceClasses.decode(foreign, unicode), undefined);
  const badClass = built.slice();
  badClass[badClass.length - 1] = 9;
  assert.equal(PieceClasses.decode(badClass, unicode), undefined);
  // A block number past the blocks.
  const badIndex = built.slice();
  const head = 8 + unicode.length;
  badIndex[head] = 0xff;
  badIndex[head + 1] = 0xff;
  assert.equal(PieceClasses.decode(badIndex, unicode), undefined);
  // o200k only: cl100k's pattern is another.
  const otherPattern = new BpeCounter({ ...o200k, pat_str: o200k.pat_str.replace('{1,3}', '{1,2}') }, { pieceClasses: classes });
  otherPattern.count('x 12345');
  assert.equal(otherPattern.compiledPattern, true);
});

test('unicode pieces: loadCounter gives o200k counters the installed table', () => {
  usePrebuiltPieceClasses(() => classes);
  const counter = loadCounter('o200k_base');
  const text = 'Ünïcödé — “quoted” text… 中文 𝐀𝐁 café';
  assert.equal(counter.count(text), oracle.encode(text, [], []).length);
  assert.equal(counter.compiledPattern, false);
});

test('unicode pieces: the build ships this table, and counters read it for this Node only', async () => {
  const shipped = `${repoRoot}dist/ranks/piece-classes.bin`;
  assert.ok(existsSync(shipped), `${shipped} is missing: npm run build first`);
  assert.deepEqual(new Uint8Array(readFileSync(shipped)), built);
  const { prebuiltPieceClasses } = (await import(`${repoRoot}dist/io/rank-tables.js`)) as typeof import('../src/io/rank-tables.js');
  assert.ok(prebuiltPieceClasses(unicode));
  assert.equal(prebuiltPieceClasses('15.0'), undefined);
  assert.equal(prebuiltPieceClasses(undefined), undefined);
});
