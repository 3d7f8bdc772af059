import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { countEntries } from '../src/core/accounting.js';
import type { EntryTokens } from '../src/core/accounting.js';
import { resolveSettings } from '../src/core/config.js';
import type { TranscriptEntry } from '../src/core/transcript.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { claudeCodeAdapter } from '../src/formats/claude-code/read.js';
import { codexAdapter } from '../src/formats/codex/read.js';
import { devsAdapter } from '../src/formats/devs/read.js';
import { geminiAdapter } from '../src/formats/gemini/read.js';
import { ADAPTERS } from '../src/formats/index.js';
import type { FormatAdapter, FormatName, Transcript } from '../src/formats/index.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { readGrown, ResumeStore } from '../src/io/resume-store.js';
import { sealed, unsealed } from '../src/io/sealed.js';
import type { ResumeState } from '../src/io/resume-store.js';
import { resumeRead } from '../src/cli/batch/resume.js';
import { analyzeSession } from '../src/cli/batch/session.js';
import type { SessionOutcome, SessionRun } from '../src/cli/batch/session.js';
import { tempFolders } from './helpers/temp.js';
import { runCli } from './helpers/cli.js';
import { filesUnder, realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';

// A batch row of a transcript that grew is read from where the last run ended (issue 18): the old
// lines as skeletons (no text), the new lines whole. Every row must be the row of reading the file
// whole, at every point a session could be caught growing.

const { root: tmp, fresh: freshDir } = tempFolders('devs-ctx-resume-');

const claudeFixtures = filesUnder(join(repoRoot, 'fixtures', 'claude-code'));
const claudeReal = realdataFiles('claude-code');
const devsFixtures = filesUnder(join(repoRoot, 'fixtures', 'devs'));
const codexFixtures = filesUnder(join(repoRoot, 'fixtures', 'codex'));
const codexReal = realdataFiles('codex');
const geminiFixtures = filesUnder(join(repoRoot, 'fixtures', 'gemini'));
const geminiReal = realdataFiles('gemini');

/** What a transcript says besides its turns' text (and the notes that count what was in the text). */
function shape(t: Transcript) {
  return {
    format: t.format,
    entries: t.entries.map((e) => ({
      id: e.turn.id,
      role: e.turn.role,
      type: e.turn.type,
      timestamp: e.turn.timestamp,
      pinned: e.turn.pinned,
      node: e.turn.node,
      tokenCount: e.turn.tokenCount,
      callId: e.turn['callId'],
      records: e.source.records,
      path: e.source.path,
      links: e.links,
      notSent: e.notSent,
      maskable: e.maskable,
    })),
    issues: t.issues,
    usage: t.usage,
    recorded: t.recorded,
    model: t.model,
    lifetime: t.lifetime,
    carriedCalibration: t.carriedCalibration,
  };
}

function skeletonDoc(doc: ParsedDocument, adapter: FormatAdapter = claudeCodeAdapter): ParsedDocument {
  const skeleton = adapter.skeleton as (value: unknown) => unknown;
  // As a state keeps them: through JSON.
  const kept = (value: unknown): unknown => JSON.parse(JSON.stringify(skeleton(value) ?? null));
  return { ...doc, records: doc.records.map((r) => ({ ...r, values: r.values.map(kept) })) };
}

/**
 * Reads `doc` whole and from its skeletons (as a state keeps them): the same turns, notes and format
 * detection. Both reads and the skeletons are given back for a test's own checks.
 */
function readsSameFromSkeletons(doc: ParsedDocument, adapter: FormatAdapter, label: string): { whole: Transcript; read: Transcript; skeleton: ParsedDocument } {
  const whole = adapter.read(doc);
  const skeleton = skeletonDoc(doc, adapter);
  const read = adapter.read(skeleton);
  assert.deepEqual(shape(read), shape(whole), label);
  assert.deepEqual(read.notes, whole.notes, label);
  sameDetection(doc, skeleton, label);
  return { whole, read, skeleton };
}

/** The text is gone: a large file's skeletons are a small part of its lines. */
function skeletonIsSmall(doc: ParsedDocument, skeleton: ParsedDocument, label: string): void {
  const bytes = (d: ParsedDocument): number => d.records.reduce((n, r) => n + r.values.reduce<number>((m, v) => m + JSON.stringify(v ?? null).length, 0), 0);
  if (doc.totalBytes > 100_000) assert.ok(bytes(skeleton) * 2 < bytes(doc), `${label}: skeleton ${bytes(skeleton)} of ${bytes(doc)}`);
}

test('skeleton: every Claude Code fixture and real session reads the same from its skeletons, all but the text', { skip: realdataSkip }, () => {
  assert.ok(claudeFixtures.length >= 10 && claudeReal.length >= 5);
  for (const path of [...claudeFixtures, ...claudeReal]) {
    const doc = parseDocument(readFileSync(path), { path });
    const { skeleton } = readsSameFromSkeletons(doc, claudeCodeAdapter, realdataName(path));
    skeletonIsSmall(doc, skeleton, realdataName(path));
  }
});

test('skeleton: two different blocks of one response stay two, a block written twice stays one', () => {
  const line = (blocks: unknown[], uuid: string, parentUuid: string | null) => ({
    type: 'assistant',
    uuid,
    parentUuid,
    sessionId: 's',
    timestamp: '2026-01-01T00:00:00Z',
    message: { id: 'm1', role: 'assistant', model: 'claude-x', content: blocks },
  });
  const user = { type: 'user', uuid: 'u0', parentUuid: null, sessionId: 's', message: { role: 'user', content: 'go' } };
  const text = (t: string) => ({ type: 'text', text: t });
  const doc = parseDocument(
    Buffer.from(
      `${[user, line([text('one')], 'a1', 'u0'), line([text('two')], 'a2', 'a1'), line([text('one')], 'a3', 'a2'), line([{ type: 'tool_use', id: 't1', name: 'Read', input: { p: 1 } }], 'a4', 'a3'), line([{ type: 'tool_use', id: 't1', name: 'Read', input: { p: 2 } }], 'a5', 'a4')].map((v) => JSON.stringify(v)).join('\n')}\n`,
    ),
    { path: 'x' },
  );
  const whole = claudeCodeAdapter.read(doc);
  const skeleton = claudeCodeAdapter.read(skeletonDoc(doc));
  assert.deepEqual(shape(skeleton), shape(whole));
  // The whole read: 'one' once, 'two', and both tool_use blocks (their inputs differ).
  assert.equal(
    whole.notes.some((n) => n.includes('1 repeated content block')),
    true,
  );
  assert.deepEqual(whole.entries[1]?.links?.calls, ['t1', 't1']);
});

test('skeleton: every Codex fixture and real rollout reads the same from its skeletons, all but the text', { skip: realdataSkip }, () => {
  assert.ok(codexFixtures.length >= 8 && codexReal.length >= 2);
  for (const path of [...codexFixtures, ...codexReal]) {
    const doc = parseDocument(readFileSync(path), { path });
    const { skeleton } = readsSameFromSkeletons(doc, codexAdapter, realdataName(path));
    skeletonIsSmall(doc, skeleton, realdataName(path));
  }
});

/** Every format's detection says of the skeletons what it says of the lines. */
function sameDetection(doc: ParsedDocument, skeleton: ParsedDocument, label: string): void {
  for (const adapter of ADAPTERS) assert.equal(adapter.detect(skeleton), adapter.detect(doc), `${label}: ${adapter.name} detection`);
}

/**
 * A Gemini CLI session long enough for detection to settle (more than 50 lines): every JSONL fixture
 * four times over, so ids come back (an update), rewinds and checkpoints apply to what came before.
 */
function longGeminiSession(): string {
  const parts: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const source of geminiFixtures) {
      if (!source.endsWith('.jsonl') || source.includes('legacy')) continue;
      const text = readFileSync(source, 'utf8');
      parts.push(text.endsWith('\n') ? text : `${text}\n`);
    }
    parts.push('["not", "an", "object"]\n', `${JSON.stringify({ id: `odd-${round}`, type: 'user', role: 'user', content: 'has a role' })}\n`);
  }
  return parts.join('');
}

test('skeleton: every Gemini CLI JSONL fixture and real session, and a long one, reads the same from its skeletons, all but the text', {
  skip: realdataSkip,
}, () => {
  const long = join(freshDir('gemini-long'), 'long.jsonl');
  writeFileSync(long, longGeminiSession());
  let read = 0;
  for (const path of [...geminiFixtures, ...geminiReal, long]) {
    const doc = parseDocument(readFileSync(path), { path });
    if (doc.kind !== 'jsonl') continue;
    read++;
    readsSameFromSkeletons(doc, geminiAdapter, realdataName(path));
  }
  assert.ok(read >= 10, `${read} JSONL sessions`);
});

/**
 * A devs session long enough for detection to settle (more than 50 lines): every devs fixture's lines
 * (SAOP envelopes, malformed lines, refresh and summary turns, fields the format does not know among
 * them) four times over, with a masked tool result's placeholder and lines that are no object.
 */
function longDevsSession(): string {
  const parts: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const source of devsFixtures) {
      // A byte order mark is only one at the start of a file; past a line of glued values nothing is kept.
      if (source.includes('bom-crlf') || source.includes('malformed-lines')) continue;
      const text = readFileSync(source, 'utf8');
      parts.push(text === '' || text.endsWith('\n') ? text : `${text}\n`);
    }
    const masked = `[devs-ctx: 12,345 tokens of tool output archived; full text: devs-ctx recall --turn x${round}]`;
    parts.push(`${JSON.stringify({ id: `masked-${round}`, role: 'tool', type: 'tool_result', content: masked, extra: { kept: round } })}\n`);
    parts.push('["not", "a", "turn"]\n', '"a line that is a string"\n', '42\n', 'not json at all\n', '{"id":"cut","content":"a line cut short\n');
    parts.push(`${JSON.stringify({ id: `no-role-${round}`, type: 'message', content: 'a turn without a role' })}\n`);
  }
  return parts.join('');
}

test('skeleton: every devs fixture, and a long devs session, reads the same from its skeletons, all but the text', () => {
  assert.ok(devsFixtures.length >= 10);
  const long = join(freshDir('devs-long'), 'long.jsonl');
  writeFileSync(long, longDevsSession());
  let envelopes = 0;
  for (const path of [...devsFixtures, long]) {
    const doc = parseDocument(readFileSync(path), { path });
    const { whole, read } = readsSameFromSkeletons(doc, devsAdapter, path);
    // Fields the format does not know reach the turn as they are.
    assert.deepEqual(
      read.entries.map(({ turn: { content: _, ...rest } }) => rest),
      whole.entries.map(({ turn: { content: _, ...rest } }) => rest),
      path,
    );
    // No text is left: a turn's is empty, an envelope's only joins what stands for its action and observation.
    for (const entry of read.entries) assert.ok(entry.turn.content.length <= '\nnull\nnull'.length, `${path}: ${entry.turn.id}`);
    envelopes += whole.entries.filter((e) => e.turn.content.length > 0 && e.turn.type === 'message' && e.turn.role === 'assistant').length;
  }
  assert.ok(envelopes > 0);
});

/** A counter that counts each text once for the whole file (the real counter, memoised). */
const counter = (() => {
  const exact = loadCounter('o200k_base');
  const memo = new Map<string, number>();
  return {
    count(text: string): number {
      let n = memo.get(text);
      if (n === undefined) {
        n = exact.count(text);
        memo.set(text, n);
      }
      return n;
    },
  };
})();

const settings = resolveSettings({ flags: {}, env: {} });
const ctx = { stdout: process.stdout, stderr: process.stderr, stdin: Readable.from([]), env: {}, cwd: tmp };

function sessionRun(cache: string | undefined, format?: FormatName): SessionRun {
  return {
    settings,
    format,
    strict: false,
    range: undefined,
    full: false,
    cwd: tmp,
    now: 0,
    ...(cache ? { resume: { dir: join(cache, 'resume'), schema: 'test-schema' } } : {}),
  };
}

/** One row, and how many turns were handed to the counter for it. */
async function analyzeOnce(path: string, run: SessionRun, grown: boolean): Promise<{ outcome: SessionOutcome; counted: number }> {
  let counted = 0;
  const outcome = await analyzeSession(
    path,
    run,
    {
      ctx,
      countTokens: (entries: readonly TranscriptEntry[]): EntryTokens[] => {
        counted += entries.length;
        return countEntries(entries, counter);
      },
    },
    grown,
  );
  return { outcome, counted };
}

/** The file's lines with their terminators. */
function linesOf(path: string): Buffer[] {
  const bytes = readFileSync(path);
  const lines: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const nl = bytes.indexOf(10, at);
    const end = nl === -1 ? bytes.length : nl + 1;
    lines.push(bytes.subarray(at, end));
    at = end;
  }
  return lines;
}

function stateOf(cache: string): ResumeState | undefined {
  const dir = join(cache, 'resume');
  if (!existsSync(dir)) return undefined;
  const names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile());
  if (names.length === 0) return undefined;
  return (unsealed(readFileSync(join(dir, names[0]?.name as string))) as { state: ResumeState }).state;
}

/**
 * Grows a copy of `source` through `cuts` (line counts), as an agent appends to its session: after the
 * first cut the file is read whole and its end kept, after each later one it is read on from there.
 * Every row must be the row of reading that file whole. Returns how many runs were read on.
 */
async function growThrough(source: string, cuts: readonly number[], format?: FormatName): Promise<number> {
  const lines = linesOf(source);
  const dir = freshDir('grow');
  const cache = freshDir('cache');
  mkdirSync(join(cache, 'resume'));
  const path = join(dir, basename(source));
  writeFileSync(path, '');
  let written = 0;
  let resumed = 0;
  // Of the turns read from old lines only: how many there were, and how many were counted again.
  let countedOld = 0;
  let oldTurns = 0;
  const store = ResumeStore.open(join(cache, 'resume'), 'test-schema');
  for (const [i, cut] of cuts.entries()) {
    appendFileSync(path, Buffer.concat(lines.slice(written, cut)));
    written = cut;
    const before = stateOf(cache);
    const readOn = before !== undefined ? resumeRead(path, path, store, format) : undefined;
    const grown = await analyzeOnce(path, sessionRun(cache, format), true);
    const cold = await analyzeOnce(path, sessionRun(undefined, format), false);
    assert.deepEqual(grown.outcome, cold.outcome, `${realdataName(source)} at line ${cut} (cut ${i})`);
    if (readOn !== undefined && before !== undefined && grown.outcome.kind === 'session') {
      resumed++;
      const fromNew = readOn.transcript.entries.filter((e) => e.source.records.some((r) => r >= before.records.length)).length;
      oldTurns += readOn.transcript.entries.length - fromNew;
      countedOld += grown.counted - fromNew;
      // The state moves to the new end, unless the file now ends inside a line or has a glued line.
      const now = parseDocument(readFileSync(path), { path });
      const keepable = now.records.at(-1)?.eol !== '' && now.records.every((r) => r.values.length <= 1);
      if (keepable) assert.equal(stateOf(cache)?.size, now.totalBytes, 'the state moved to the new end');
    }
  }
  // Read on: the turns of old lines mostly take their kept counts, not counted again (past a line of
  // glued values nothing is kept to read on from, by design: the file is read whole from then on).
  const glued = parseDocument(readFileSync(path), { path }).records.some((r) => r.values.length > 1);
  if (resumed > 0 && oldTurns > 20 && !glued)
    assert.ok(countedOld * 2 < oldTurns, `${realdataName(source)}: counted ${countedOld} of ${oldTurns} turns of old lines again over ${resumed} runs read on`);
  return resumed;
}

/** Cut points: a third, one line more (often half a response), a half, a few lines more, most, all. */
function cutsFor(n: number): number[] {
  const at = (share: number): number => Math.max(1, Math.floor(n * share));
  return [...new Set([at(0.3), at(0.3) + 1, at(0.5), at(0.5) + 5, at(0.8), at(0.8) + 2, n])].filter((c) => c <= n).sort((a, b) => a - b);
}

/** Each real session of a format grown through seven cuts, its format detected and given: every row as read whole. */
function testSevenCuts(sources: readonly string[], format: FormatName): void {
  for (const source of sources) {
    test(`read on from where it ended: ${realdataName(source)}: every row as read whole, at seven points of its growth`, { skip: realdataSkip }, async () => {
      const cuts = cutsFor(linesOf(source).length);
      // Detected: a short session is read whole until detection has seen all it reads (50 lines of it).
      const detected = await growThrough(source, cuts);
      if (linesOf(source).length > 100) assert.ok(detected >= 1, `${realdataName(source)}: read on ${detected} times`);
      const forced = await growThrough(source, cuts, format);
      assert.ok(forced >= 1, `${realdataName(source)}: read on ${forced} times with --format`);
    });
  }
}

/** Each file grown line by line, its format given (every row as read whole): how many runs were read on. */
async function lineByLine(sources: readonly string[], format: FormatName): Promise<number> {
  let resumed = 0;
  for (const source of sources) {
    const n = linesOf(source).length;
    resumed += await growThrough(
      source,
      Array.from({ length: n }, (_, i) => i + 1),
      format,
    );
  }
  return resumed;
}

/** A long session (detection settles) grown through seven cuts, its format detected and given: read on at least twice each way. */
async function growsLong(text: string, format: FormatName): Promise<void> {
  const long = join(freshDir(`${format}-long`), 'long.jsonl');
  writeFileSync(long, text);
  const cuts = cutsFor(linesOf(long).length);
  assert.ok((await growThrough(long, cuts)) >= 2, 'read on with the format detected');
  assert.ok((await growThrough(long, cuts, format)) >= 2, `read on with --format ${format}`);
}

testSevenCuts(claudeReal, 'claude-code');

test('read on from where it ended: every Claude Code fixture, format given, line by line', async () => {
  const resumed = await lineByLine(claudeFixtures, 'claude-code');
  assert.ok(resumed > 50, `read on ${resumed} times`);
});

testSevenCuts(codexReal, 'codex');

test('read on from where it ended: every Codex fixture, format given, line by line', async () => {
  const resumed = await lineByLine(codexFixtures, 'codex');
  assert.ok(resumed > 30, `read on ${resumed} times`);
});

test('read on from where it ended: every Gemini CLI JSONL fixture and real session, format given, line by line; a long session, detected and given', {
  skip: realdataSkip,
}, async () => {
  const jsonl = [...geminiFixtures, ...geminiReal].filter((source) => parseDocument(readFileSync(source), { path: source }).kind === 'jsonl');
  const resumed = await lineByLine(jsonl, 'gemini');
  assert.ok(resumed > 30, `read on ${resumed} times`);
  await growsLong(longGeminiSession(), 'gemini');
});

test('read on from where it ended: every devs fixture, format given, line by line; a long devs session, detected and given', async () => {
  const resumed = await lineByLine(devsFixtures, 'devs');
  assert.ok(resumed > 50, `read on ${resumed} times`);
  await growsLong(longDevsSession(), 'devs');
});

test('read on: a masked result kept from an old line still calibrates at the size its placeholder records', async () => {
  // A session a devs-ctx prune masked: the calls before the prune measured the results whole.
  const lines: unknown[] = [];
  let parent: string | null = null;
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
  const push = (value: Record<string, unknown>): void => {
    const uuid = `u${lines.length}`;
    lines.push({ ...value, uuid, parentUuid: parent, sessionId: 's', timestamp: at(lines.length) });
    parent = uuid;
  };
  let context = 30_000;
  for (let i = 0; i < 12; i++) {
    push({ type: 'user', message: { role: 'user', content: `step ${i}: read the file and fix what is wrong in it` } });
    context += 400;
    push({
      type: 'assistant',
      requestId: `r${i}`,
      message: {
        id: `m${i}a`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file: `f${i}.ts` } }],
        usage: { input_tokens: context, output_tokens: 50 },
      },
    });
    const result =
      i % 3 === 0
        ? `[devs-ctx: ${(8000 + i).toLocaleString('en-US')} tokens of tool output archived; full text: devs-ctx recall --turn u${lines.length}]`
        : `contents of f${i}.ts `.repeat(40);
    context += i % 3 === 0 ? 8000 : 300;
    push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: result }] } });
    push({
      type: 'assistant',
      requestId: `r${i}b`,
      message: {
        id: `m${i}b`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: `fixed f${i}.ts` }],
        usage: { input_tokens: context, output_tokens: 20 },
      },
    });
  }
  const source = join(freshDir('masked'), 'masked.jsonl');
  writeFileSync(source, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const resumed = await growThrough(
    source,
    Array.from({ length: lines.length }, (_, i) => i + 1),
    'claude-code',
  );
  assert.ok(resumed > 40, `read on ${resumed} times`);
});

/** A Claude Code session of `pairs` user requests and answers, each answer with the context its call recorded (none without `usage`). */
function claudeSession(
  pairs: number,
  options: { readonly usage?: (pair: number) => number; readonly start?: number; readonly parent?: string | null; readonly tag?: string } = {},
) {
  const tag = options.tag ?? 'p';
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, (options.start ?? 0) + i)).toISOString();
  const lines: Record<string, unknown>[] = [];
  let parent = options.parent ?? null;
  const push = (value: Record<string, unknown>): void => {
    const uuid = `${tag}${lines.length}`;
    lines.push({ parentUuid: parent, isSidechain: false, sessionId: 's', ...value, uuid, timestamp: at(lines.length) });
    parent = uuid;
  };
  for (let k = 0; k < pairs; k++) {
    push({ type: 'user', message: { role: 'user', content: `please do task ${tag}${k} with some words `.repeat(3) } });
    const usage = options.usage?.(k);
    push({
      type: 'assistant',
      requestId: `r-${tag}${k}`,
      message: {
        id: `m-${tag}${k}`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: `done task ${tag}${k}, here is a longer answer `.repeat((k % 5) + 1) }],
        ...(usage !== undefined ? { usage: { input_tokens: 5, cache_read_input_tokens: usage, output_tokens: 10 } } : {}),
      },
    });
  }
  return lines;
}

const jsonLines = (values: readonly unknown[]): string => values.map((v) => `${JSON.stringify(v)}\n`).join('');

test("read on: a devs-ctx prune's compact boundary stays the prune's, not one of the agent's compactions, however often the session grows after it", async () => {
  // Pruned by devs-ctx (no recorded usage, so its boundary has no calibration, only its mark), then
  // the agent goes on under it.
  const dir = freshDir('pruned');
  const path = join(dir, 'pruned.jsonl');
  writeFileSync(path, jsonLines(claudeSession(30)));
  const pruned = runCli(['prune', path, '--in-place', '--force', '--target', '500', '--no-archive', '--summarizer', 'extractive', '--embedder', 'local']);
  assert.equal(pruned.exitCode, 0, pruned.stderr);
  const kept = readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const boundary = kept.find((l) => l['subtype'] === 'compact_boundary');
  assert.ok(boundary !== undefined && boundary['devsCtx'] === true && !('devsCtxCalibration' in boundary), 'a prune boundary with only its mark');
  appendFileSync(path, jsonLines(claudeSession(15, { start: 3600, parent: kept.at(-1)?.['uuid'] as string, tag: 'n' })));
  const whole = claudeCodeAdapter.read(parseDocument(readFileSync(path), { path }));
  assert.equal(whole.lifetime?.compactions.length ?? 0, 0, 'read whole, no compaction of the agent');
  const n = linesOf(path).length;
  const resumed = await growThrough(
    path,
    Array.from({ length: n }, (_, i) => i + 1),
    'claude-code',
  );
  assert.ok(resumed > 30, `read on ${resumed} times`);
});

test('read on: a [Context Summary] turn in old lines still marks the calls made before it as measuring what was pruned', async () => {
  // Calls measured a large context; then a summary replaced it, and the user went on before the
  // agent's next calls measured the small one.
  const before = claudeSession(20, { usage: (k) => 40_000 + 700 * k });
  const last = before.at(-1)?.['uuid'] as string;
  const summary = {
    parentUuid: last,
    isSidechain: false,
    sessionId: 's',
    type: 'user',
    message: { role: 'user', content: '[Context Summary] earlier we did many tasks; go on with the next one' },
    uuid: 'summary',
    timestamp: new Date(Date.UTC(2026, 0, 1, 1)).toISOString(),
  };
  const requests = claudeSession(6, { start: 3700, parent: 'summary', tag: 'q' }).filter((l) => l['type'] === 'user');
  // Chained one after the other (their answers left out).
  requests.forEach((l, i) => {
    l['parentUuid'] = i === 0 ? 'summary' : requests[i - 1]?.['uuid'];
  });
  const after = claudeSession(4, { start: 3800, parent: requests.at(-1)?.['uuid'] as string, tag: 'a', usage: (k) => 2_000 + 300 * k });
  const source = join(freshDir('summary'), 'summary.jsonl');
  writeFileSync(source, jsonLines([...before, summary, ...requests, ...after]));
  const n = linesOf(source).length;
  const resumed = await growThrough(
    source,
    Array.from({ length: n }, (_, i) => i + 1),
    'claude-code',
  );
  assert.ok(resumed > 30, `read on ${resumed} times`);
});

/** A session to grow: the lines of a long real one (a fixture without the real data), an empty cache, where to write it. */
function sessionToGrow(name: string): { lines: Buffer[]; cache: string; path: string } {
  const source = claudeReal.find((p) => p.includes('07-')) ?? (claudeFixtures[0] as string);
  return { lines: linesOf(source), cache: freshDir('cache'), path: join(freshDir(name), 's.jsonl') };
}

/** Writes `base`, reads it whole (keeping where it ended), then appends each part in turn: every row as read whole. */
async function appendsAsWhole(name: string, base: string, appends: readonly string[], format?: FormatName, readsOn = true): Promise<void> {
  const cache = freshDir('cache');
  const path = join(freshDir(name), 's.jsonl');
  writeFileSync(path, base);
  await analyzeOnce(path, sessionRun(cache, format), true);
  let readOn = 0;
  for (const [i, append] of appends.entries()) {
    appendFileSync(path, append);
    if (stateOf(cache) !== undefined) readOn++;
    const grown = await analyzeOnce(path, sessionRun(cache, format), true);
    assert.deepEqual(grown.outcome, (await analyzeOnce(path, sessionRun(undefined, format), false)).outcome, `${name}, append ${i}`);
  }
  // The appends were read on from a kept state, not each time whole (where one could be kept).
  if (format !== undefined && readsOn) assert.ok(readOn * 2 >= appends.length, `${name}: read on ${readOn} of ${appends.length} times`);
}

test('read on: hostile appends give the rows of a whole read', async () => {
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
  const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
  const user = (uuid: string, parentUuid: string | null, content: unknown, i: number, extra: object = {}) =>
    line({ type: 'user', uuid, parentUuid, sessionId: 's', timestamp: at(i), message: { role: 'user', content }, ...extra });
  const assistant = (uuid: string, parentUuid: string | null, id: string, content: unknown, i: number, usage?: object) =>
    line({
      type: 'assistant',
      uuid,
      parentUuid,
      sessionId: 's',
      timestamp: at(i),
      requestId: `r-${id}`,
      message: { id, role: 'assistant', model: 'claude-sonnet-4-5', content, ...(usage ? { usage } : {}) },
    });
  const text = (t: string) => [{ type: 'text', text: t }];

  // A response whose two lines the chain reads in the other order once a line is written again
  // under the second (a loop), and in file order again once the chain goes on: the same lines, another text.
  await appendsAsWhole(
    'order',
    user('u0', null, 'q', 0) + assistant('a1', 'u0', 'm', text('The answer is'), 1) + assistant('a2', 'a1', 'm', text(' 42.'), 2),
    [assistant('a1', 'a2', 'm', text('The answer is'), 3), user('u9', 'a2', 'next', 4)],
    'claude-code',
  );
  // A response's later line first in the file; a side-branch result re-attached puts the context in file order.
  const call = (t: string, id: string) => [
    { type: 'text', text: t },
    { type: 'tool_use', id, name: 'Read', input: {} },
  ];
  await appendsAsWhole(
    'reattach',
    user('u0', null, 'start', 0) +
      assistant('a', 'b', 'm', call('x\n', 't9'), 2) +
      assistant('b', 'u0', 'm', call('y', 't1'), 1) +
      user('r1', 'a', [{ type: 'tool_result', tool_use_id: 't1', content: 'res' }], 3),
    [user('r9', 'b', [{ type: 'tool_result', tool_use_id: 't9', content: 'res9' }], 4), assistant('c', 'r1', 'mc', text('done'), 5)],
    'claude-code',
  );
  // A first line that does not parse, and a `]` appended: the file becomes one JSON document.
  const values = [user('u0', null, 'hello there', 0), assistant('a0', 'u0', 'm0', text('hi'), 1), user('u1', 'a0', 'more', 2)];
  // No state is kept after a first line that does not parse alone: nothing is read on.
  await appendsAsWhole('document', `[\n${values.map((v) => v.trimEnd()).join('\n,\n')}\n`, [']\n'], 'claude-code', false);
  // A carried calibration whose scale is no finite number (1e999 parses to Infinity).
  await appendsAsWhole(
    'infinite',
    `{"type":"system","subtype":"compact_boundary","uuid":"b0","parentUuid":null,"sessionId":"s","timestamp":"${at(0)}","compactMetadata":{"preTokens":1000},"devsCtxCalibration":{"overhead":5,"scale":1e999}}\n` +
      user('u1', 'b0', 'summary', 1, { isCompactSummary: true }) +
      assistant('a1', 'u1', 'm1', text('ok'), 2),
    [user('u2', 'a1', 'next question', 3)],
    'claude-code',
  );
  // A masked result whose placeholder records a size of 230 digits.
  let base = '';
  let parent: string | null = null;
  for (let i = 0; i < 6; i++) {
    base += assistant(`a${i}`, parent, `m${i}`, [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: {} }], 3 * i, {
      input_tokens: 1000 + 500 * i,
      output_tokens: 1,
    });
    const result = i === 1 ? `[devs-ctx: ${'1'.repeat(230)} tokens of tool output archived]` : `out ${i} `.repeat(30);
    base += user(`r${i}`, `a${i}`, [{ type: 'tool_result', tool_use_id: `t${i}`, content: result }], 3 * i + 1);
    parent = `r${i}`;
  }
  await appendsAsWhole('placeholder', base, [assistant('z', parent, 'mz', text('done'), 40, { input_tokens: 4300, output_tokens: 1 })], 'claude-code');
});

test('read on: hostile appends to a Codex rollout give the rows of a whole read', async () => {
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
  const line = (type: string, payload: unknown, i: number): string => `${JSON.stringify({ timestamp: at(i), type, payload })}\n`;
  const item = (payload: object, i: number): string => line('response_item', payload, i);
  const user = (text: string, i: number): string => item({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }, i);
  const usage = (input: number, output: number, reasoning: number, i: number): string =>
    line(
      'event_msg',
      {
        type: 'token_count',
        info: { last_token_usage: { input_tokens: input, output_tokens: output, reasoning_output_tokens: reasoning }, model_context_window: 272000 },
      },
      i,
    );
  const base = [
    line('session_meta', { id: 's', base_instructions: { text: 'You are Codex.' } }, 0),
    line('turn_context', { model: 'gpt-5-codex' }, 1),
    user('<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>', 2),
    user('Fix the failing test in src/a.ts', 3),
    item({ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Looking' }], encrypted_content: 'QUJD'.repeat(50) }, 4),
    item({ type: 'function_call', name: 'shell', arguments: '{"command":["npm","test"]}', call_id: 'call_1' }, 5),
    usage(3000, 80, 40, 6),
  ].join('');
  await appendsAsWhole(
    'codex',
    base,
    [
      // The call's output, for a call on an old line.
      item({ type: 'function_call_output', call_id: 'call_1', output: 'FAIL src/a.test.ts\n  expected 2, got 3' }, 7),
      // Usage no JSON can keep (1e999 is Infinity), then reasoning whose blob takes that call's reasoning tokens.
      `${JSON.stringify({ timestamp: at(8), type: 'event_msg', payload: { type: 'token_count', info: { last_token_usage: { input_tokens: 3500, output_tokens: 90, reasoning_output_tokens: 7 } } } }).replace('"reasoning_output_tokens":7', '"reasoning_output_tokens":1e999')}\n`,
      item({ type: 'reasoning', id: 'rs_2', summary: [], content: null, encrypted_content: 'WFla'.repeat(80) }, 9),
      // A new real request moves where the current turn starts: old reasoning is no longer sent.
      user('Now run the linter too', 10) + item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Lint is clean.' }] }, 11),
      // A compaction without a replacement history keeps the old user messages and adds its summary.
      line('compacted', { message: 'Summary: fixed the test, lint clean.' }, 12) + usage(900, 20, 0, 13),
      // One with a replacement history replaces everything, an old request among its items.
      line(
        'compacted',
        {
          message: '',
          replacement_history: [
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test in src/a.ts' }] },
            { type: 'compaction', encrypted_content: 'QUJD' },
            'not an item',
          ],
        },
        14,
      ),
      user('# Context from my IDE setup:\n\n## My request for Codex:\nadd a test', 15) + usage(1200, 30, 0, 16),
    ],
    'codex',
  );
});

test('read on: hostile appends to a Gemini CLI session give the rows of a whole read', async () => {
  const at = (i: number): string => new Date(Date.UTC(2026, 4, 1, 10, i)).toISOString();
  const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
  const gemini = (id: string, i: number, extra: object): string => line({ id, timestamp: at(i), type: 'gemini', model: 'gemini-3-flash-preview', ...extra });
  const tokens = (input: number, output: number): object => ({ tokens: { input, output, cached: 0, thoughts: 3, tool: 0, total: input + output } });
  const base = [
    line({ sessionId: 's-1', projectHash: 'ph', startTime: at(0), lastUpdated: at(0), kind: 'main' }),
    line({ id: 'u0', timestamp: at(1), type: 'user', content: [{ text: '<session_context>\nlinux\n</session_context>' }] }),
    line({ id: 'u1', timestamp: at(2), type: 'user', content: 'run the tests' }),
    gemini('g1', 3, {
      content: '',
      thoughts: [{ subject: 'Plan' }],
      toolCalls: [{ id: 'sh-1', name: 'run_shell_command', args: { command: 'npm test' }, status: 'executing' }],
      tokens: null,
    }),
  ].join('');
  await appendsAsWhole(
    'gemini',
    base,
    [
      // The same id again: its tool call now has a result, and tokens arrive (last version, first place).
      gemini('g1', 3, {
        content: 'Running them.',
        thoughts: [{ subject: 'Plan' }, { subject: 'Run' }],
        toolCalls: [
          {
            id: 'sh-1',
            name: 'run_shell_command',
            args: { command: 'npm test' },
            status: 'success',
            result: [{ functionResponse: { id: 'sh-1', name: 'run_shell_command', response: { output: '1 failing' } } }],
          },
        ],
        ...tokens(1200, 40),
      }),
      line({ id: 'u2', timestamp: at(4), type: 'user', content: 'fix it' }) +
        gemini('g2', 5, { content: [{ text: 'thinking', thought: true }], ...tokens(1400, 0) }),
      // Back to before u2, then a new answer; a rewind to an id that is not there.
      line({ $rewindTo: 'u2' }) +
        line({ $rewindTo: 'nowhere' }) +
        gemini('g3', 6, { content: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }], ...tokens(1500, 60) }),
      // While that answer (inline data only) is an old line: a call whose result is null, one whose result is empty.
      gemini('g4', 6, {
        content: '',
        toolCalls: [
          { id: 'r-1', name: 'read_file', result: null },
          { id: 'r-2', name: 'read_file', result: [] },
        ],
        ...tokens(1600, 5),
      }),
      line({ id: 'u3', timestamp: at(7), type: 'user', content: 'and now?' }),
      // Tokens whose only count is the total (the last usage all the same), then more lines after them.
      gemini('g5', 7, { content: 'short', tokens: { input: 0, output: 7, total: 7 } }),
      line({ id: 'u4', timestamp: at(8), type: 'user', content: 'thanks' }),
      // Negative zero, which a state (JSON) keeps as 0.
      '{"id":"g6","type":"gemini","content":"z","tokens":{"input":-0,"output":-0,"total":50}}\n',
      line({ id: 'u5', timestamp: at(9), type: 'user', content: 'bye' }),
      // A compression's checkpoint replaces the list; a one-line legacy document replaces it again.
      line({ $set: { lastUpdated: at(7) } }) +
        line({
          $set: {
            messages: [
              { id: 'c1', type: 'user', content: [{ text: '<state_snapshot>goal</state_snapshot>' }] },
              { id: 'c2', type: 'gemini', content: 'ok' },
              7,
            ],
          },
        }),
      line({
        sessionId: 's-1',
        projectHash: 'ph',
        messages: [
          { id: 'm1', type: 'user', content: 'again' },
          { id: 'g1', type: 'gemini', content: '', toolCalls: [{ name: 'x', result: [] }, 5] },
        ],
      }),
      line({ id: 'c2', timestamp: at(9), type: 'gemini', content: 'updated after the document', ...tokens(300, 10) }) +
        '{"unrecognised": true}\n' +
        '"a string"\n',
    ],
    'gemini',
  );
});

test('read on: turns not sent (earlier reasoning) are kept too: only the turns of new lines are counted, a compacted line is not read again', async () => {
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
  const line = (type: string, payload: unknown, i: number): string => `${JSON.stringify({ timestamp: at(i), type, payload })}\n`;
  const message = (role: string, text: string) => ({ type: 'message', role, content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }] });
  const reasoning = (id: string) => ({
    type: 'reasoning',
    id,
    summary: [{ type: 'summary_text', text: `thinking ${id}` }],
    encrypted_content: 'QUJD'.repeat(20),
  });
  const cache = freshDir('cache');
  const path = join(freshDir('not-sent'), 's.jsonl');
  writeFileSync(
    path,
    [
      line('session_meta', { id: 's', base_instructions: { text: 'You are Codex.' } }, 0),
      line('response_item', message('user', 'first request'), 1),
      line('response_item', reasoning('rs_1'), 2),
      line('response_item', message('assistant', 'first answer'), 3),
      // A compaction whose history holds reasoning of an earlier turn and a long answer.
      line(
        'compacted',
        {
          message: '',
          replacement_history: [
            message('user', 'first request'),
            reasoning('rs_0'),
            message('assistant', 'long answer '.repeat(500)),
            message('user', 'second request'),
            message('assistant', 'ok'),
          ],
        },
        4,
      ),
      line('response_item', reasoning('rs_2'), 5),
    ].join(''),
  );
  await analyzeOnce(path, sessionRun(cache, 'codex'), true);
  for (let i = 0; i < 4; i++) {
    appendFileSync(path, line('response_item', message(i % 2 === 0 ? 'user' : 'assistant', `more ${i}`), 6 + i));
    const grown = await analyzeOnce(path, sessionRun(cache, 'codex'), true);
    assert.deepEqual(grown.outcome, (await analyzeOnce(path, sessionRun(undefined, 'codex'), false)).outcome, `append ${i}`);
    // From the second run on, the state holds every old turn, sent or not: one new line, one count.
    if (i > 0) assert.equal(grown.counted, 1, `append ${i}: counted ${grown.counted}`);
  }
});

test('read on: a file whose old bytes changed, that shrank, or whose state is of another schema is read whole', { skip: realdataSkip }, async () => {
  const { lines, cache, path } = sessionToGrow('changed');
  writeFileSync(path, Buffer.concat(lines.slice(0, 100)));
  await analyzeOnce(path, sessionRun(cache), true);
  const state = stateOf(cache) as ResumeState;
  assert.equal(state.size, readFileSync(path).length);
  const store = ResumeStore.open(join(cache, 'resume'), 'test-schema');
  assert.ok(resumeRead(path, path, store, undefined), 'unchanged: read on');
  assert.equal(resumeRead(path, path, ResumeStore.open(join(cache, 'resume'), 'other-schema'), undefined), undefined);

  // A damaged state (lines that do not lie end to end, a count that is no count, no JSON at all) is no state.
  const stateFile = join(cache, 'resume', readdirSync(join(cache, 'resume'))[0] as string);
  const kept = readFileSync(stateFile);
  const data = unsealed(kept) as { state: { records: [number, ...unknown[]][]; turns: Record<string, unknown[]> } };
  for (const damage of [
    (d: typeof data) => {
      (d.state.records[3] as [number])[0] += 1;
    },
    (d: typeof data) => {
      const key = Object.keys(d.state.turns)[0] as string;
      d.state.turns[key] = ['many', 0];
    },
    // Not counted is -1 for both counts, nothing below.
    (d: typeof data) => {
      const key = Object.keys(d.state.turns)[0] as string;
      d.state.turns[key] = [-1, 5];
    },
    (d: typeof data) => {
      const key = Object.keys(d.state.turns)[0] as string;
      d.state.turns[key] = [-2, -2];
    },
  ]) {
    const damaged = structuredClone(data);
    damage(damaged);
    // Sealed as devs-ctx would write it: the state itself is what is wrong.
    writeFileSync(stateFile, Buffer.concat(sealed(damaged)));
    assert.equal(resumeRead(path, path, store, undefined), undefined);
  }
  // A state changed since devs-ctx wrote it, into one that is well formed (another count): plain JSON,
  // or under the file's old seal. Either would count the old turns wrong: neither is used.
  {
    const changed = structuredClone(data);
    const key = Object.keys(changed.state.turns).find((k) => ((changed.state.turns[k] as number[])[0] as number) >= 0);
    assert.ok(key, 'a counted turn');
    const turn = changed.state.turns[key] as [number, number];
    changed.state.turns[key] = [turn[0] + 1000, turn[1]];
    const seal = kept.subarray(0, kept.indexOf(10) + 1);
    for (const bytes of [Buffer.from(JSON.stringify(changed)), Buffer.concat([seal, Buffer.from(JSON.stringify(changed))])]) {
      writeFileSync(stateFile, bytes);
      assert.equal(resumeRead(path, path, store, undefined), undefined);
    }
    writeFileSync(stateFile, Buffer.concat(sealed(changed)));
    assert.ok(resumeRead(path, path, store, undefined), 'the same state sealed: read on (so it was the change that was refused)');
  }
  writeFileSync(stateFile, '{"version":1,');
  assert.equal(resumeRead(path, path, store, undefined), undefined);
  writeFileSync(stateFile, kept);
  assert.ok(resumeRead(path, path, store, undefined), 'the state as kept: read on');
  // A turn kept while it was not sent has no counts: once it is sent, its line is read again and counted.
  {
    const notCounted = structuredClone(data);
    for (const key of Object.keys(notCounted.state.turns)) notCounted.state.turns[key] = [-1, -1];
    writeFileSync(stateFile, Buffer.concat(sealed(notCounted)));
    const read = resumeRead(path, path, store, undefined);
    assert.ok(read, 'read on');
    const tokens = await read.count((entries) => countEntries(entries, counter));
    const whole = readTranscript(parseDocument(readFileSync(path), { path }));
    assert.deepEqual(tokens, countEntries(whole.entries, counter));
    writeFileSync(stateFile, kept);
  }

  // One byte of an old line changed (same length), and lines appended: the old lines are not what the state says.
  const bytes = Buffer.concat(lines.slice(0, 120));
  const at = bytes.indexOf('"timestamp":"') + 14;
  bytes[at] = bytes[at] === 0x31 ? 0x32 : 0x31;
  writeFileSync(path, bytes);
  assert.equal(readGrown(path, state), undefined);
  assert.equal(resumeRead(path, path, store, undefined), undefined);
  const changed = await analyzeOnce(path, sessionRun(cache), true);
  const cold = await analyzeOnce(path, sessionRun(undefined), false);
  assert.deepEqual(changed.outcome, cold.outcome);
  assert.equal(changed.counted, cold.counted, 'read whole');

  // Shorter than the state: read whole.
  writeFileSync(path, Buffer.concat(lines.slice(0, 50)));
  assert.equal(resumeRead(path, path, store, undefined), undefined);
  assert.deepEqual((await analyzeOnce(path, sessionRun(cache), true)).outcome, (await analyzeOnce(path, sessionRun(undefined), false)).outcome);
});

test('read on: a last line still being written is not a place to read on from; once whole, the file is read whole again', { skip: realdataSkip }, async () => {
  const { lines, cache, path } = sessionToGrow('partial');
  const half = lines[100] as Buffer;
  writeFileSync(path, Buffer.concat([...lines.slice(0, 100), half.subarray(0, 40)]));
  const partial = await analyzeOnce(path, sessionRun(cache), true);
  assert.deepEqual(partial.outcome, (await analyzeOnce(path, sessionRun(undefined), false)).outcome);
  assert.equal(stateOf(cache), undefined, 'no state kept after a broken last line');
  appendFileSync(path, Buffer.concat([half.subarray(40), ...lines.slice(101, 110)]));
  const whole = await analyzeOnce(path, sessionRun(cache), true);
  assert.deepEqual(whole.outcome, (await analyzeOnce(path, sessionRun(undefined), false)).outcome);
  assert.equal(stateOf(cache)?.size, readFileSync(path).length);
});

test('read on: a FIFO in the file’s place is not waited on', { skip: process.platform === 'win32' }, async () => {
  const { lines, cache, path } = sessionToGrow('fifo');
  writeFileSync(path, Buffer.concat(lines.slice(0, 80)));
  await analyzeOnce(path, sessionRun(cache), true);
  const state = stateOf(cache) as ResumeState;
  rmSync(path);
  execFileSync('mkfifo', [path]);
  assert.equal(readGrown(path, state), undefined);
});

/**
 * `analyze DIR` over `sessions` sessions in three project folders, which `write` grows at each of
 * `steps` steps: a run with the caches prints what a run without them prints, rows and text; from the
 * second step on, each session has a state to read on from.
 */
function batchGrowsAsCold(sessions: number, steps: number, write: (paths: readonly string[], step: number) => void): void {
  const dir = freshDir('batch');
  const cache = freshDir('cache');
  const paths = Array.from({ length: sessions }, (_, i) => join(dir, `p${i % 3}`, `s${i}.jsonl`));
  for (const p of paths) mkdirSync(join(p, '..'), { recursive: true });
  for (let step = 0; step < steps; step++) {
    write(paths, step);
    for (const output of [['--ndjson'], []]) {
      const warm = runCli(['analyze', dir, ...output], { env: { DEVS_CTX_CACHE_DIR: cache } });
      const cold = runCli(['analyze', dir, ...output, '--no-cache']);
      assert.equal(warm.stdout, cold.stdout, `${sessions} sessions, step ${step}`);
      assert.equal(warm.exitCode, cold.exitCode);
    }
    if (step > 0) assert.equal(readdirSync(join(cache, 'resume')).length, sessions, 'a state per grown session');
  }
}

test('analyze DIR: sessions that grow between runs give the rows of a cold run, in the pool and on the main thread', { skip: realdataSkip }, () => {
  const lines = linesOf(claudeReal.find((p) => p.includes('01-')) as string);
  const cuts = [300, 420, 421, 700, lines.length];
  for (const sessions of [1, 20]) {
    // Each run, every session grew (the pool sees them all as grown).
    batchGrowsAsCold(sessions, cuts.length, (paths, step) => {
      for (const [i, p] of paths.entries()) writeFileSync(p, Buffer.concat(lines.slice(0, Math.max(1, (cuts[step] as number) - i))));
    });
  }
});

test('analyze DIR: devs, Codex and Gemini CLI sessions that grow between runs give the rows of a cold run, in the pool and on the main thread', {
  skip: realdataSkip,
}, () => {
  const devs = join(freshDir('devs-long'), 'long.jsonl');
  writeFileSync(devs, longDevsSession());
  const gemini = join(freshDir('gemini-long'), 'long.jsonl');
  writeFileSync(gemini, longGeminiSession());
  const codex = codexReal.find((p) => p.includes('01-')) as string;
  const sources = [devs, codex, gemini].map(linesOf);
  // A share of each session's lines: a third, a half, one line more, all.
  const shares = [0.3, 0.5, -1, 1];
  for (const sessions of [1, 3, 20]) {
    batchGrowsAsCold(sessions, shares.length, (paths, step) => {
      const share = shares[step] as number;
      for (const [i, p] of paths.entries()) {
        const lines = sources[i % 3] as Buffer[];
        const cut = share === -1 ? Math.floor(lines.length * 0.5) + 1 : Math.floor(lines.length * share);
        writeFileSync(p, Buffer.concat(lines.slice(0, Math.max(1, cut - Math.floor(i / 3)))));
      }
    });
  }
});
