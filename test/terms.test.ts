import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from 'node:test';
import { stableHash } from '../src/core/term-hash.js';
import { primeTermIndex, TermIds, TermIndex, terms } from '../src/core/terms.js';
import { filesUnder, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';
import { seeded } from './helpers/prng.js';

/*
 * A relevance prune reads every turn's terms (the BM25 fit, the goal excerpts) through `TermIndex`,
 * which scans words by hand and remembers each distinct word's terms. This is the plain definition
 * it and `terms` must agree with, term for term and in order: a changed term changes a ranking, and
 * so a prune's output.
 */
const STOP = new Set(
  (
    'a an and are as at be but by for from has have i if in into is it its of on or our so that the their then there these ' +
    'this to was we were what when which while will with you your not no do does did can could should would just also ' +
    'all any some me my he she they them us been being than too very here out up down over under again once only own ' +
    'same such both each few more most other about above after before below between through during off further how why where who whom'
  ).split(' '),
);
function oracle(text: string): string[] {
  const sampled = text.length <= 32_000 ? text : `${text.slice(0, 24_000)}\n${text.slice(-8_000)}`;
  const out: string[] = [];
  const add = (word: string): void => {
    if (word.length < 2 || STOP.has(word) || /^\d{1,2}$/.test(word)) return;
    out.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  };
  for (const match of sampled.matchAll(/[\p{L}\p{N}_]+/gu)) {
    const word = match[0];
    if (word.length > 64) continue;
    add(word.toLowerCase());
    if (/_|[a-z0-9][A-Z]|[A-Z][A-Z][a-z]/.test(word)) {
      const parts = word.split(/_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/u);
      if (parts.length > 1) for (const part of parts) add(part.toLowerCase());
    }
  }
  return out;
}

/**
 * Indexes for the whole file: words seen in earlier texts are found again, and their tables grow.
 * The index as made (in JavaScript, then in WebAssembly from its first long text), one in JavaScript
 * only, and one in WebAssembly from its first text.
 */
const index = new TermIndex();
const inJavaScript = new TermIndex(undefined, undefined, Number.POSITIVE_INFINITY);
const inWebAssembly = new TermIndex(undefined, undefined, 0);
const indexes = [
  ['TermIndex', index],
  ['TermIndex in JavaScript', inJavaScript],
  ['TermIndex in WebAssembly', inWebAssembly],
] as const;
const ids = new TermIds();
const lineEnds = new TermIds();
/** The terms of the ids `out` holds, by `own`'s names. */
function named(own: TermIndex, out: TermIds): string[] {
  return Array.from(out.ids.subarray(0, out.length), (id) => own.names[id] as string);
}
function check(text: string, label: string): void {
  const expected = oracle(text);
  assert.deepEqual(terms(text), expected, label);
  for (const [name, own] of indexes) {
    ids.length = 0;
    own.read(text, ids);
    assert.deepEqual(named(own, ids), expected, `${label} (${name})`);
    // A range of a longer text reads as that slice does.
    const padded = `x${text}y`;
    ids.length = 0;
    own.readRange(padded, 1, padded.length - 1, ids);
    assert.deepEqual(named(own, ids), expected, `${label} (${name}, a range)`);
    // Line by line, the same terms (no word spans a line break), when the text is read whole.
    if (text.length > 32_000) continue;
    ids.length = 0;
    lineEnds.length = 0;
    own.readLines(text, ids, lineEnds);
    assert.deepEqual(named(own, ids), expected, `${label} (${name}, line by line)`);
    const lines = text.split('\n');
    assert.equal(lineEnds.length, lines.length, `${label} (${name}, a line end per line)`);
    const all = named(own, ids);
    for (const [k, line] of lines.entries()) {
      const from = k === 0 ? 0 : (lineEnds.ids[k - 1] as number);
      assert.deepEqual(all.slice(from, lineEnds.ids[k]), oracle(line), `${label} (${name}, line ${k + 1})`);
    }
  }
}

describe('terms', () => {
  after(() => {
    // The indexes read where they were meant to.
    assert.ok(inWebAssembly.readInWebAssembly > 0, 'the WebAssembly index read in WebAssembly');
    assert.ok(index.readInWebAssembly > 0, 'the index as made moved to WebAssembly');
    assert.equal(inJavaScript.readInWebAssembly, 0, 'the JavaScript index never did');
  });

  test('agree with the plain definition on words at the edges', () => {
    const cases = [
      '',
      'a',
      'parseConfigFile reads MAX_RETRY_COUNT from devs-ctx.config.json',
      'HTTPServerError __init__ snake__case _leading trailing_ x_ _ __ 42 7 007 1234 v2 a1b2',
      // Letters and digits beyond ASCII, astral ones (surrogate pairs), marks, and lone surrogates.
      'Größe ÄNDERUNG straße café naïve ΣΊΣΥΦΟΣ Привет мир 東京タワー ١٢٣ ٤ 𝐀𝐁𝐂 𝟘𝟙 😀word 🎉 \u0301e e\u0301',
      'x\uD800y \uDC00z \uD83D \uD83D\uDE00 end\uDBFF',
      `${'w'.repeat(64)} ${'v'.repeat(65)} ${'abcDef'.repeat(11)} ${'ab_'.repeat(30)}`,
      'tests passes class glass bus ss sss s is its status',
      'ÀB ǅungla ǲx ᾈword ʰmodifier',
      `${'lorem ipsum dolor '.repeat(2_000)}MIDDLE${' tailWord'.repeat(2_000)}`,
      `${'x'.repeat(23_998)} splitAcrossTheHead${'y'.repeat(9_000)}`,
      `head ${'z'.repeat(40_000)}\uD83D\uDE00tailEnd`,
    ];
    for (const text of cases) check(text, JSON.stringify(text.slice(0, 60)));
  });

  test('agree with the plain definition on every character of the Basic Multilingual Plane', () => {
    let text = '';
    for (let c = 0; c < 0x10000; c++) text += `${String.fromCharCode(c)}a${String.fromCharCode(c)}B `;
    // In slices, so no text is sampled (head and tail only) and every character is read.
    for (let at = 0; at < text.length; at += 30_000) {
      check(text.slice(at, at + 30_000), `from ${at}`);
    }
  });

  test('TermIndex: one id per distinct term, the same id each time it is read', () => {
    const own = new TermIndex();
    const out = new TermIds();
    own.read('parseConfigFile parse_config CONFIG', out);
    assert.deepEqual(own.names, ['parseconfigfile', 'parse', 'config', 'file', 'parse_config']);
    assert.deepEqual([...out.ids.subarray(0, out.length)], [0, 1, 2, 3, 4, 1, 2, 2]);
    assert.equal(own.size, 5);
    assert.equal(own.id('config'), 2);
    assert.equal(own.id('new'), 5, 'a term not read yet gets the next id');
  });

  test('TermIndex: ids stay one per term as the table grows, for terms and words whose hashes collide', () => {
    // With the multiplier 31, "Aa" and "BB" hash alike (31·65 + 97 = 31·66 + 66), and so does every
    // string built of them (a process draws its own multiplier, so no text can be made to collide).
    for (const from of [Number.POSITIVE_INFINITY, 0]) {
      const where = from === 0 ? 'in WebAssembly once it reads' : 'in JavaScript';
      const own = new TermIndex(31, 1 << 12, from);
      const colliding = Array.from({ length: 512 }, (_, n) => [...n.toString(2).padStart(9, '0')].map((bit) => (bit === '0' ? 'Aa' : 'BB')).join(''));
      const plain = Array.from({ length: 20_000 }, (_, n) => `term${n}x`);
      const all = [...colliding, ...plain];
      const ids = all.map((term) => own.id(term));
      assert.deepEqual(
        ids,
        all.map((_, i) => i),
        'each new term gets the next id',
      );
      assert.deepEqual(
        all.map((term) => own.id(term)),
        ids,
        'and the same id when asked again',
      );
      assert.deepEqual(own.names, all);
      const out = new TermIds();
      // In WebAssembly, the index moves there with its 20,512 terms as it reads this: the same ids.
      own.read('term7x term19999x', out);
      assert.deepEqual([...out.ids.subarray(0, out.length)], [512 + 7, 512 + 19_999], `${where}: a text read later finds them`);
      assert.equal(own.id(colliding[3] as string), 3, where);
      // The word table too: colliding words ("an" and "c0" hash alike) read as the plain definition reads them.
      const words = new TermIndex(31, 1 << 12, from);
      const text = colliding.map((w) => w.replaceAll('Aa', 'an').replaceAll('BB', 'c0')).join(' ');
      for (let pass = 0; pass < 2; pass++) {
        const read = new TermIds();
        words.read(text, read);
        assert.deepEqual(
          [...read.ids.subarray(0, read.length)].map((id) => words.names[id]),
          terms(text),
          where,
        );
      }
      assert.equal(words.readInWebAssembly > 0, from === 0, where);
    }
  });

  test('TermIndex in WebAssembly: the same ids and names as in JavaScript, for an index that moves there after reading in JavaScript', () => {
    const next = seeded(0x3a5e);
    const word = (): string => {
      const parts = ['parse', 'Config', 'HTTP', 'server', '_', 'x9', 'Files', 'the', 'caf\u00e9', 'ab', '42'];
      let out = '';
      for (let k = 0, n = 1 + Math.floor(next() * 4); k < n; k++) out += parts[Math.floor(next() * parts.length)];
      return out;
    };
    const texts = Array.from({ length: 60 }, (_, t) => Array.from({ length: t % 3 === 0 ? 400 : 8 }, word).join(t % 2 ? ' ' : '\n'));
    const plain = new TermIndex(undefined, undefined, Number.POSITIVE_INFINITY);
    const moving = new TermIndex();
    for (const [t, text] of texts.entries()) {
      const a = new TermIds();
      const b = new TermIds();
      plain.read(text, a);
      moving.read(text, b);
      assert.deepEqual([...b.ids.subarray(0, b.length)], [...a.ids.subarray(0, a.length)], `text ${t}: the same ids`);
    }
    assert.ok(moving.readInWebAssembly > 0, 'it moved to WebAssembly');
    assert.deepEqual(moving.names, plain.names);
    assert.equal(moving.id('parse'), plain.id('parse'));
    assert.equal(moving.id('a term never read'), plain.names.length, 'a new term gets the next id there too');
  });

  test('TermIndex in WebAssembly: a scan that fills its output, words of 64 and 65 units, a compound of many parts, tables doubling from two slots', () => {
    const pairs: string[] = [];
    for (let a = 0; a < 26; a++) for (let b = 0; b < 26; b++) pairs.push(String.fromCharCode(97 + a, 97 + b));
    // 10,666 words of two letters (most of them terms) in one text read whole: more ids than a scan writes out at once.
    const many = Array.from({ length: 10_666 }, (_, k) => pairs[k % pairs.length]).join(' ');
    const long = `${'aB'.repeat(32)} ${'aB'.repeat(32)}c ${'x_'.repeat(32)} ${'q'.repeat(64)} ${'Q'.repeat(65)} HTTPServer2Go`;
    for (const tableSize of [2, 4096]) {
      const own = new TermIndex(undefined, tableSize, 0);
      for (const text of [many, long, many, long]) {
        const out = new TermIds();
        own.read(text, out);
        assert.deepEqual(named(own, out), oracle(text), `table of ${tableSize} slots: ${text.slice(0, 40)}`);
      }
      assert.ok(own.readInWebAssembly > 2 * 10_000);
    }
    // After each word with a unit that is not ASCII (read in JavaScript), the ASCII words are read in WebAssembly again.
    const mixed = new TermIndex(undefined, undefined, 0);
    const text = `caf\u00e9 ${'alpha '.repeat(1000)}\u03c9mega ${'beta '.repeat(1000)}`;
    const out = new TermIds();
    mixed.read(text, out);
    assert.deepEqual(named(mixed, out), oracle(text));
    assert.equal(mixed.readInWebAssembly, 2000);
  });

  test('TermIndex in WebAssembly: terms of any length by id, before and after the move, as in JavaScript', () => {
    const long = ['x'.repeat(1024), 'y'.repeat(1025), 'z'.repeat(40_000)];
    const text = 'hello world parseConfig '.repeat(30);
    const plain = new TermIndex(undefined, undefined, Number.POSITIVE_INFINITY);
    const moving = new TermIndex();
    const fromStart = new TermIndex(undefined, undefined, 0);
    fromStart.read('first', new TermIds());
    for (const own of [plain, moving, fromStart]) {
      // Before the move (for `moving`: it takes these terms there with it), then after.
      own.id(long[0] as string);
      own.id(long[1] as string);
      const out = new TermIds();
      own.read(text, out);
      own.id(long[2] as string);
      own.read(`${text} again`, out);
    }
    assert.ok(moving.readInWebAssembly > 0 && fromStart.readInWebAssembly > 0);
    assert.deepEqual(moving.names, plain.names);
    assert.deepEqual(
      fromStart.names.slice(1),
      plain.names.filter((name) => name !== 'first'),
    );
    for (const term of long) {
      assert.equal(moving.id(term), plain.id(term));
      assert.equal(fromStart.names[fromStart.id(term)], term);
    }
  });

  test('TermIndex in WebAssembly: a term is named only when asked (by id, or all), and its stable hash is read there without naming it', () => {
    const text = `parseConfigFile reads ${'alpha beta_gamma '.repeat(40)}caf\u00e9 \u6771\u4eac\u{1D400}x HTTPServer utf8Decode ${'z'.repeat(40_000)} tail`;
    const plain = new TermIndex(undefined, undefined, Number.POSITIVE_INFINITY);
    const wasm = new TermIndex(undefined, undefined, 0);
    const moving = new TermIndex();
    moving.read('named in JavaScript first', new TermIds());
    for (const own of [plain, wasm, moving]) own.read(text, new TermIds());
    assert.ok(wasm.readInWebAssembly > 0 && moving.readInWebAssembly > 0);
    assert.equal(wasm.named, 0, 'nothing is named while the text is read');
    for (let id = 0; id < plain.size; id++) {
      const name = plain.names[id] as string;
      assert.equal(wasm.name(id), name, `term ${id} by id`);
      assert.equal(wasm.stableHash(id), stableHash(name), `term ${id}'s hash, read in WebAssembly`);
      assert.equal(plain.stableHash(id), stableHash(name), `term ${id}'s hash, in JavaScript`);
    }
    assert.equal(wasm.named, 0, 'asked one by one, terms are not all named');
    for (let id = 0; id < moving.size; id++) assert.equal(moving.stableHash(id), stableHash(moving.name(id)));
    assert.equal(wasm.size, plain.size);
    assert.deepEqual(wasm.names, plain.names);
    assert.equal(wasm.named, plain.size, 'asked for all, all are named');
    // A term new to the index after that gets the next id, and its name.
    assert.equal(wasm.id('a term never read'), plain.size);
    assert.equal(wasm.name(plain.size), 'a term never read');
    assert.equal(wasm.names.length, plain.size + 1);
    // An id no term has is an error, never what lies in the module's memory where it would point.
    for (const own of [plain, wasm]) {
      for (const id of [own.size, -1, 1.5, 1 << 20]) {
        assert.throws(() => own.name(id), RangeError, `name(${id})`);
        assert.throws(() => own.stableHash(id), RangeError, `stableHash(${id})`);
      }
    }
  });

  test('TermIndex in WebAssembly: terms kept above 2 GB of its memory (addresses past 2^31) have their own ids, names and hashes, as in JavaScript', () => {
    const wasm = new TermIndex(7, 4096, 0);
    const plain = new TermIndex(7, 4096, Number.POSITIVE_INFINITY);
    for (const own of [wasm, plain]) own.read('alpha beta', new TermIds());
    // 2.2 GB of heap taken (the memory grows; its pages are only reserved): what is kept next lies above 2 GB.
    const module = (wasm as unknown as { wasm: { reserve(units: number): number } }).wasm;
    assert.ok(module.reserve(1_100_000_000) > 0, 'the memory grew past 2 GB');
    const text = `${'zeta eta theta iota kappa caf\u00e9 '.repeat(3)} ${'w'.repeat(60)} parseConfigFile`;
    const a = new TermIds();
    const b = new TermIds();
    wasm.read(text, a);
    plain.read(text, b);
    assert.deepEqual([...a.ids.subarray(0, a.length)], [...b.ids.subarray(0, b.length)]);
    // Terms longer than the scratch room are put in room taken from the heap, above 2 GB too.
    for (const term of ['x'.repeat(2000), 'y'.repeat(1500), 'a short one']) assert.equal(wasm.id(term), plain.id(term), term.slice(0, 10));
    assert.equal(wasm.size, plain.size);
    for (let id = 0; id < plain.size; id++) {
      assert.equal(wasm.name(id), plain.names[id], `term ${id}`);
      assert.equal(wasm.stableHash(id), stableHash(plain.names[id] as string), `term ${id}'s hash`);
    }
    assert.deepEqual(wasm.names, plain.names);
  });

  test('TermIndex: readLines of a text longer than one read whole, with short lines, lines of 32,000 units and more, and none at the end', () => {
    const next = seeded(0x11e5);
    const line = (): string =>
      Array.from({ length: Math.floor(next() * 12) }, () => ['fooBar', 'baz_qux', 'caf\u00e9', 'x1', 'tests'][Math.floor(next() * 5)]).join(' ');
    const wide = (units: number): string => `${'wordy '.repeat(Math.ceil(units / 6))}`.slice(0, units);
    const lines = [
      ...Array.from({ length: 9000 }, line),
      wide(32_000),
      ...Array.from({ length: 50 }, line),
      wide(32_001),
      wide(32_768),
      `${wide(40_000)}Tail words end`,
      '',
      '',
      ...Array.from({ length: 5000 }, line),
    ];
    // And one whose last line, of 32,500 units, is most of what is left to read.
    for (const text of [lines.join('\n'), `${lines.join('\n')}\n`, `${lines.slice(0, 100).join('\n')}\n${wide(32_500)}`]) {
      const each = text.split('\n');
      for (const [name, own] of indexes) {
        const out = new TermIds();
        const ends = new TermIds();
        own.readLines(text, out, ends);
        assert.equal(ends.length, each.length, `${name}: a line end per line`);
        const all = named(own, out);
        for (const [k, one] of each.entries()) {
          const from = k === 0 ? 0 : (ends.ids[k - 1] as number);
          assert.deepEqual(all.slice(from, ends.ids[k]), oracle(one), `${name}, line ${k + 1}`);
        }
      }
    }
  });

  test('TermIndex reads in JavaScript where Node has no WebAssembly, with the same terms', () => {
    const text = `parseConfigFile reads caf\u00e9 settings; ${'utf8Decode HTTPServer snake_case_name x '.repeat(40)}\u{1D400}x files`;
    const script = `
      const { TermIds, TermIndex } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'core', 'terms.js')).href)});
      const index = new TermIndex();
      const out = new TermIds();
      index.read(${JSON.stringify(text)}, out);
      process.stdout.write(JSON.stringify({ terms: Array.from(out.ids.subarray(0, out.length), (id) => index.names[id]), wasm: index.readInWebAssembly }));
    `;
    const run = spawnSync(process.execPath, ['--no-expose-wasm', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { terms: oracle(text), wasm: 0 });
  });

  test('agree with the plain definition on seeded random compounds: any case, `_`, digits, plural s, stop words, non-ASCII letters; whatever the hash multiplier', () => {
    const next = seeded(0x7e57);
    const pieces = [
      'a',
      'b',
      'Z',
      'Q',
      's',
      'S',
      'ss',
      'SS',
      '_',
      '__',
      '0',
      '7',
      '42',
      'The',
      'THE',
      'is',
      'IS',
      'Its',
      'é',
      'İ',
      'K',
      '\u212A',
      'ß',
      'x1',
      'Ab',
      'HTTP',
      'Server',
    ];
    const gaps = [' ', ' ', '\n', '.', '-', '/', '(', '`'];
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const texts: string[] = [];
    for (let t = 0; t < 400; t++) {
      let text = '';
      const words = 1 + Math.floor(next() * 30);
      for (let w = 0; w < words; w++) {
        const parts = 1 + Math.floor(next() * 6);
        for (let k = 0; k < parts; k++) text += pick(pieces);
        text += pick(gaps);
      }
      texts.push(text);
    }
    for (const text of texts) check(text, JSON.stringify(text.slice(0, 60)));
    // Multipliers that make words and terms share slots (1: any two anagrams), one index for all texts.
    for (const [multiplier, from] of [
      [1, Number.POSITIVE_INFINITY],
      [31, Number.POSITIVE_INFINITY],
      [1, 0],
      [31, 0],
    ] as const) {
      const own = new TermIndex(multiplier, 1 << 12, from);
      for (const text of texts) {
        const read = new TermIds();
        own.read(text, read);
        assert.deepEqual(
          Array.from(read.ids.subarray(0, read.length), (id) => own.names[id]),
          terms(text),
          `multiplier ${multiplier}, WebAssembly from ${from}: ${JSON.stringify(text.slice(0, 60))}`,
        );
      }
      assert.equal(new Set(own.names).size, own.names.length, `multiplier ${multiplier}, WebAssembly from ${from}: one id per term`);
    }
  });

  test('agree with the plain definition on the fixtures, whole and line by line', () => {
    for (const path of filesUnder(`${repoRoot}fixtures`)) {
      const text = readFileSync(path, 'utf8');
      check(text, path);
      for (const line of text.split('\n')) check(line, path);
    }
  });

  test('agree with the plain definition on the real transcripts, whole, line by line and in 30k pieces', { skip: realdataSkip }, () => {
    const files = realdataFiles();
    assert.ok(files.length >= 10, 'the real transcripts are there');
    for (const path of files) {
      const text = readFileSync(path, 'utf8');
      check(text, path);
      for (const line of text.split('\n')) check(line, path);
      for (let at = 0; at < text.length; at += 30_000) check(text.slice(at, at + 30_000), path);
    }
  });
});

describe('priming the term reader', () => {
  /**
   * In a fresh process with V8's test functions (the built module), compiling on this thread so
   * that nothing is left to chance: the term reader's loop in JavaScript, compiled as a large read's
   * first texts leave it (plain ASCII words), then given what such a read meets later. Whether its
   * optimized code was still there after each text. Without WebAssembly (`--no-expose-wasm`): with
   * it, a large read is read there, and the primer primes that.
   */
  const keptThrough = (prime: boolean): { optimized: boolean; kept: Record<string, boolean> } => {
    const script = `
      const { TermIds, TermIndex, primeTermIndex } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'core', 'terms.js')).href)});
      if (${prime}) primeTermIndex();
      const scan = TermIndex.prototype.scanHere;
      const index = new TermIndex();
      const out = new TermIds();
      const read = (text) => { out.length = 0; index.read(text, out); };
      %PrepareFunctionForOptimization(scan);
      for (let k = 0; k < 3; k++) read('plain ascii words only, read ' + k + ' times');
      %OptimizeFunctionOnNextCall(scan);
      read('plain ascii words again');
      const optimized = (%GetOptimizationStatus(scan) & 16) !== 0;
      const later = {
        'a new non-ASCII letter': () => read('caf\\u00e9 \\u03c9mega'),
        'a split after a digit': () => read('utf8Decode base64Encode'),
        'a letter beyond the BMP': () => read('\\u{1D400}\\u{1D401}'),
        'the tables doubling': () => read(Array.from({ length: 3000 }, (_, k) => 'word' + k.toString(36) + 'x').join(' ')),
        'a text too long to read whole': () => read('head words '.repeat(4000)),
        "a new index's first words": () => new TermIndex().read('first words of another index', new TermIds()),
      };
      const kept = {};
      for (const [what, take] of Object.entries(later)) {
        take();
        kept[what] = (%GetOptimizationStatus(scan) & 16) !== 0;
      }
      process.stdout.write(JSON.stringify({ optimized, kept }));
    `;
    const run = spawnSync(
      process.execPath,
      ['--allow-natives-syntax', '--no-concurrent-recompilation', '--no-expose-wasm', '--input-type=module', '-e', script],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as { optimized: boolean; kept: Record<string, boolean> };
  };

  test("after priming, a large read's rare paths (new letters, splits, tables doubling, long texts, a new index) do not throw its compiled code away", () => {
    const primed = keptThrough(true);
    assert.equal(primed.optimized, true);
    assert.deepEqual(Object.values(primed.kept), [true, true, true, true, true, true], JSON.stringify(primed.kept));
    // What the priming prevents (the check would pass without it otherwise): unprimed, the first of them throws the code away.
    const unprimed = keptThrough(false);
    assert.equal(unprimed.optimized, true);
    assert.equal(Object.values(unprimed.kept)[0], false, JSON.stringify(unprimed.kept));
  });

  test("code compiled while priming is kept by the index read next: a new index's word lists hold strings from the start", () => {
    // V8 gives an empty `[]` another kind (small integers) until its first string; code compiled for the
    // primer's index checks the kind, and a new index's first word threw it away.
    const script = `
      const { TermIds, TermIndex, primeTermIndex } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'core', 'terms.js')).href)});
      primeTermIndex();
      const index = new TermIndex();
      const fresh = [%HasObjectElements(index.names), %HasObjectElements(index.words)];
      index.read('some words', new TermIds());
      process.stdout.write(JSON.stringify({ fresh, read: [%HasObjectElements(index.names), %HasObjectElements(index.words)] }));
    `;
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { fresh: [true, true], read: [true, true] });
  });

  test('priming reads into a throwaway index: an index read afterwards gets the same terms and ids as one read before', () => {
    const text = 'parseConfigFile reads caf\u00e9 settings; utf8Decode HTTPServer snake_case_name \u{1D400}x';
    const before = new TermIndex(31);
    const beforeIds = new TermIds();
    before.read(text, beforeIds);
    primeTermIndex();
    const after = new TermIndex(31);
    const afterIds = new TermIds();
    after.read(text, afterIds);
    assert.deepEqual(Array.from(afterIds.ids.subarray(0, afterIds.length)), Array.from(beforeIds.ids.subarray(0, beforeIds.length)));
    assert.deepEqual(after.names, before.names);
    assert.deepEqual(
      Array.from(afterIds.ids.subarray(0, afterIds.length), (id) => after.names[id]),
      terms(text),
    );
  });
});
