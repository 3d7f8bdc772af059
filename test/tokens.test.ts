import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { BpeCounter, LONG_PIECE_CHUNK_BYTES } from '../src/core/tokens/bpe.js';
import { SCAN_PART_CHARS } from '../src/core/tokens/bpe-merge.js';
import { ENCODING_NAMES, loadCounter } from '../src/core/tokens/encodings.js';
import type { EncodingName } from '../src/core/tokens/encodings.js';
import { seeded } from './helpers/prng.js';
import {
  ANTHROPIC_IMAGE_MAX,
  GEMINI_IMAGE_UNKNOWN,
  OPENAI_IMAGE_MAX,
  anthropicImageTokens,
  decodedBytes,
  estimateBlobTokens,
  geminiImageTokens,
  openaiImageTokens,
} from '../src/core/tokens/blobs.js';

// The reference: js-tiktoken itself, with special-token text counted as ordinary text (SPEC §5).
const oracles: Record<EncodingName, Tiktoken> = {
  o200k_base: new Tiktoken(o200k),
  cl100k_base: new Tiktoken(cl100k),
};
const oracleCount = (name: EncodingName, text: string): number => oracles[name].encode(text, [], []).length;

// Each encoding's counter as the CLI loads it (plain at first, then warm), one warm from the start
// (its pieces merge in WebAssembly, and under o200k its texts are scanned there), one that scans in
// parts of a few characters (a part's end falls inside every kind of piece), and one that splits
// and merges in JavaScript only (what runs without WebAssembly, and beyond 256 bytes): each input is
// checked on all four.
const SOURCES = { o200k_base: o200k, cl100k_base: cl100k };
/** The parts of the scan in few characters: a prime, so that the ends fall everywhere in repeated text. */
const SHORT_SCAN_PART = 7;
const made = new Map<EncodingName, { readonly wasm: BpeCounter; readonly parts: BpeCounter; readonly javascript: BpeCounter }>();
function allCounters(name: EncodingName): { readonly label: string; readonly counter: BpeCounter }[] {
  let counters = made.get(name);
  if (counters === undefined) {
    counters = {
      wasm: new BpeCounter(SOURCES[name], { warmAfterChars: 0 }),
      parts: new BpeCounter(SOURCES[name], { warmAfterChars: 0, scanPartChars: SHORT_SCAN_PART }),
      javascript: new BpeCounter(SOURCES[name], { wasmMerge: false }),
    };
    made.set(name, counters);
  }
  return [
    { label: 'as loaded', counter: loadCounter(name) },
    { label: 'in WebAssembly', counter: counters.wasm },
    { label: `in WebAssembly, scanned in parts of ${SHORT_SCAN_PART} characters`, counter: counters.parts },
    { label: 'in JavaScript', counter: counters.javascript },
  ];
}

/**
 * After a test's inputs: the WebAssembly merge did count pieces, and under o200k the scan went over
 * text (`ascii`: the inputs have ASCII pieces), in both counters that scan (the checks above
 * compared them, not JavaScript twice).
 */
function assertMergedInWebAssembly(name: EncodingName, before: SoFar, { ascii = true } = {}): void {
  const counters = made.get(name);
  assert.ok(counters && counters.wasm.mergedInWebAssembly > before.merged, `${name}: no piece was merged in WebAssembly`);
  assert.equal(counters.javascript.mergedInWebAssembly, 0);
  assert.equal(counters.javascript.scannedInWebAssembly, 0);
  // The scan leaves pieces with characters that are not ASCII to JavaScript.
  if (name !== 'o200k_base' || !ascii) return;
  assert.ok(counters.wasm.scannedInWebAssembly > before.scanned, `${name}: nothing was scanned in WebAssembly`);
  assert.ok(counters.parts.scannedInWebAssembly > before.scannedInParts, `${name}: nothing was scanned in WebAssembly in parts`);
}
interface SoFar {
  readonly merged: number;
  readonly scanned: number;
  readonly scannedInParts: number;
}
const mergedSoFar = (name: EncodingName): SoFar => {
  const counters = made.get(name);
  return {
    merged: counters?.wasm.mergedInWebAssembly ?? 0,
    scanned: counters?.wasm.scannedInWebAssembly ?? 0,
    scannedInParts: counters?.parts.scannedInWebAssembly ?? 0,
  };
};

const FIXED_CASES: readonly string[] = [
  '',
  'a',
  ' ',
  'Hello, world!',
  "The quick brown fox jumps over the lazy dog. It's 3:45pm; we've got 12,345 reasons.",
  "I'LL DO IT, he'd said. Don't, won't, can't — SHOULDN'T.",
  'export async function loadCounter(name: EncodingName): Promise<BpeCounter> {\n  return cache.get(name) ?? (await build(name));\n}\n',
  '    if (x === undefined) {\n\t\treturn null;\r\n    }\r\n',
  '{"type":"tool_result","content":[{"type":"text","text":"ok"}],"is_error":false,"id":"toolu_01A2b3C4"}',
  'Traceback (most recent call last):\n  File "/usr/lib/python3.11/site-packages/foo/bar.py", line 42, in <module>\n    raise ValueError("bad value: %r" % (x,))\nValueError: bad value: None\n',
  "Error: ENOENT: no such file or directory, open '/tmp/x.json'\n    at Object.openSync (node:fs:596:3)\n    at readFileSync (node:fs:464:35)",
  '中文测试：你好，世界！日本語のテキストと한국어 텍스트。',
  'Emoji 😀👍🏽👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 and ❤️',
  'العربية: مرحبا بالعالم. עברית: שלום עולם.',
  'Combining: e\u0301 a\u0308 n\u0303 Z\u0336\u0337\u0338 \u0915\u094d\u0937',
  '<|endoftext|>',
  'before <|endoftext|> middle <|endofprompt|> after <|fim_prefix|><|im_start|>',
  '<|endoftext|><|endoftext|><|endoftext|>',
  '   \n\n\n   \t\t  x  \r\n\r\n  ',
  'line1\r\nline2\r\n\r\nline3\n',
  '\ud800 lone high, lone low \udfff, pair \ud83d\ude00, reversed \ude00\ud83d',
  'a\u0000b\u0001c\u007f\u0080\u00ff',
  '=================================================================================',
  '────────────────────────────────────────────────────────────',
  '1234567890 3.14159265358979 0xDEADBEEF 1e-10 -42',
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'https://example.com/path/to/resource?query=value&other=123#fragment',
  'camelCaseIdentifier snake_case_identifier SCREAMING_SNAKE kebab-case-id',
  '\u00a0\u2003\u3000 unusual spaces \u200b zero width \ufeff bom',
];

const ALPHABET: readonly string[] = [
  'a',
  'e',
  'Z',
  'Q',
  'x',
  ' ',
  ' ',
  '  ',
  '\n',
  '\t',
  '\r\n',
  '\r',
  '=',
  '-',
  '.',
  ',',
  "'",
  '"',
  '/',
  '(',
  '{',
  '<',
  '#',
  '_',
  '0',
  '7',
  '42',
  '中',
  '文',
  'の',
  '한',
  '😀',
  '👍🏽',
  'é',
  'e\u0301',
  '\u0301',
  'ا',
  'ש',
  '─',
  '│',
  '\ud800',
  '\udfff',
  '<|endoftext|>',
  "'s",
  "'LL",
  'the',
  ' the',
  'ing',
  '\u00a0',
  '\u3000',
  '\u0000',
  '+',
  '*',
  '$',
  '\\',
  '…',
  '™',
];

function randomText(next: () => number): string {
  const parts: string[] = [];
  const pieces = 1 + Math.floor(next() * 40);
  for (let i = 0; i < pieces; i++) {
    const unit = ALPHABET[Math.floor(next() * ALPHABET.length)] ?? 'a';
    const roll = next();
    // Mostly short runs, some medium, a few long runs of 200 B - 2 KB (the long-piece path at a
    // length the quadratic oracle still does in a fraction of a second).
    const longBytes = 200 + Math.floor(next() * 1800);
    const repeat =
      roll < 0.8 ? 1 + Math.floor(next() * 4) : roll < 0.995 ? 5 + Math.floor(next() * 60) : Math.ceil(longBytes / Buffer.byteLength(unit, 'utf8'));
    parts.push(unit.repeat(repeat));
  }
  return parts.join('');
}

for (const name of ENCODING_NAMES) {
  test(`${name}: equals js-tiktoken on fixed cases (as loaded, merging in WebAssembly, in JavaScript)`, () => {
    const before = mergedSoFar(name);
    const counters = allCounters(name);
    for (const text of FIXED_CASES) {
      const expected = oracleCount(name, text);
      for (const { label, counter } of counters) assert.equal(counter.count(text), expected, `${label}: ${JSON.stringify(text)}`);
    }
    assertMergedInWebAssembly(name, before);
  });

  test(`${name}: equals js-tiktoken on seeded random strings (as loaded, merging in WebAssembly, in JavaScript)`, () => {
    const before = mergedSoFar(name);
    const counters = allCounters(name);
    const next = seeded(name === 'o200k_base' ? 20240601 : 19700101);
    for (let i = 0; i < 300; i++) {
      const text = randomText(next);
      const expected = oracleCount(name, text);
      for (const { label, counter } of counters) assert.equal(counter.count(text), expected, `${label}, case ${i}: ${JSON.stringify(text.slice(0, 200))}`);
    }
    assertMergedInWebAssembly(name, before);
  });

  test(`${name}: equals js-tiktoken on every run length of a few characters (the short loop and the heap; as loaded, merging in WebAssembly, in JavaScript)`, () => {
    const before = mergedSoFar(name);
    const counters = allCounters(name);
    for (const unit of ['=', ' ', 'a', '中', '─', '\n', ' \t', 'ab', '😀', '-_']) {
      for (let n = 1; n <= 100; n++) {
        const text = unit.repeat(n);
        const expected = oracleCount(name, text);
        for (const { label, counter } of counters) assert.equal(counter.count(text), expected, `${label}: ${JSON.stringify(unit)} x ${n}`);
      }
    }
    assertMergedInWebAssembly(name, before);
  });

  test(`${name}: equals js-tiktoken on realistic multi-line text`, () => {
    const counter = loadCounter(name);
    const text = FIXED_CASES.join('\n').repeat(20);
    assert.equal(counter.count(text), oracleCount(name, text));
    // A second call hits the memo and must agree with the first.
    assert.equal(counter.count(text), oracleCount(name, text));
  });
  test(`${name}: equals js-tiktoken on runs of CJK, kana, accented letters and emoji (each run one piece of 11 to 600 bytes: the heap merge and the bucket merge)`, () => {
    // Runs of letters with no space are single pieces of many bytes, most of them never seen
    // before: the merge of pieces past the short loop, where transcripts in these scripts spend it.
    const alphabet = [
      ...'水总她党父に之未毛华息对间近定つツ正钱几孩学还力由数地到听着间四イ你石认轻何吧下太也里满令许化无七口ケ女离度果éüßøåñçłąğ한국어텍스트',
    ];
    const next = seeded(name === 'o200k_base' ? 31337 : 27182);
    const before = mergedSoFar(name);
    const counters = allCounters(name);
    for (let i = 0; i < 400; i++) {
      const length = 4 + Math.floor(next() * (i % 10 === 0 ? 200 : 40));
      let text = '';
      for (let k = 0; k < length; k++) text += alphabet[Math.floor(next() * alphabet.length)] ?? '水';
      if (next() < 0.3) text += '😀🌍⚠️'.slice(0, 1 + Math.floor(next() * 4));
      const expected = oracleCount(name, text);
      for (const { label, counter } of counters) assert.equal(counter.count(text), expected, `${label}, case ${i}: ${text}`);
    }
    assertMergedInWebAssembly(name, before, { ascii: false });
  });
}

for (const name of ENCODING_NAMES) {
  test(`${name}: equals js-tiktoken on seeded random strings of every ASCII character, with a few others (as loaded, in WebAssembly, in parts, in JavaScript)`, () => {
    // Every class of the scan's byte table (letters, digits, space, tab, line breaks, each symbol and
    // control character), in runs, beside characters that are not ASCII.
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
    const alphabet = [...ascii, ...ascii, 'é', '中', '😀', '\u00a0', '\ud800', "'s", "'LL", ' the', '\r\n'];
    const next = seeded(name === 'o200k_base' ? 128 : 129);
    const before = mergedSoFar(name);
    const counters = allCounters(name);
    for (let i = 0; i < 400; i++) {
      let text = '';
      const runs = 1 + Math.floor(next() * 30);
      for (let r = 0; r < runs; r++) text += (alphabet[Math.floor(next() * alphabet.length)] ?? 'a').repeat(1 + Math.floor(next() * (next() < 0.9 ? 3 : 12)));
      const expected = oracleCount(name, text);
      for (const { label, counter } of counters) assert.equal(counter.count(text), expected, `${label}, case ${i}: ${JSON.stringify(text)}`);
    }
    assertMergedInWebAssembly(name, before);
  });
}

test(`o200k: a text longer than the scan's part (${SCAN_PART_CHARS.toLocaleString('en-US')} characters) is counted exactly where a part ends inside a piece`, () => {
  const counter = new BpeCounter(o200k, { warmAfterChars: 0 });
  const fill = (length: number): string => ' ab'.repeat(Math.ceil(length / 3)).slice(0, length);
  // What lies across the first part's end: a surrogate pair, a run of spaces, a word, symbols, digits.
  for (const across of ['😀', '          ', 'abcdefghij', '=========', '1234567', '\r\n\r\n', " it's"]) {
    for (const shift of [0, 1, 2, 3, 5]) {
      const text = `${fill(SCAN_PART_CHARS - shift - 1)}${across}${fill(1000)}x`;
      const scanned = counter.scannedInWebAssembly;
      assert.equal(counter.count(text), oracleCount('o200k_base', text), `${JSON.stringify(across)} at ${shift}`);
      assert.ok(counter.scannedInWebAssembly - scanned > SCAN_PART_CHARS, 'both parts were scanned in WebAssembly');
    }
  }
});

test('o200k: an ASCII piece of up to 256 bytes is merged in the scan, a longer one in JavaScript, both exactly', () => {
  const counter = new BpeCounter(o200k, { warmAfterChars: 0 });
  const next = seeded(300);
  for (let length = 240; length <= 300; length++) {
    // Random small letters after a space: one piece, with many merges.
    const text = ` ${randomLetters(next, length - 1)}`;
    const [merged, scanned] = [counter.mergedInWebAssembly, counter.scannedInWebAssembly];
    assert.equal(counter.count(text), oracleCount('o200k_base', text), `a piece of ${length} bytes`);
    assert.equal(counter.scannedInWebAssembly - scanned, length <= 256 ? length : 0, `a piece of ${length} bytes: scanned in WebAssembly or not`);
    assert.equal(counter.mergedInWebAssembly - merged, length <= 256 ? 1 : 0, `a piece of ${length} bytes: merged in WebAssembly or not`);
  }
});

function randomLetters(next: () => number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String.fromCharCode(97 + Math.floor(next() * 26));
  return out;
}

test("o200k: the scan's memo grows, keeps what it learnt, and is emptied past 65,536 pieces or its arena's 2 MB: counts stay exact", () => {
  // `count` distinct words (" a", " b", … in base 26): each a piece the memo has not seen.
  const words = (count: number, from = 0): string => {
    const out: string[] = [];
    for (let i = from; i < from + count; i++) {
      let word = '';
      for (let k = i + 1; k > 0; k = Math.floor((k - 1) / 26)) word = String.fromCharCode(97 + ((k - 1) % 26)) + word;
      out.push(` ${word}`);
    }
    return out.join('');
  };
  const counter = new BpeCounter(o200k, { warmAfterChars: 0 });
  // 60,000 pieces: the table doubles from 1,024 slots to 131,072, and keeps every piece.
  const many = words(60_000);
  assert.equal(counter.count(many), oracleCount('o200k_base', many));
  let merged = counter.mergedInWebAssembly;
  assert.equal(counter.count(many), oracleCount('o200k_base', many), 'again, from the memo');
  assert.equal(counter.mergedInWebAssembly, merged, 'nothing merged again: the memo kept all 60,000 pieces as it grew');
  // 10,000 more: past 65,536 pieces the memo is emptied (its table would outgrow its place), so the
  // words before are merged again, the last ones too.
  const more = words(10_000, 60_000);
  assert.equal(counter.count(more), oracleCount('o200k_base', more));
  merged = counter.mergedInWebAssembly;
  const before = words(1_000, 59_000);
  assert.equal(counter.count(before), oracleCount('o200k_base', before));
  assert.equal(counter.mergedInWebAssembly - merged, 1_000, 'the words before were forgotten: the memo was emptied');
  // Long distinct words (up to 256 bytes, the longest the scan takes) fill the arena's 2 MB
  // before 65,536 pieces: it is emptied too, and the counts agree with the JavaScript counter's.
  const javascript = new BpeCounter(o200k, { wasmMerge: false });
  const next = seeded(256);
  const long: string[] = [];
  for (let i = 0; i < 12_000; i++) long.push(` ${words(1, i).trim()}${'qwertyuiopasdfghjklzxcvbnm'.repeat(9).slice(0, 180 + Math.floor(next() * 70))}`);
  const text = long.join('');
  const fresh = new BpeCounter(o200k, { warmAfterChars: 0 });
  assert.equal(fresh.count(text), javascript.count(text));
  merged = fresh.mergedInWebAssembly;
  assert.ok(merged >= 12_000, 'each long word was merged in WebAssembly');
  assert.equal(fresh.count(long.slice(0, 100).join('')), javascript.count(long.slice(0, 100).join('')));
  assert.ok(fresh.mergedInWebAssembly > merged, 'the first long words were forgotten: the arena was emptied');
});

test('any rank table: equals js-tiktoken on synthetic vocabularies (merge order, stale pairs, lower-rank pairs)', () => {
  // Random vocabularies over a 3-letter alphabet, with ranks in random order, so merges routinely
  // create pairs ranked lower than the merge that made them (real tables rarely do). The pattern
  // makes the whole text one piece, so long texts take the long-piece path.
  const next = seeded(424242);
  const singleBytes: string[] = [];
  for (let b = 0; b < 256; b++) singleBytes.push(Buffer.from([b]).toString('base64'));
  for (let v = 0; v < 40; v++) {
    const tokens = new Set<string>();
    const wanted = 5 + Math.floor(next() * 40);
    while (tokens.size < wanted) {
      let t = '';
      const len = 2 + Math.floor(next() * 5);
      for (let i = 0; i < len; i++) t += 'abc'[Math.floor(next() * 3)] ?? 'a';
      tokens.add(t);
    }
    const extra = [...tokens].sort(() => next() - 0.5).map((t) => Buffer.from(t, 'latin1').toString('base64'));
    const source = {
      pat_str: '[\\s\\S]+',
      special_tokens: {},
      bpe_ranks: `! 0 ${singleBytes.join(' ')}\n! 256 ${extra.join(' ')}\n`,
    };
    const [wasm, javascript] = [new BpeCounter(source, { warmAfterChars: 0 }), new BpeCounter(source, { wasmMerge: false })];
    const oracle = new Tiktoken(source);
    // Each token whole (one token, whether or not merging could reach it), two with a letter between, then random runs.
    const texts = [...tokens].flatMap((t) => [t, `${t}a${t}`]);
    for (let k = 0; k < 25; k++) {
      let text = '';
      const len = 1 + Math.floor(next() * 300);
      for (let i = 0; i < len; i++) text += 'abc'[Math.floor(next() * 3)] ?? 'a';
      texts.push(text);
    }
    for (const text of texts) {
      const expected = oracle.encode(text, [], []).length;
      const context = `vocab ${v}: ${[...tokens].join(',')} text ${text}`;
      assert.equal(wasm.count(text), expected, `in WebAssembly, ${context}`);
      assert.equal(javascript.count(text), expected, `in JavaScript, ${context}`);
    }
    assert.ok(wasm.mergedInWebAssembly > 0, `vocab ${v}: no piece was merged in WebAssembly`);
  }
});

const MB = 1 << 20;
const next = seeded(7);
const randomFrom = (alphabet: string, length: number): string => {
  const out: string[] = [];
  for (let i = 0; i < length; i++) out.push(alphabet[Math.floor(next() * alphabet.length)] ?? 'a');
  return out.join('');
};
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
let PRINTABLE = '';
for (let c = 0x21; c < 0x7f; c++) PRINTABLE += String.fromCharCode(c);
const randomUtf8 = (length: number): string => {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(next() * 256);
  return new TextDecoder().decode(bytes);
};

/** Pathological content, by a generator of `length` UTF-16 units (about a byte each for ASCII). */
const PATHOLOGICAL: Record<string, (length: number) => string> = {
  'one punctuation char': (n) => '='.repeat(n),
  "'a' repeated": (n) => 'a'.repeat(n),
  'CJK repeated': (n) => '中'.repeat(Math.ceil(n / 3)),
  spaces: (n) => ' '.repeat(n),
  'box drawing': (n) => '─'.repeat(Math.ceil(n / 3)),
  'base64 without whitespace': (n) => randomFrom(BASE64, n),
  'printable ASCII without spaces': (n) => randomFrom(PRINTABLE, n),
  'random bytes decoded as UTF-8': (n) => randomUtf8(n),
};

for (const [label, make] of Object.entries(PATHOLOGICAL)) {
  test(`1 MB of ${label}: completes with a plausible count, and is exact at oracle-feasible size`, () => {
    for (const name of ENCODING_NAMES) {
      const counter = loadCounter(name);
      const big = make(MB);
      const n = counter.count(big);
      const bytes = Buffer.byteLength(big, 'utf8');
      assert.ok(n > 0 && n <= bytes, `${name}: ${n} tokens for ${bytes} bytes`);
      // The oracle is quadratic in a piece's length: 4 KB takes it about a second (o200k), so the
      // exactness of the fast path on the same content is checked there (2 KB for cl100k).
      const small = make(name === 'o200k_base' ? 4096 : 2048);
      assert.equal(counter.count(small), oracleCount(name, small), `${name} at ${small.length} units`);
    }
  });
}

test('loadCounter caches one counter per encoding', () => {
  assert.equal(loadCounter('o200k_base'), loadCounter('o200k_base'));
  assert.notEqual(loadCounter('o200k_base'), loadCounter('cl100k_base'));
});

test('anthropic images: width * height / 750 after fitting 1568 px and ~1.15 MP', () => {
  assert.equal(anthropicImageTokens(200, 200), Math.ceil((200 * 200) / 750)); // 54
  assert.equal(anthropicImageTokens(1000, 1000), 1334);
  assert.equal(anthropicImageTokens(1092, 1092), 1590);
  // 3000 x 2000 is scaled to 1.2 MP (1341 x 894): the cap.
  assert.equal(anthropicImageTokens(3000, 2000), Math.ceil((1341 * 894) / 750));
  // 4000 x 200: the long edge fits 1568 first (1568 x 78).
  assert.equal(anthropicImageTokens(4000, 200), Math.ceil((1568 * 78) / 750));
  assert.ok(anthropicImageTokens(8000, 8000) <= ANTHROPIC_IMAGE_MAX);
  assert.equal(estimateBlobTokens({ kind: 'image', provider: 'anthropic', base64Length: 1000 }), ANTHROPIC_IMAGE_MAX);
});

test('openai images: 85 + 170 per 512 px tile after fitting 2048 then 768 short side', () => {
  assert.equal(openaiImageTokens(512, 512), 85 + 170);
  assert.equal(openaiImageTokens(1024, 1024), 85 + 170 * 4); // -> 768 x 768, 2 x 2 tiles
  assert.equal(openaiImageTokens(2048, 4096), 85 + 170 * 6); // -> 1024 x 2048 -> 768 x 1536, 2 x 3
  assert.equal(openaiImageTokens(1920, 1080), 85 + 170 * 6); // -> 1365 x 768, 3 x 2
  assert.equal(openaiImageTokens(100, 100), 85 + 170);
  assert.equal(estimateBlobTokens({ kind: 'image', provider: 'openai', base64Length: 0 }), OPENAI_IMAGE_MAX);
  assert.equal(OPENAI_IMAGE_MAX, 1445);
});

test('gemini images: 258 when both sides <= 384, else 258 per 768 x 768 tile', () => {
  assert.equal(geminiImageTokens(384, 384), 258);
  assert.equal(geminiImageTokens(385, 100), 258); // one tile
  assert.equal(geminiImageTokens(1920, 1080), 258 * 6);
  assert.equal(geminiImageTokens(768, 768), 258);
  assert.equal(geminiImageTokens(769, 768), 258 * 2);
  assert.equal(estimateBlobTokens({ kind: 'image', provider: 'gemini', base64Length: 10 }), GEMINI_IMAGE_UNKNOWN);
  assert.equal(estimateBlobTokens({ kind: 'image', provider: 'gemini', base64Length: 10, width: 300, height: 200 }), 258);
});

test('documents: pages from decoded bytes (75 KB a page, at least one) times the provider rate', () => {
  // 400,000 base64 chars = 300,000 bytes = 4 pages.
  assert.equal(decodedBytes(400_000), 300_000);
  assert.equal(estimateBlobTokens({ kind: 'document', provider: 'anthropic', base64Length: 400_000 }), 4 * 2250);
  assert.equal(estimateBlobTokens({ kind: 'document', provider: 'gemini', base64Length: 400_000 }), 4 * 258);
  assert.equal(estimateBlobTokens({ kind: 'document', provider: 'openai', base64Length: 400_000 }), 4 * 1515);
  assert.equal(estimateBlobTokens({ kind: 'document', provider: 'anthropic', base64Length: 0 }), 2250);
  assert.equal(estimateBlobTokens({ kind: 'document', provider: 'anthropic', base64Length: 400_004 }), 5 * 2250);
});

test('encrypted: recorded tokens when known, else (decoded bytes − 700-byte envelope) / 4.3', () => {
  assert.equal(estimateBlobTokens({ kind: 'encrypted', provider: 'openai', base64Length: 4000, recordedTokens: 123 }), 123);
  // 4000 base64 chars = 3000 bytes; (3000 − 700) / 4.3 = 534.9 → 535.
  assert.equal(estimateBlobTokens({ kind: 'encrypted', provider: 'openai', base64Length: 4000 }), 535);
  // An envelope with no reasoning in it costs nothing.
  assert.equal(estimateBlobTokens({ kind: 'encrypted', provider: 'openai', base64Length: 900 }), 0);
  assert.equal(estimateBlobTokens({ kind: 'encrypted', provider: 'anthropic', base64Length: 0 }), 0);
  // A recorded count wins for any kind.
  assert.equal(estimateBlobTokens({ kind: 'image', provider: 'anthropic', base64Length: 9, width: 1000, height: 1000, recordedTokens: 7 }), 7);
});

// ASCII text under o200k is split by hand (src/core/tokens/ascii-pieces.ts): every piece must be the
// regex's, as js-tiktoken finds them (matchAll with the pattern's own flags).
const regexPieces = (name: EncodingName, text: string): string[] =>
  [...text.matchAll(new RegExp((name === 'o200k_base' ? o200k : cl100k).pat_str, 'ug'))].map((m) => m[0]);

/** Mostly ASCII, with every kind of character the hand split must hand back to the regex. */
const SPLIT_ALPHABET: readonly string[] = [
  ...'abcxyzABCXYZ0123456789',
  ...' \t\n\r\v\f',
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  '\u0000',
  '\u001f',
  '\u007f',
  "'s",
  "'S",
  "'t",
  "'re",
  "'rE",
  "'Ve",
  "'ll",
  "'LL",
  "'m",
  "'D",
  "'x",
  "'r",
  "'l",
  'é',
  'É',
  'ǅ',
  'ʰ',
  '中',
  '\u0301',
  '²',
  '٣',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '→',
  '😀',
  '\ud800',
];

test('o200k_base: the hand split of ASCII text gives exactly the regex pieces', () => {
  // Warm from the first character: the fast path (hand split, in-place memo) at once.
  const counter = new BpeCounter(o200k, { warmAfterChars: 0 });
  counter.count('warm');
  const next = seeded(0xa5c11);
  for (let i = 0; i < 20_000; i++) {
    const parts: string[] = [];
    const n = 1 + Math.floor(next() * 30);
    for (let k = 0; k < n; k++) {
      const unit = SPLIT_ALPHABET[Math.floor(next() * SPLIT_ALPHABET.length)] as string;
      parts.push(next() < 0.85 ? unit : unit.repeat(2 + Math.floor(next() * 5)));
    }
    const text = parts.join('');
    assert.deepEqual(counter.pieces(text), regexPieces('o200k_base', text), JSON.stringify(text));
  }
  for (const text of FIXED_CASES) assert.deepEqual(counter.pieces(text), regexPieces('o200k_base', text), JSON.stringify(text));
  // And the counts, on both paths, equal js-tiktoken's on the same kind of text.
  const plain = new BpeCounter(o200k);
  const next2 = seeded(0xc0ffee);
  for (let i = 0; i < 300; i++) {
    const text = Array.from({ length: 40 }, () => SPLIT_ALPHABET[Math.floor(next2() * SPLIT_ALPHABET.length)] as string).join('');
    const expected = oracleCount('o200k_base', text);
    assert.deepEqual([counter.count(text), plain.count(text)], [expected, expected], JSON.stringify(text));
  }
});

test('cl100k_base: pieces are the regex pieces (no hand split: its pattern is another)', () => {
  const counter = loadCounter('cl100k_base');
  for (const text of FIXED_CASES) assert.deepEqual(counter.pieces(text), regexPieces('cl100k_base', text), JSON.stringify(text));
});

test('o200k_base: the piece memo, full and cleared, still gives js-tiktoken counts', () => {
  // 100,000 distinct pieces: more than the memo holds (65,536), so it is cleared on the way.
  const words = Array.from({ length: 100_000 }, (_, i) => `q${(i * 7919).toString(36)}é${i.toString(36)}`);
  const text = words.join(' ');
  const expected = oracleCount('o200k_base', text);
  const start = words.slice(0, 1000).join(' ');
  // Plain until 256 KiB have been counted, then the fast path with what the plain memo knew.
  for (const counter of [new BpeCounter(o200k), new BpeCounter(o200k, { warmAfterChars: 0 }), new BpeCounter(o200k, { warmAfterChars: 10_000 })]) {
    assert.equal(counter.count(start), oracleCount('o200k_base', start));
    assert.equal(counter.count(text), expected);
    assert.equal(counter.count(text), expected, 'again, through the refilled memo');
    assert.equal(counter.count(start), oracleCount('o200k_base', start));
  }
});

test('a piece over 64 KiB is counted in parts cut between characters: within 6 tokens a cut of the piece counted whole, and within 1 % (SPEC §5)', () => {
  // Counted whole, a piece goes through the same merge as any piece up to 64 KiB (the cases above
  // hold it to js-tiktoken, which takes minutes on a piece this long).
  const parts = new BpeCounter(o200k);
  const whole = new BpeCounter(o200k, { longPieceChunkBytes: Infinity });
  const random = seeded(64);
  const pick = (alphabet: string, n: number): string => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const cjk = (n: number): string => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + Math.floor(random() * 0x1000))).join('');
  // Exact: runs of multi-byte characters, whose halves a cut inside a character made tokens of.
  const shapes: readonly [name: string, make: (bytes: number) => string, exact: boolean][] = [
    ['a run of dots', (bytes) => '.'.repeat(bytes), false],
    ['a run of tabs', (bytes) => '\t'.repeat(bytes), false],
    ['a space, then slashes', (bytes) => ` ${'/'.repeat(bytes)}`, false],
    ['one CJK character repeated', (bytes) => '中'.repeat(Math.ceil(bytes / 3)), true],
    ['random CJK', (bytes) => cjk(Math.ceil(bytes / 3)), true],
    ['é repeated', (bytes) => 'é'.repeat(Math.ceil(bytes / 2)), true],
    ['random lower-case letters', (bytes) => pick('etaoinshrdlucmfwypvbgkjqxz', bytes), false],
  ];
  for (const [name, make, mustBeExact] of shapes) {
    for (const bytes of [65_537, 65_538, 65_539, 70_000, 131_073, 200_000]) {
      const text = make(bytes);
      const cuts = Math.ceil(Buffer.byteLength(text) / LONG_PIECE_CHUNK_BYTES) - 1;
      const exact = whole.count(text);
      const got = parts.count(text);
      withinACut(got, exact, cuts, `${name}, ${bytes} bytes`);
      // 21,848 for 21,846 of 中 when a cut fell inside a character.
      if (mustBeExact) assert.equal(got, exact, `${name}, ${bytes} bytes`);
    }
  }
  // The worst a review found (about 8,300 long runs): 6 tokens on one cut, 0.48 % of a piece.
  const cl100kParts = new BpeCounter(cl100k);
  const cl100kWhole = new BpeCounter(cl100k, { longPieceChunkBytes: Infinity });
  // (6, 4, 4, 4 and 4 tokens off below.)
  const worst: readonly [name: string, encoding: 'o200k' | 'cl100k', text: string][] = [
    ['a camelCase name repeated', 'cl100k', 'latesAutoresizingMaskIntoConstraintsNullPointerException'.repeat(1171)],
    ['a comment rule repeated', 'cl100k', `//${'*'.repeat(76)}`.repeat(841)],
    ['a box-drawing line', 'o200k', '─'.repeat(21_876)],
    ['-= repeated', 'o200k', '-='.repeat(35_000)],
    ['-= repeated', 'cl100k', '-='.repeat(35_000)],
  ];
  for (const [name, encoding, text] of worst) {
    const cuts = Math.ceil(Buffer.byteLength(text) / LONG_PIECE_CHUNK_BYTES) - 1;
    const [inParts, counted] = encoding === 'o200k' ? [parts, whole] : [cl100kParts, cl100kWhole];
    const exact = counted.count(text);
    const got = inParts.count(text);
    withinACut(got, exact, cuts, `${name} (${encoding})`);
  }
});

/** A long piece counted in parts: within 6 tokens a cut of its count whole, and within 1 % of it (SPEC §5). */
function withinACut(got: number, exact: number, cuts: number, label: string): void {
  assert.ok(Math.abs(got - exact) <= 6 * cuts, `${label}: ${got} in parts, ${exact} whole (${cuts} cuts)`);
  assert.ok(Math.abs(got - exact) <= exact / 100, `${label}: ${got} in parts, ${exact} whole: more than 1 % off`);
}
