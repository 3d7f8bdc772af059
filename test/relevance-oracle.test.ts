import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, mock, test } from 'node:test';
import { Pacer } from '../src/core/pace.js';
import { GoalExcerpts, goalExcerpt } from '../src/core/prune/excerpt.js';
import { cosineSimilarity, findActiveTask, scoreRelevance } from '../src/core/prune/relevance.js';
import { LineKeepingReader, TermIds, TermIndex, terms } from '../src/core/terms.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { seeded } from './helpers/prng.js';
import { filesUnder, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';

/*
 * The offline ranking (BM25 vectors) and the goal excerpts read terms through a shared TermIndex
 * and integer tables, for speed. A prune's output depends on every float they give: these are the
 * plain definitions (Maps and Sets of `terms`, as they were first written) they must agree with,
 * vector for vector and excerpt for excerpt, on the fixtures and the real transcripts.
 */

const K1 = 1.2;
const B = 0.75;
function fnv(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    h ^= term.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
function termCounts(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const word of terms(text)) tf.set(word, (tf.get(word) ?? 0) + 1);
  return tf;
}
/** The BM25 embedder as first written. */
function plainEmbedder(corpus: readonly string[]): (text: string) => Float32Array {
  const df = new Map<string, number>();
  let total = 0;
  for (const text of corpus) {
    for (const [word, count] of termCounts(text)) {
      total += count;
      df.set(word, (df.get(word) ?? 0) + 1);
    }
  }
  const average = corpus.length > 0 ? Math.max(1, total / corpus.length) : 1;
  return (text) => {
    const vector = new Float32Array(4096);
    const tf = termCounts(text);
    let length = 0;
    for (const count of tf.values()) length += count;
    const norm = 1 - B + (B * length) / average;
    for (const [word, count] of tf) {
      const d = df.get(word) ?? 0;
      const idf = corpus.length > 0 ? Math.log(1 + (corpus.length - d + 0.5) / (d + 0.5)) : 1;
      const weight = ((count * (K1 + 1)) / (count + K1 * norm)) * idf;
      const h = fnv(word);
      const bucket = h % 4096;
      vector[bucket] = (vector[bucket] ?? 0) + (h >>> 31 === 1 ? -weight : weight);
    }
    return vector;
  };
}

/** The goal excerpt as first written. */
function plainExcerpt(text: string, goal: string): { text: string; keptLines: number; totalLines: number } | undefined {
  const lines = text.split('\n');
  if (lines.length < 12) return undefined;
  const goalTerms = new Set(terms(goal));
  if (goalTerms.size === 0) return undefined;
  const lineTerms = lines.map((line) => new Set(terms(line)));
  const frequency = new Map<string, number>();
  for (const set of lineTerms) for (const term of set) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const scored: { index: number; score: number }[] = [];
  lineTerms.forEach((set, index) => {
    let goalScore = 0;
    let fresh = 0;
    for (const term of set) {
      const seen = frequency.get(term) ?? 1;
      if (goalTerms.has(term)) goalScore += Math.log(1 + lines.length / seen);
      else if (seen === 1 && !/\d/.test(term)) fresh++;
    }
    if (goalScore === 0) return;
    const error = /\b(?:error|errors|fail|failed|failure|exception|fatal|panic|traceback)\b|✗|×/i.test(lines[index] ?? '');
    scored.push({ index, score: goalScore * (1 + 0.25 * Math.min(fresh, 4)) + (error ? goalScore : 0) });
  });
  if (scored.length === 0) return undefined;
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const kept: number[] = [];
  let chars = 0;
  for (const { index } of scored) {
    const length = Math.min(400, (lines[index] ?? '').length) + 1;
    if (kept.length >= 40 || chars + length > 0.2 * text.length) break;
    kept.push(index);
    chars += length;
  }
  if (kept.length === 0) return undefined;
  const keep = new Set(kept);
  const out: string[] = [];
  let gap = 0;
  const flush = (): void => {
    if (gap > 0) out.push(`[… ${gap} line${gap === 1 ? '' : 's'} …]`);
    gap = 0;
  };
  lines.forEach((line, i) => {
    if (!keep.has(i)) {
      gap++;
      return;
    }
    flush();
    out.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
  });
  flush();
  return { text: out.join('\n'), keptLines: kept.length, totalLines: lines.length };
}

/** Every transcript to check: the fixtures and the real ones, each as its turns' texts and its goal. */
function sessions(): { name: string; texts: string[]; tools: string[]; goal: string }[] {
  const paths = [...filesUnder(`${repoRoot}fixtures`), ...realdataFiles()];
  const out: { name: string; texts: string[]; tools: string[]; goal: string }[] = [];
  for (const path of paths) {
    let transcript: ReturnType<typeof readTranscript>;
    try {
      transcript = readTranscript(parseDocument(readFileSync(path), { path }));
    } catch {
      continue; // a fixture that is no transcript (an empty file)
    }
    const turns = transcript.entries.map((e) => e.turn);
    const goal = findActiveTask(turns) ?? '';
    out.push({
      name: path,
      texts: turns.map((t) => t.content),
      tools: turns.filter((t) => t.type === 'tool_result').map((t) => t.content),
      goal: goal || 'fix the failing test in the parser',
    });
  }
  return out;
}

/**
 * Seeded random corpora for the scores: thousands of distinct terms in 4,096 buckets (many share one,
 * with either sign), words repeated hundreds of times in a text, texts of one word and of none, a
 * goal of stop words only (its vector is all zeros), and non-ASCII words.
 */
function randomCorpora(): { name: string; texts: string[]; goal: string }[] {
  const next = seeded(0x5c0e);
  const letters = 'abcdefghijklmnopqrstuvwxyzéßωж';
  const word = (): string => {
    let out = '';
    const length = 2 + Math.floor(next() * 9);
    for (let k = 0; k < length; k++) out += letters[Math.floor(next() * letters.length)];
    return next() < 0.1 ? `${out}${out.slice(0, 1).toUpperCase()}${out.slice(1)}` : out;
  };
  const corpora: { name: string; texts: string[]; goal: string }[] = [];
  for (let c = 0; c < 3; c++) {
    const vocabulary = Array.from({ length: 2000 + c * 3000 }, word);
    const pick = (): string => vocabulary[Math.floor(next() ** 2 * vocabulary.length)] as string;
    const texts = Array.from({ length: 150 }, (_, t) => {
      if (t === 0) return '';
      if (t === 1) return pick();
      const words = Array.from({ length: Math.floor(next() * 1500) }, pick);
      const repeated = pick();
      for (let k = Math.floor(next() * 300); k > 0; k--) words.push(repeated);
      return words.join(next() < 0.5 ? ' ' : '\n');
    });
    corpora.push({ name: `random corpus ${c}`, texts, goal: Array.from({ length: 12 }, pick).join(' ') });
    if (c === 0) corpora.push({ name: 'random corpus, a goal of stop words', texts, goal: 'the and of to is' });
  }
  return corpora;
}

describe('the offline ranking and the goal excerpts agree with their plain definitions', () => {
  const all = sessions();

  test('there are transcripts to check, with tool output', { skip: realdataSkip }, () => {
    assert.ok(all.length >= 20, `${all.length} transcripts`);
    assert.ok(all.filter((s) => s.tools.some((t) => t.split('\n').length >= 12)).length >= 5, 'several with long tool output');
  });

  test('LocalEmbedder: the same vector for every turn and the goal, fitted at once or a slice at a time with a shared index', async () => {
    for (const { name, texts, goal } of all) {
      const plain = plainEmbedder(texts);
      const fitted = new LocalEmbedder(texts);
      // An index that has read other texts first: its ids differ, the vectors must not.
      const index = new TermIndex();
      index.read('unrelated words first: parseConfigFile MAX_RETRY_COUNT', new TermIds());
      const paced = await LocalEmbedder.fit(texts, new Pacer(), index);
      for (const text of [...texts, goal, 'a text of the corpus? no: newWords neverSeenBefore']) {
        const expected = plain(text);
        assert.deepEqual(fitted.embedOne(text), expected, `${name}: ${text.slice(0, 40)}`);
        assert.deepEqual(paced.embedOne(text), expected, `${name} (fit): ${text.slice(0, 40)}`);
      }
    }
  });

  test('LocalEmbedder.similarities: exactly the cosine of the vectors, and scoreRelevance gives the same scores with it or without', async () => {
    for (const { name, texts, goal } of all) {
      const embedder = new LocalEmbedder(texts);
      const probes = [...texts, '', 'no word of the corpus: zzqx', goal];
      const direct = embedder.similarities(goal, probes);
      const goalVector = embedder.embedOne(goal);
      for (const [i, text] of probes.entries()) assert.equal(direct[i], cosineSimilarity(goalVector, embedder.embedOne(text)), `${name}: ${text.slice(0, 40)}`);
      // Without `similarities`, through the vectors.
      const vectorsOnly = { name: embedder.name, embed: (batch: readonly string[]) => embedder.embed(batch) };
      assert.deepEqual(await scoreRelevance(goal, texts, embedder), await scoreRelevance(goal, texts, vectorsOnly), name);
    }
  });

  test('LocalEmbedder.scoreAhead: the scores it keeps are those similarities gives, for its goal only; other texts are scored when asked', async () => {
    for (const { name, texts, goal } of all) {
      const plain = new LocalEmbedder(texts);
      const ahead = new LocalEmbedder(texts);
      await ahead.scoreAhead(goal, texts, new Pacer());
      assert.deepEqual(ahead.similarities(goal, texts), plain.similarities(goal, texts), name);
      // A text not scored ahead among them, and another goal: computed, the same as without.
      const mixed = [...texts.slice(0, 3), 'not in the corpus: zzqx parseConfigFile'];
      assert.deepEqual(ahead.similarities(goal, mixed), plain.similarities(goal, mixed), `${name} (one new text)`);
      assert.deepEqual(ahead.similarities('another goal entirely', texts), plain.similarities('another goal entirely', texts), `${name} (another goal)`);
    }
    // Scored ahead, they are looked up: no vector is made again (not even the goal's); another goal's are.
    const corpusTexts = all[0]?.texts ?? [];
    const looked = new LocalEmbedder(corpusTexts);
    await looked.scoreAhead('the goal', corpusTexts, new Pacer());
    const made = mock.method(looked, 'embedOne');
    looked.similarities('the goal', corpusTexts);
    assert.equal(made.mock.callCount(), 0, 'scores looked up');
    looked.similarities('another goal', corpusTexts);
    assert.ok(made.mock.callCount() > 0, 'another goal is scored');
    made.mock.restore();
    // The kept scores are the ones given: a goal scored ahead on other texts finds none of these.
    const corpus = ['the parser fails on an empty line', 'unrelated: billing export', 'the parser test'];
    const embedder = new LocalEmbedder(corpus);
    await embedder.scoreAhead('fix the parser', [corpus[1] as string], new Pacer());
    assert.deepEqual(embedder.similarities('fix the parser', corpus), new LocalEmbedder(corpus).similarities('fix the parser', corpus));
    assert.ok((embedder.similarities('fix the parser', corpus)[0] as number) > 0);
  });

  test('LocalEmbedder.scoreAhead scores in WebAssembly: bit for bit what similarities gives in JavaScript, on the transcripts, on random texts whose terms share buckets, and on texts outside the corpus', async () => {
    let scored = 0;
    for (const { name, texts, goal } of [...all, ...randomCorpora()]) {
      const ahead = new LocalEmbedder(texts);
      // Texts outside the corpus too: read while scoring, their new terms in no document.
      const asked = [...texts, 'not in the corpus: zzqx parseConfigFile', 'ωmega zzqx'];
      await ahead.scoreAhead(goal, asked, new Pacer());
      assert.equal(ahead.scoredInWebAssembly, asked.length, `${name}: scored in WebAssembly`);
      assert.deepEqual(ahead.similarities(goal, asked), new LocalEmbedder(texts).similarities(goal, asked), name);
      scored += asked.length;
    }
    assert.ok(scored > 450, `${scored} texts scored`);
  });

  test('LocalEmbedder.scoreAhead without WebAssembly (node --no-expose-wasm) scores in JavaScript, the same scores', () => {
    const { texts, goal } = randomCorpora()[0] as { texts: string[]; goal: string };
    const dist = (path: string): string => JSON.stringify(pathToFileURL(join(repoRoot, 'dist', ...path.split('/'))).href);
    const script = `
      const { LocalEmbedder } = await import(${dist('providers/local-embedder.js')});
      const { Pacer } = await import(${dist('core/pace.js')});
      const { readFileSync } = await import('node:fs');
      const { texts, goal } = JSON.parse(readFileSync(0, 'utf8'));
      const embedder = new LocalEmbedder(texts);
      await embedder.scoreAhead(goal, texts, new Pacer());
      process.stdout.write(JSON.stringify({ scores: embedder.similarities(goal, texts), wasm: embedder.scoredInWebAssembly }));
    `;
    const run = spawnSync(process.execPath, ['--no-expose-wasm', '--input-type=module', '-e', script], {
      input: JSON.stringify({ texts, goal }),
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { scores: new LocalEmbedder(texts).similarities(goal, texts), wasm: 0 });
  });

  test("a fit that keeps the tool results' lines (a prune's) gives the same vectors, and excerpts from the kept lines are the same", async () => {
    let fromKept = 0;
    for (const { name, texts, goal } of all) {
      const index = new TermIndex();
      // Every other text kept, with a long one and a text with no line break among them.
      const corpus = [...texts, `${'a line about parsers\n'.repeat(40)}tail`, 'no break at all', 'x'.repeat(33_000)];
      const reader = new LineKeepingReader(index, (i) => i % 2 === 0 || i >= texts.length);
      const fitted = await LocalEmbedder.fit(corpus, new Pacer(), reader);
      const plain = plainEmbedder(corpus);
      for (const text of [...corpus, goal]) assert.deepEqual(fitted.embedOne(text), plain(text), `${name}: ${text.slice(0, 40)}`);
      assert.equal(reader.lines(corpus.length - 1), undefined, 'a text too long to read whole is not kept');
      assert.equal(reader.lines(1), undefined, 'a text not chosen is not kept');
      const excerpts = new GoalExcerpts(goal, index);
      for (const [i, text] of corpus.entries()) {
        const lines = reader.lines(i);
        if (!lines) continue;
        assert.equal(lines.lineEnds.length, text.split('\n').length, `${name}: one end per line`);
        const expected = plainExcerpt(text, goal);
        assert.deepEqual(excerpts.of(text, lines), expected, `${name} (kept lines): ${text.slice(0, 40)}`);
        if (expected) fromKept++;
      }
    }
    assert.ok(fromKept >= 5, `${fromKept} excerpts from kept lines compared`);

    // Texts of fewer lines than asked are not kept; ids read after others are kept from where they start.
    const index = new TermIndex();
    const reader = new LineKeepingReader(index, () => true, 12);
    const out = new TermIds();
    reader.read(0, 'one line\ntwo lines', out);
    assert.equal(reader.lines(0), undefined);
    const long = `${'a line about parsers\n'.repeat(20)}the parser tail`;
    const before = out.length;
    reader.read(1, long, out);
    const kept = reader.lines(1);
    const alone = new TermIds();
    const ends = new TermIds();
    index.readLines(long, alone, ends);
    assert.deepEqual(kept && [...kept.ids], [...alone.ids.subarray(0, alone.length)]);
    assert.deepEqual(kept && [...kept.lineEnds], [...ends.ids.subarray(0, ends.length)]);
    assert.ok(before > 0 && out.length === before + alone.length, 'appended to what was read before');
    // Lines kept for another text are not used for this one.
    const excerpts = new GoalExcerpts('parser tail', index);
    const other = `${'nothing here at all\n'.repeat(14)}the parser tail`;
    assert.deepEqual(excerpts.of(other, kept), plainExcerpt(other, 'parser tail'));
  });

  test('goal excerpts: the same lines for every tool result, one at a time or many with one index', () => {
    let excerpted = 0;
    for (const { name, tools, goal } of all) {
      const many = new GoalExcerpts(goal);
      for (const text of tools) {
        const expected = plainExcerpt(text, goal);
        assert.deepEqual(goalExcerpt(text, goal), expected, `${name}: ${text.slice(0, 40)}`);
        assert.deepEqual(many.of(text), expected, `${name} (one index): ${text.slice(0, 40)}`);
        if (expected) excerpted++;
      }
    }
    assert.ok(excerpted >= 5, `${excerpted} excerpts compared`);
  });

  test('goal excerpts: the same lines on seeded random logs, where error lines compete with other lines about the goal for the last places', () => {
    const next = seeded(0xe4c3);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const goalWords = ['parser', 'retry', 'webhook', 'cache'];
    const filler = ['the', 'step', 'done', 'ok', 'queue', 'worker', 'request', 'took', 'ms', 'id', 'v2'];
    const errors = ['error', 'failed', 'exception', 'panic', '✗'];
    let withErrors = 0;
    for (let log = 0; log < 60; log++) {
      const lines = Array.from({ length: 60 + Math.floor(next() * 400) }, () => {
        const words = Array.from({ length: 2 + Math.floor(next() * 8) }, () => (next() < 0.15 ? pick(goalWords) : pick(filler)));
        if (next() < 0.2) words.push(pick(errors));
        // A word on this line only, now and then (lines that say something new score more).
        if (next() < 0.2) words.push(`unique${log}x${Math.floor(next() * 1e9).toString(36)}`);
        return words.join(' ');
      });
      const text = lines.join('\n');
      const goal = `fix the ${pick(goalWords)} and the ${pick(goalWords)}`;
      const expected = plainExcerpt(text, goal);
      assert.deepEqual(goalExcerpt(text, goal), expected, `log ${log}`);
      if (expected && errors.some((e) => expected.text.includes(e))) withErrors++;
    }
    assert.ok(withErrors >= 20, `${withErrors} excerpts keep error lines`);
    // A tie at the last places: an error line whose score with the error's bonus equals the score
    // the others reach without one (twice its goal score, as four words of their own give them)
    // comes first, by its place.
    const letters = (n: number): string => Array.from({ length: 4 }, (_, k) => String.fromCharCode(97 + (Math.floor(n / 26 ** k) % 26))).join('');
    const tie = [
      'retry failed',
      ...Array.from({ length: 45 }, (_, i) => `retry ${['a', 'b', 'c', 'd'].map((w) => `${w}${letters(i)}`).join(' ')}`),
      'failed again',
    ].join('\n');
    const expected = plainExcerpt(tie, 'fix the retry');
    assert.ok(expected?.text.startsWith('retry failed\n'), expected?.text.slice(0, 40));
    assert.deepEqual(goalExcerpt(tie, 'fix the retry'), expected);
  });
});
