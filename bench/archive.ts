import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchTempDir } from './scratch.js';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Archive } from '../src/archive/archive.js';
import { openArchiveAt } from '../src/archive/open.js';
import type { PruneEventInput } from '../src/archive/records.js';
import { renderOutput } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';

/**
 * The archive on both stores: recall latency over 100,000 archived turns, and 8 writer processes
 * against one archive compared with one process writing the same events. PostgreSQL is PGlite
 * (WASM, one backend, transactions serialised) served over the wire in this process: it shows the
 * cost of the protocol and of the tsvector/GIN search, not a tuned server's speed.
 */

const TURNS = 100_000;
const TURNS_PER_EVENT = 1_000;
const VOCABULARY = 5_000;
const WRITERS = 8;
const EVENTS_PER_WRITER = 12;
const TURNS_PER_WRITE = 200;
/**
 * One writer, then 8, this many times in turns: each figure is the median (one round of each moved
 * with the machine's load). SQLite's take a second; PostgreSQL's about 10, and its ratio sits near 1×.
 */
const LOAD_ROUNDS = { sqlite: 3, postgres: 1 } as const;
const projectDir = dirname(dirname(fileURLToPath(import.meta.url)));

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const word = (i: number): string => `w${i.toString(36)}x`;

function syntheticEvent(id: string, turns: number, random: () => number): PruneEventInput {
  const input = parseDocument(Buffer.from('{"id":"a","content":"kept"}\n{"id":"b","content":"dropped"}\n'), { path: id, keepRaw: true });
  const records = [{ from: 0 }];
  return {
    id,
    createdAt: new Date().toISOString(),
    sourcePath: `/bench/${id}.jsonl`,
    format: 'devs',
    strategy: 'relevance',
    targetTokens: 1000,
    urgency: 'hard',
    tokensBefore: turns * 60,
    tokensAfter: 1000,
    removedTurnCount: turns,
    maskedTurnCount: 0,
    tokensSaved: turns * 60 - 1000,
    input,
    output: { records, bytes: renderOutput(input, records) },
    turns: Array.from({ length: turns }, (_, i) => ({
      entryIndex: i + 1,
      turnId: `${id}-t${i}`,
      role: 'assistant',
      type: 'message',
      action: 'dropped' as const,
      tokens: 60,
      records: [1],
      // Zipf-like: a few common words, a long tail.
      content: Array.from({ length: 40 }, () => word(Math.floor(VOCABULARY * random() ** 3))).join(' '),
    })),
  };
}

async function postgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://bench:bench@${server.getServerConn()}/postgres?sslmode=disable`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function recallMedianMs(archive: Archive): Promise<number> {
  const random = prng(7);
  const queries = Array.from({ length: 30 }, (_, i) =>
    i % 3 === 0
      ? `${word(Math.floor(200 * random()))} ${word(Math.floor(2000 * random()))}`
      : i % 3 === 1
        ? word(Math.floor(VOCABULARY * random()))
        : `${word(Math.floor(50 * random())).slice(0, 3)}*`,
  );
  await archive.recall(queries[0] ?? 'x'); // SQLite indexes pending turns on the first recall: not timed
  const times: number[] = [];
  for (const q of queries) {
    const start = performance.now();
    await archive.recall(q, { limit: 10 });
    times.push(performance.now() - start);
  }
  return median(times);
}

// A writer opens the archive (migrations run by the first), says `ready`, waits for `go` on stdin,
// writes its events, closes the archive and says `done`: the write phase is timed from the last
// `go` to the last `done`, apart from the processes' start-up (8 Node start-ups on 2 cores cost more
// than the writes themselves).
const WRITER = `
const { createInterface } = await import('node:readline');
const { openArchiveAt } = await import(process.env.OPEN_URL);
const { parseDocument } = await import(process.env.JSONL_URL);
const { renderOutput } = await import(process.env.WRITE_URL);
const archive = await openArchiveAt(process.env.ARCHIVE);
const input = parseDocument(Buffer.from('{"id":"a","content":"kept"}\\n{"id":"b","content":"dropped"}\\n'), { path: 'w', keepRaw: true });
const records = [{ from: 0 }];
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write('ready\\n');
await lines.next();
for (let e = 0; e < Number(process.env.EVENTS); e++) {
  const id = process.env.WORKER + '-' + e;
  await archive.recordPrune({ id, createdAt: new Date().toISOString(), sourcePath: '/bench/' + process.env.WORKER, format: 'devs', strategy: 'budget',
    targetTokens: 1, urgency: 'hard', tokensBefore: 1, tokensAfter: 1, removedTurnCount: 1, maskedTurnCount: 0, tokensSaved: 0,
    input, output: { records, bytes: renderOutput(input, records) },
    turns: Array.from({ length: Number(process.env.TURNS) }, (_, i) => ({ entryIndex: i + 1, turnId: id + '-' + i, role: 'user', type: 'message', action: 'dropped', tokens: 9, records: [1], content: 'turn ' + i + ' of ' + id + ' ' + 'lorem ipsum '.repeat(20) })) });
}
await archive.close();
process.stdout.write('done\\n');
process.stdin.destroy();
`;

/** Milliseconds for `writers` processes writing `events` events each into `location` at once: in all (start-up included), and the write phase alone. */
async function writeLoadMs(location: string, writers: number, events: number): Promise<{ wall: number; writes: number }> {
  const url = (p: string): string => pathToFileURL(join(projectDir, p)).href;
  const start = performance.now();
  const children = Array.from({ length: writers }, (_, w) => {
    // The built modules (npm run bench builds first), so a writer's start-up is node's, not tsx's.
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], {
      cwd: projectDir,
      env: {
        ...process.env,
        OPEN_URL: url('dist/archive/open.js'),
        JSONL_URL: url('dist/io/jsonl.js'),
        WRITE_URL: url('dist/formats/write.js'),
        ARCHIVE: location,
        WORKER: `w${w}`,
        EVENTS: String(events),
        TURNS: String(TURNS_PER_WRITE),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // Every promise is made at spawn: what the child says is never missed.
    const said = (word: string): Promise<number> =>
      new Promise((resolve, reject) => {
        child.stdout.on('data', () => {
          if (stdout.split('\n').includes(word)) resolve(performance.now());
        });
        child.on('exit', (code) => reject(new Error(`writer ${w} exited ${code} before saying ${word}: ${stderr}`)));
      });
    const ready = said('ready');
    const done = said('done');
    const exited = new Promise<void>((resolve, reject) =>
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${w} exited ${code}: ${stderr}`)))),
    );
    return { child, ready, done, exited };
  });
  await Promise.all(children.map((c) => c.ready));
  const go = performance.now();
  for (const { child } of children) child.stdin.write('go\n');
  const doneAt = await Promise.all(children.map((c) => c.done));
  await Promise.all(children.map((c) => c.exited));
  return { wall: performance.now() - start, writes: Math.max(...doneAt) - go };
}

/** Runs both stores' measurements; returns the lines of the table to print. */
export async function archiveBench(log: (message: string) => void): Promise<string[]> {
  const dir = benchTempDir('devs-ctx-bench-archive-');
  const rows: string[][] = [['archive measurement', 'sqlite (ms)', 'postgres (ms)', 'postgres ÷ sqlite']];
  try {
    // Recall over 100,000 archived turns.
    const pg = await postgres();
    const recall: Record<string, number> = {};
    try {
      for (const [kind, location] of [
        ['sqlite', join(dir, 'recall.sqlite')],
        ['postgres', pg.url],
      ] as const) {
        log(`archive bench: archiving ${TURNS.toLocaleString('en-US')} turns in ${kind}…`);
        const archive = await openArchiveAt(location);
        const random = prng(42);
        for (let e = 0; e < TURNS / TURNS_PER_EVENT; e++) await archive.recordPrune(syntheticEvent(`e${e}`, TURNS_PER_EVENT, random));
        recall[kind] = await recallMedianMs(archive);
        await archive.close();
      }
    } finally {
      await pg.stop();
    }
    rows.push([
      `recall over ${TURNS.toLocaleString('en-US')} turns (median of 30)`,
      recall['sqlite']!.toFixed(1),
      recall['postgres']!.toFixed(1),
      `${(recall['postgres']! / recall['sqlite']!).toFixed(2)}×`,
    ]);

    // 8 writers at once vs 1 writer, the same events; in turns, each a fresh archive, medians.
    const load: Record<string, { one: { wall: number; writes: number }; many: { wall: number; writes: number } }> = {};
    for (const kind of ['sqlite', 'postgres'] as const) {
      log(`archive bench: ${WRITERS} writers vs 1 in ${kind}…`);
      const taken = { one: [] as { wall: number; writes: number }[], many: [] as { wall: number; writes: number }[] };
      for (let round = 0; round < LOAD_ROUNDS[kind]; round++) {
        for (const [key, writers, events] of [
          ['one', 1, WRITERS * EVENTS_PER_WRITER],
          ['many', WRITERS, EVENTS_PER_WRITER],
        ] as const) {
          const server = kind === 'postgres' ? await postgres() : undefined;
          try {
            taken[key].push(await writeLoadMs(server?.url ?? join(dir, `load-${key}-${round}.sqlite`), writers, events));
          } finally {
            await server?.stop();
          }
        }
      }
      const of = (runs: { wall: number; writes: number }[]) => ({ wall: median(runs.map((r) => r.wall)), writes: median(runs.map((r) => r.writes)) });
      load[kind] = { one: of(taken.one), many: of(taken.many) };
    }
    const events = WRITERS * EVENTS_PER_WRITER;
    const both = (pick: (kind: string) => number): [string, string] => [pick('sqlite').toFixed(0), pick('postgres').toFixed(0)];
    rows.push([`1 writer, ${events} prunes × ${TURNS_PER_WRITE} turns: writes`, ...both((k) => load[k]!.one.writes), '']);
    rows.push([`${WRITERS} writers at once, the same prunes: writes`, ...both((k) => load[k]!.many.writes), '']);
    // The target is on the writes: what 8 writers at once cost beyond one writing the same prunes.
    const ratio = (kind: string): number => load[kind]!.many.writes / load[kind]!.one.writes;
    const cell = (kind: string): string => `${ratio(kind).toFixed(2)}× ${ratio(kind) <= 2 ? 'PASS' : 'MISS'}`;
    rows.push([`${WRITERS} writers ÷ 1 writer, writes (target ≤ 2×)`, cell('sqlite'), cell('postgres'), '']);
    rows.push([`the same in all, with each process's start-up: 1 writer`, ...both((k) => load[k]!.one.wall), '']);
    rows.push([`  ${WRITERS} writers`, ...both((k) => load[k]!.many.wall), '']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return [
    'archive: PostgreSQL = PGlite (WASM PostgreSQL, one backend) over the wire in this process; writers are separate processes, each opening the archive;',
    `writes = from the moment every writer has opened the archive to the last one done (${WRITERS} Node start-ups on ${availableParallelism()} cores are timed apart); 1 writer and ${WRITERS} in turns, medians of ${LOAD_ROUNDS.sqlite} rounds (SQLite) and ${LOAD_ROUNDS.postgres} (PostgreSQL)`,
    ...lines,
  ];
}
