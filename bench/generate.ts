/**
 * Deterministic synthetic transcripts for the benchmark: native `devs` lines mixing prose, TypeScript,
 * JSON tool output, stack traces and non-ASCII text (CJK, accented, emoji).
 *
 * Same seed and version → the same bytes (a seeded PRNG, never Math.random). Sizes are aimed in
 * o200k tokens: each kind of chunk is calibrated once with js-tiktoken (chars per token), and a turn
 * appends chunks until its estimated token budget is spent.
 *
 * `node --import tsx bench/generate.ts [DIR] [--check]` generates into DIR (default bench/.data);
 * `--check` also counts the 1M file's content with js-tiktoken and prints the result.
 */
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the output of any generator changes: `ensureBenchData` then regenerates. */
export const GENERATOR_VERSION = 1;

/** What one synthetic transcript should look like. */
export interface TranscriptSpec {
  readonly turns: number;
  readonly targetTokens: number;
  readonly seed: number;
}

/** The generated files the benchmark reads. */
export interface BenchData {
  /** ~1,000 turns, ~1M o200k tokens. */
  readonly small: string;
  /** ~10,000 turns, ~10M tokens. */
  readonly large: string;
  /** `small` plus 20 appended turns. */
  readonly appended: string;
  readonly appendedTurns: number;
}

export const SMALL: TranscriptSpec = { turns: 1_000, targetTokens: 1_000_000, seed: 0x5eed_0001 };
export const LARGE: TranscriptSpec = { turns: 10_000, targetTokens: 10_000_000, seed: 0x5eed_0010 };
export const APPENDED_TURNS = 20;
const APPEND_SEED = 0x5eed_0a99;

// ---------------------------------------------------------------------------------------------
// PRNG

/** mulberry32: tiny, fast, good enough for test data, and identical on every platform. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    chance: (p) => next() < p,
  };
}

export interface Rng {
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

// ---------------------------------------------------------------------------------------------
// Content chunks

const WORDS = (
  'the a an of to in for on with by from as at is are was were be been this that these those it its ' +
  'we you they should would could must may will can not only also then when while because although ' +
  'export exporter invoice invoices stream streams row rows header footer tax total totals line item ' +
  'items test tests failing passing build compile type types schema parser reader writer buffer chunk ' +
  'memory cache window context token tokens budget limit soft hard prune summary refresh turn turns ' +
  'agent model request response error errors retry timeout config option options flag value values ' +
  'file files path directory module function method class interface record field fields key keys ' +
  'first second next last every each some many few more less new old small large fast slow safe ' +
  'read write check verify update remove add keep move split merge sort filter map reduce parse format ' +
  'user users customer billing page report export database query index migration transaction lock ' +
  'implement refactor document review approve reject ship release deploy rollback monitor measure'
).split(' ');

const ACCENTED = [
  'café',
  'naïve',
  'résumé',
  'Zürich',
  'São Paulo',
  'façade',
  'coöperate',
  'jalapeño',
  'Ångström',
  'Dvořák',
  'Kraków',
  'smörgåsbord',
  'crème brûlée',
  'El Niño',
  'Málaga',
  'Ærø',
  'Øresund',
  'Łódź',
  'déjà vu',
  'über',
  'piñata',
  'Gödel',
  'Bézier',
  'Straße',
  'Ελλάδα',
  'Москва',
  'привет мир',
];
const EMOJI = ['🚀', '✅', '❌', '⚠️', '🔥', '🐛', '📦', '🧪', '💡', '🎉', '👍', '🙏', '😅', '🤔', '📝', '🔒', '⏱️', '🌍'];
/** Common CJK characters (Chinese and Japanese kana), picked at random into "sentences". */
const CJK = Array.from(
  '的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切板云助注低冷拉器布吧复食存跑器あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテト',
);

const TOOLS = ['read_file', 'write_file', 'run_shell', 'grep', 'list_dir', 'apply_patch', 'run_tests'];
const DIRS = ['src/billing/export', 'src/core', 'src/io', 'src/cli/commands', 'test', 'src/formats'];
const EXCEPTIONS = ['TypeError', 'RangeError', 'SyntaxError', 'Error', 'AssertionError', 'ZodError'];

function identifier(rng: Rng, parts = rng.int(1, 3)): string {
  let out = rng.pick(WORDS).replace(/[^a-z]/g, '') || 'value';
  for (let i = 1; i < parts; i++) {
    const w = rng.pick(WORDS).replace(/[^a-z]/g, '') || 'item';
    out += w.charAt(0).toUpperCase() + w.slice(1);
  }
  return out;
}

function filePath(rng: Rng): string {
  return `${rng.pick(DIRS)}/${identifier(rng, rng.int(1, 2))}.ts`;
}

function sentence(rng: Rng): string {
  const n = rng.int(6, 18);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    if (r < 0.03) words.push(`\`${filePath(rng)}\``);
    else if (r < 0.06) words.push(String(rng.int(0, 100_000)));
    else if (r < 0.08) words.push(`\`${identifier(rng)}()\``);
    else words.push(rng.pick(WORDS));
  }
  const first = words[0] ?? 'the';
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return words.join(' ') + rng.pick(['.', '.', '.', '?', '!', ':']);
}

function prose(rng: Rng): string {
  const n = rng.int(3, 7);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(sentence(rng));
  const paragraph = out.join(' ');
  return rng.chance(0.2) ? `- ${paragraph}\n- ${sentence(rng)}\n\n` : `${paragraph}\n\n`;
}

function code(rng: Rng): string {
  const name = identifier(rng, rng.int(2, 3));
  const params = Array.from({ length: rng.int(0, 3) }, () => `${identifier(rng)}: ${rng.pick(['string', 'number', 'boolean', 'readonly Row[]', 'Options'])}`);
  const lines = [
    `export ${rng.chance(0.3) ? 'async ' : ''}function ${name}(${params.join(', ')}): ${rng.pick(['void', 'number', 'string', 'Result<Row[]>', 'Promise<void>'])} {`,
  ];
  const body = rng.int(3, 12);
  for (let i = 0; i < body; i++) {
    const v = identifier(rng);
    switch (rng.int(0, 4)) {
      case 0:
        lines.push(`  const ${v} = ${identifier(rng)}.${identifier(rng)}(${rng.int(0, 999)});`);
        break;
      case 1:
        lines.push(`  if (${v} === undefined) throw new ${rng.pick(EXCEPTIONS)}('${sentence(rng).slice(0, 40)}');`);
        break;
      case 2:
        lines.push(`  for (const ${v} of ${identifier(rng)}) {`, `    total += ${v}.${identifier(rng)} ?? 0;`, '  }');
        break;
      case 3:
        lines.push(`  // ${sentence(rng)}`);
        break;
      default:
        lines.push(`  await ${identifier(rng)}({ ${identifier(rng)}: ${rng.int(0, 64)}, path: '${filePath(rng)}' });`);
    }
  }
  lines.push(`  return ${identifier(rng)};`, '}');
  return `\`\`\`ts\n${lines.join('\n')}\n\`\`\`\n\n`;
}

function jsonOutput(rng: Rng): string {
  const files = Array.from({ length: rng.int(2, 8) }, () => ({
    path: filePath(rng),
    bytes: rng.int(10, 90_000),
    modified: `2026-0${rng.int(1, 9)}-1${rng.int(0, 9)}T0${rng.int(0, 9)}:${rng.int(10, 59)}:00Z`,
    status: rng.pick(['ok', 'changed', 'failed', 'skipped']),
  }));
  const value = {
    exitCode: rng.pick([0, 0, 0, 1, 2]),
    durationMs: rng.int(3, 40_000),
    files,
    summary: { passed: rng.int(0, 400), failed: rng.int(0, 5), todo: rng.int(0, 3) },
  };
  return `${JSON.stringify(value, null, rng.chance(0.5) ? 2 : undefined)}\n`;
}

function stackTrace(rng: Rng): string {
  const lines = [`${rng.pick(EXCEPTIONS)}: Cannot read properties of undefined (reading '${identifier(rng)}')`];
  const depth = rng.int(4, 14);
  for (let i = 0; i < depth; i++) {
    lines.push(
      rng.chance(0.3)
        ? `    at node:internal/${rng.pick(['process/task_queues', 'modules/esm/loader', 'streams/readable'])}:${rng.int(10, 900)}:${rng.int(1, 60)}`
        : `    at ${identifier(rng, 2)} (/work/main/${filePath(rng)}:${rng.int(1, 800)}:${rng.int(1, 80)})`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

function nonAscii(rng: Rng): string {
  const parts: string[] = [];
  const n = rng.int(3, 8);
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    if (r < 0.4) {
      let s = '';
      const len = rng.int(8, 30);
      for (let j = 0; j < len; j++) s += rng.pick(CJK);
      parts.push(s + rng.pick(['。', '、', '！', '？']));
    } else if (r < 0.75) {
      parts.push(`${rng.pick(ACCENTED)} ${rng.pick(WORDS)} ${rng.pick(ACCENTED)}`);
    } else {
      parts.push(`${rng.pick(EMOJI)}${rng.chance(0.5) ? rng.pick(EMOJI) : ''} ${rng.pick(WORDS)}`);
    }
  }
  return `${parts.join(' ')}\n\n`;
}

const CHUNKS = { prose, code, json: jsonOutput, stack: stackTrace, nonAscii } as const;
type ChunkKind = keyof typeof CHUNKS;
const CHUNK_KINDS = Object.keys(CHUNKS) as ChunkKind[];

/** Which kinds of chunk make up each kind of turn, with weights. */
type Mix = readonly (readonly [ChunkKind, number])[];
const MIX = {
  pinned: [
    ['prose', 8],
    ['code', 1],
    ['nonAscii', 1],
  ],
  user: [
    ['prose', 7],
    ['nonAscii', 3],
  ],
  assistant: [
    ['prose', 6],
    ['code', 3],
    ['nonAscii', 1],
  ],
  reasoning: [
    ['prose', 9],
    ['code', 1],
  ],
  toolResult: [
    ['json', 4],
    ['code', 3],
    ['stack', 2],
    ['prose', 1],
  ],
} as const satisfies Record<string, Mix>;

function pickKind(rng: Rng, mix: Mix): ChunkKind {
  let total = 0;
  for (const [, w] of mix) total += w;
  let r = rng.next() * total;
  for (const [kind, w] of mix) {
    r -= w;
    if (r < 0) return kind;
  }
  return mix[0]?.[0] ?? 'prose';
}

// ---------------------------------------------------------------------------------------------
// Calibration

export type Calibration = Readonly<Record<ChunkKind, number>>;

/** Chars per o200k token for each kind of chunk, from a fixed sample counted with js-tiktoken. */
export async function calibrate(): Promise<Calibration> {
  const { getEncoding } = await import('js-tiktoken');
  const enc = getEncoding('o200k_base');
  const rng = createRng(0xca11b);
  const out = {} as Record<ChunkKind, number>;
  for (const kind of CHUNK_KINDS) {
    let text = '';
    while (text.length < 200_000) text += CHUNKS[kind](rng);
    out[kind] = text.length / enc.encode(text).length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Transcript

interface TurnPlan {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly type: 'system' | 'prd' | 'tas' | 'requirements' | 'spec' | 'plan' | 'message' | 'reasoning' | 'tool_call' | 'tool_result';
  /** Relative size; scaled so the transcript's total meets its target. */
  readonly weight: number;
  readonly mix: Mix | 'toolCall';
  readonly node?: string;
}

/** The shape of the conversation: pinned documents, then user → (reasoning, call, result)* → answer. */
function planTurns(rng: Rng, turns: number, firstIndex: number): TurnPlan[] {
  const plan: TurnPlan[] = [];
  if (firstIndex === 0) {
    plan.push({ role: 'system', type: 'system', weight: 3, mix: MIX.pinned });
    plan.push({ role: 'user', type: 'prd', weight: 8, mix: MIX.pinned });
    plan.push({ role: 'user', type: 'tas', weight: 5, mix: MIX.pinned });
    plan.push({ role: 'user', type: 'requirements', weight: 4, mix: MIX.pinned });
    plan.push({ role: 'user', type: 'spec', weight: 5, mix: MIX.pinned });
    plan.push({ role: 'assistant', type: 'plan', weight: 3, mix: MIX.pinned });
  }
  const nodes = ['plan', 'implement', 'test', 'review'];
  while (plan.length < turns) {
    const node = rng.pick(nodes);
    plan.push({ role: 'user', type: 'message', weight: 0.4 + rng.next() * 0.6, mix: MIX.user, node });
    const calls = rng.int(1, 4);
    for (let i = 0; i < calls; i++) {
      if (rng.chance(0.5)) plan.push({ role: 'assistant', type: 'reasoning', weight: 0.3 + rng.next() * 0.8, mix: MIX.reasoning, node });
      plan.push({ role: 'assistant', type: 'tool_call', weight: 0.05, mix: 'toolCall', node });
      // Tool output sizes are heavy-tailed: most are small, a few are huge.
      plan.push({ role: 'tool', type: 'tool_result', weight: 0.3 + 4 * rng.next() ** 3, mix: MIX.toolResult, node });
    }
    plan.push({ role: 'assistant', type: 'message', weight: 0.5 + rng.next() * 1.5, mix: MIX.assistant, node });
  }
  return plan.slice(0, turns);
}

function toolCallContent(rng: Rng): string {
  const tool = rng.pick(TOOLS);
  const args: Record<string, string | number> = { path: filePath(rng) };
  if (tool === 'grep') args['pattern'] = identifier(rng, 2);
  if (tool === 'run_shell') args['command'] = `npm run ${rng.pick(['test', 'build', 'lint'])} -- --grep ${identifier(rng)}`;
  if (tool === 'read_file') args['offset'] = rng.int(0, 4000);
  return `${tool} ${JSON.stringify(args)}`;
}

/** Appends chunks until the estimated tokens reach the budget; returns the text and its estimate. */
function content(rng: Rng, mix: Mix, tokenBudget: number, calibration: Calibration): { text: string; tokens: number } {
  let text = '';
  let tokens = 0;
  do {
    const kind = pickKind(rng, mix);
    const chunk = CHUNKS[kind](rng);
    text += chunk;
    tokens += chunk.length / calibration[kind];
  } while (tokens < tokenBudget);
  return { text: text.trimEnd(), tokens };
}

/** Native lines for `spec`, numbering turns from `firstIndex` (0 = a fresh transcript). */
export function* generateLines(spec: TranscriptSpec, calibration: Calibration, firstIndex = 0): Generator<string> {
  const rng = createRng(spec.seed);
  const plan = planTurns(rng, spec.turns, firstIndex);
  let totalWeight = 0;
  for (const turn of plan) totalWeight += turn.weight;
  const tokensPerWeight = spec.targetTokens / totalWeight;
  let time = Date.UTC(2026, 0, 1) + firstIndex * 60_000;
  // A turn overshoots its budget by part of a chunk; the next turns pay it back, so the total holds.
  let overshoot = 0;
  for (const [i, turn] of plan.entries()) {
    let text: string;
    if (turn.mix === 'toolCall') {
      text = toolCallContent(rng);
    } else {
      const budget = turn.weight * tokensPerWeight;
      const generated = content(rng, turn.mix, budget - overshoot, calibration);
      text = generated.text;
      overshoot = Math.max(0, overshoot + generated.tokens - budget);
    }
    const line: Record<string, string | boolean> = {
      id: `t${firstIndex + i + 1}`,
      role: turn.role,
      type: turn.type,
      content: text,
      timestamp: new Date(time).toISOString(),
    };
    if (turn.node !== undefined) line['node'] = turn.node;
    time += rng.int(1_000, 120_000);
    yield `${JSON.stringify(line)}\n`;
  }
}

/** Streams the lines to `file` through a temp file, so an interrupted run leaves no half file. */
export function writeLines(file: string, lines: Iterable<string>, flags: 'w' | 'a' = 'w'): void {
  const fd = openSync(file, flags);
  try {
    let buffer = '';
    for (const line of lines) {
      buffer += line;
      if (buffer.length > 1 << 20) {
        writeSync(fd, buffer);
        buffer = '';
      }
    }
    writeSync(fd, buffer);
  } finally {
    closeSync(fd);
  }
}

function generateFile(file: string, spec: TranscriptSpec, calibration: Calibration): void {
  const tmp = `${file}.tmp`;
  writeLines(tmp, generateLines(spec, calibration));
  renameSync(tmp, file);
}

export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * Makes sure the three transcripts exist in `dir`, regenerating all of them when one is missing or
 * the stamp (generator version and specs) differs. Returns their paths.
 */
export async function ensureBenchData(dir: string, log: (message: string) => void = () => {}): Promise<BenchData> {
  mkdirSync(dir, { recursive: true });
  const data: BenchData = {
    small: join(dir, 'transcript-1m.jsonl'),
    large: join(dir, 'transcript-10m.jsonl'),
    appended: join(dir, 'transcript-1m-plus20.jsonl'),
    appendedTurns: APPENDED_TURNS,
  };
  const stampFile = join(dir, 'stamp.json');
  const stamp = JSON.stringify({ version: GENERATOR_VERSION, small: SMALL, large: LARGE, appended: APPENDED_TURNS, appendSeed: APPEND_SEED });
  const fresh = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && [data.small, data.large, data.appended].every((file) => existsSync(file));
  if (fresh) return data;

  log('generating benchmark transcripts (once)…');
  const calibration = await calibrate();
  generateFile(data.small, SMALL, calibration);
  generateFile(data.large, LARGE, calibration);
  copyFileSync(data.small, `${data.appended}.tmp`);
  // The appended turns continue the conversation at the same average size per turn.
  const appendSpec: TranscriptSpec = { turns: APPENDED_TURNS, targetTokens: (SMALL.targetTokens / SMALL.turns) * APPENDED_TURNS, seed: APPEND_SEED };
  writeLines(`${data.appended}.tmp`, generateLines(appendSpec, calibration, SMALL.turns), 'a');
  renameSync(`${data.appended}.tmp`, data.appended);
  writeFileSync(stampFile, stamp);
  return data;
}

/** Counts every turn's content with js-tiktoken o200k (slow: for checking the generator, not the bench). */
export async function countContentTokens(file: string): Promise<{ turns: number; tokens: number; bytes: number }> {
  const { getEncoding } = await import('js-tiktoken');
  const enc = getEncoding('o200k_base');
  const text = readFileSync(file, 'utf8');
  let turns = 0;
  let tokens = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const turn = JSON.parse(line) as { content: string };
    turns++;
    tokens += enc.encode(turn.content).length;
  }
  return { turns, tokens, bytes: Buffer.byteLength(text) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '.data');
  const data = await ensureBenchData(dir, (m) => process.stderr.write(`${m}\n`));
  for (const file of [data.small, data.large, data.appended]) console.log(`${sha256File(file)}  ${file}`);
  if (args.includes('--check')) console.log(JSON.stringify(await countContentTokens(data.small)));
}

// ---------------------------------------------------------------------------------------------
// Many sessions (analyze over a directory)

/**
 * 2,000 sessions over 20 project folders: `analyze DIR` at scale. Each aims at 2,500 tokens, but turns
 * this small overshoot by part of a chunk, so a session is ~4,900 o200k tokens (9.8M, 52 MB in all).
 */
export const BATCH = { sessions: 2_000, projects: 20, tokensPerSession: 2_500, seed: 0x5eed_b000 } as const;

/**
 * Makes sure `dir/sessions-2000/` holds the batch (regenerated when its stamp differs). Each session is
 * a native transcript from `generateLines` with its own seed and 20–60 turns, in
 * `project-NN/session-NNNN.jsonl`. Returns the directory.
 */
export async function ensureBatchData(dir: string, log: (message: string) => void = () => {}): Promise<string> {
  const root = join(dir, `sessions-${BATCH.sessions}`);
  // Beside the folder, not in it: a .json file inside would be read as a transcript.
  const stampFile = `${root}.stamp`;
  const stamp = JSON.stringify({ version: GENERATOR_VERSION, batch: BATCH });
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return root;
  log(`generating ${BATCH.sessions} benchmark sessions (once)…`);
  const calibration = await calibrate();
  const rng = createRng(BATCH.seed);
  for (let i = 0; i < BATCH.sessions; i++) {
    const project = join(root, `project-${String(i % BATCH.projects).padStart(2, '0')}`);
    mkdirSync(project, { recursive: true });
    const spec: TranscriptSpec = { turns: rng.int(20, 60), targetTokens: BATCH.tokensPerSession, seed: BATCH.seed + i + 1 };
    generateFile(join(project, `session-${String(i).padStart(4, '0')}.jsonl`), spec, calibration);
  }
  writeFileSync(stampFile, stamp);
  return root;
}

// ---------------------------------------------------------------------------------------------
// A Claude Code projects folder (the peer comparison with ccusage)

/**
 * 57 sessions over 16 projects, the shape of the real folder the comparison with ccusage was first
 * made on (issue 18): Claude Code lines (user, assistant text/thinking/tool_use with usage, tool_result)
 * made from `generateLines`, in `claude/projects/-home-dev-project-NN/<sessionId>.jsonl`.
 */
export const CLAUDE_PROJECTS = { sessions: 57, projects: 16, tokensPerSession: 60_000, seed: 0x5eed_c1a0 } as const;

/** A deterministic UUID-shaped id from a number. */
function uuidOf(seed: number, i: number): string {
  const hex = createHash('sha1').update(`${seed}:${i}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Claude Code lines for one session, from the native lines of `spec`. */
export function* claudeCodeLines(spec: TranscriptSpec, calibration: Calibration, cwd: string): Generator<string> {
  const sessionId = uuidOf(spec.seed, -1);
  let parent: string | null = null;
  let context = 12_000;
  const pendingTools: string[] = [];
  let n = 0;
  for (const raw of generateLines(spec, calibration)) {
    const turn = JSON.parse(raw) as { role: string; type: string; content: string; timestamp: string };
    const uuid = uuidOf(spec.seed, n++);
    const base = { parentUuid: parent, isSidechain: false, userType: 'external', cwd, sessionId, version: '2.1.20', gitBranch: 'main' };
    let line: Record<string, unknown>;
    if (turn.role === 'assistant') {
      let content: unknown[];
      if (turn.type === 'tool_call') {
        const space = turn.content.indexOf(' ');
        const id = `toolu_${uuid.replace(/-/g, '').slice(0, 24)}`;
        pendingTools.push(id);
        content = [{ type: 'tool_use', id, name: turn.content.slice(0, space), input: JSON.parse(turn.content.slice(space + 1)) as unknown }];
      } else if (turn.type === 'reasoning') {
        content = [{ type: 'thinking', thinking: turn.content, signature: '' }];
      } else {
        content = [{ type: 'text', text: turn.content }];
      }
      const output = Math.ceil(turn.content.length / 4);
      const usage = { input_tokens: 3, cache_creation_input_tokens: 200, cache_read_input_tokens: context, output_tokens: output, service_tier: 'standard' };
      context += output + 200;
      line = {
        ...base,
        message: {
          model: 'claude-sonnet-4-5-20250929',
          id: `msg_${uuid.replace(/-/g, '').slice(0, 24)}`,
          type: 'message',
          role: 'assistant',
          content,
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
        requestId: `req_${uuid.replace(/-/g, '').slice(0, 24)}`,
        type: 'assistant',
        uuid,
        timestamp: turn.timestamp,
      };
    } else {
      const toolId = turn.role === 'tool' ? pendingTools.shift() : undefined;
      const content = toolId === undefined ? turn.content : [{ tool_use_id: toolId, type: 'tool_result', content: turn.content }];
      context += Math.ceil(turn.content.length / 4);
      line = { ...base, type: 'user', message: { role: 'user', content }, uuid, timestamp: turn.timestamp };
    }
    parent = uuid;
    yield `${JSON.stringify(line)}\n`;
  }
}

/**
 * Makes sure `dir/claude/projects/` holds the Claude Code sessions (regenerated when the stamp
 * differs). Returns the Claude config directory (`dir/claude`: ccusage's CLAUDE_CONFIG_DIR).
 */
export async function ensureClaudeProjects(dir: string, log: (message: string) => void = () => {}): Promise<string> {
  const root = join(dir, 'claude');
  const stampFile = `${root}.stamp`;
  const stamp = JSON.stringify({ version: GENERATOR_VERSION, claude: CLAUDE_PROJECTS });
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return root;
  log(`generating ${CLAUDE_PROJECTS.sessions} Claude Code sessions (once)…`);
  const calibration = await calibrate();
  const rng = createRng(CLAUDE_PROJECTS.seed);
  for (let i = 0; i < CLAUDE_PROJECTS.sessions; i++) {
    const project = `/home/dev/project-${String(i % CLAUDE_PROJECTS.projects).padStart(2, '0')}`;
    const folder = join(root, 'projects', project.replace(/[/.]/g, '-'));
    mkdirSync(folder, { recursive: true });
    const spec: TranscriptSpec = { turns: rng.int(150, 400), targetTokens: CLAUDE_PROJECTS.tokensPerSession, seed: CLAUDE_PROJECTS.seed + i + 1 };
    const file = join(folder, `${uuidOf(spec.seed, -1)}.jsonl`);
    writeLines(`${file}.tmp`, claudeCodeLines(spec, calibration, project));
    renameSync(`${file}.tmp`, file);
  }
  writeFileSync(stampFile, stamp);
  return root;
}

/**
 * One long Claude Code session (the 1M transcript's turns, as Claude Code writes them) in
 * `dir/claude-1m.jsonl`, generated once: what a status line meets in a developer's active session.
 */
export async function ensureClaudeSession(dir: string, log: (message: string) => void = () => {}): Promise<string> {
  const file = join(dir, 'claude-1m.jsonl');
  const stampFile = `${file}.stamp`;
  const stamp = JSON.stringify({ version: GENERATOR_VERSION, small: SMALL });
  if (existsSync(file) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return file;
  log('generating a 1M-token Claude Code session (once)…');
  writeLines(`${file}.tmp`, claudeCodeLines(SMALL, await calibrate(), '/home/dev/long-session'));
  renameSync(`${file}.tmp`, file);
  writeFileSync(stampFile, stamp);
  return file;
}
