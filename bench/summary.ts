/**
 * The summary case of `npm run bench` (also runnable alone: `npm run bench:summary`).
 *
 * For each real Claude Code session with a compaction (under ../shared/realdata, or the directory
 * given as the first argument), the span before its first compaction is pruned as far as it goes
 * (`prune --force --target 1`, offline), and devs-ctx's `[Context Summary]` is set beside the
 * agent's own compaction summary of the same span. Both are scored by the share of the span's
 * repeated identifiers they keep (file paths, and `backticked` names in user and assistant text,
 * each seen at least twice) and by their size in o200k tokens. Target: devs-ctx keeps at least
 * 35 % of them while its summaries, all sessions together, are no larger than the agent's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Interrupted, interruptedBy } from './measure.js';
import { benchTempDir, endOnCtrlC } from './scratch.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { SUMMARY_PREFIX } from '../src/core/prune/edit.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const projectDir = dirname(benchDir);
const cli = join(projectDir, 'bin', 'devs-ctx.js');

/** At least this share of the repeated identifiers kept by devs-ctx's summaries. */
export const SUMMARY_KEPT_TARGET = 0.35;

const FILE_PATH =
  /(?:~|\.{1,2})?(?:\/?[\w@.+-]+\/)+[\w@.+-]+\.[A-Za-z0-9]{1,8}\b|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sql|yaml|yml|toml|sh|css|scss|html|vue|svelte|lock)\b/g;
const BACKTICKED = /`([^`\n]{2,80})`/g;
const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;

export interface SessionScore {
  readonly name: string;
  readonly identifiers: number;
  readonly ours: { kept: number; tokens: number };
  readonly agent: { kept: number; tokens: number };
}

/** The span's identifiers seen at least twice in user and assistant text. */
export function repeatedIdentifiers(texts: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const raw of texts) {
    const text = raw.replace(REMINDER, '');
    const found: string[] = [];
    for (const m of text.matchAll(FILE_PATH)) found.push(m[0]);
    for (const m of text.matchAll(BACKTICKED)) if (m[1]?.trim()) found.push(m[1].trim());
    for (const id of found) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n >= 2).map(([id]) => id);
}

/** The compaction summary's text (a string, or text blocks) of one JSONL record. */
function messageText(record: Record<string, unknown>): string {
  const message = record['message'] as { content?: unknown } | undefined;
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b: unknown) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : ''))
      .join('\n');
  }
  return '';
}

/** The lines before the first compaction, and the agent's summary of them; undefined without one. */
export function firstCompaction(file: string): { span: string; agentSummary: string } | undefined {
  const lines = readFileSync(file, 'utf8').split('\n');
  let boundary = -1;
  for (const [i, line] of lines.entries()) {
    if (!line.includes('"isCompactSummary":true') && !line.includes('"compact_boundary"')) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (record['subtype'] === 'compact_boundary' && boundary < 0) boundary = i;
    if (record['isCompactSummary'] === true) {
      const end = boundary >= 0 ? boundary : i;
      return { span: `${lines.slice(0, end).join('\n')}\n`, agentSummary: messageText(record) };
    }
  }
  return undefined;
}

function jsonlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...jsonlFiles(path));
    else if (name.endsWith('.jsonl')) out.push(path);
  }
  return out;
}

/** Scores one session; undefined when it has no compaction or the span yields no summary. */
export function scoreSession(file: string, work: string): SessionScore | string | undefined {
  const found = firstCompaction(file);
  if (!found) return undefined;
  const spanFile = join(work, 'span.jsonl');
  const out = join(work, 'pruned.jsonl');
  writeFileSync(spanFile, found.span);
  const turns = readTranscript(parseDocument(Buffer.from(found.span), { path: spanFile })).entries.map((e) => e.turn);
  const ids = repeatedIdentifiers(turns.filter((t) => (t.role === 'user' || t.role === 'assistant') && t.type === 'message').map((t) => t.content));
  const run = spawnSync(process.execPath, [cli, 'prune', spanFile, '--force', '--target', '1', '--no-archive', '--no-cache', '-o', out], {
    encoding: 'utf8',
    env: { ...process.env, DEVS_CTX_CACHE_DIR: join(work, 'cache'), GEMINI_API_KEY: '', GOOGLE_API_KEY: '' },
    maxBuffer: 256 * 1024 * 1024,
  });
  if (interruptedBy(run)) throw new Interrupted();
  if (run.status !== 0) return `prune exited ${run.status ?? run.signal}: ${run.stderr.trim().split('\n')[0] ?? ''}`;
  const pruned = readTranscript(parseDocument(readFileSync(out), { path: out })).entries.map((e) => e.turn.content);
  const ours = pruned.find((c) => c.startsWith(SUMMARY_PREFIX)) ?? '';
  const counter = loadCounter('o200k_base');
  const kept = (text: string): number => ids.filter((id) => text.includes(id)).length;
  return {
    name: file,
    identifiers: ids.length,
    ours: { kept: kept(ours), tokens: counter.count(ours) },
    agent: { kept: kept(found.agentSummary), tokens: counter.count(found.agentSummary) },
  };
}

const pct = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`);

/** Runs the case over `dir` and returns the lines to print. */
export function summaryBench(dir: string): string[] {
  const work = benchTempDir('devs-ctx-bench-summary-');
  try {
    const rows: string[][] = [['session', 'ids', 'devs-ctx kept', 'devs-ctx tokens', 'agent kept', 'agent tokens']];
    const notes: string[] = [];
    let ids = 0;
    const ours = { kept: 0, tokens: 0 };
    const agent = { kept: 0, tokens: 0 };
    for (const file of jsonlFiles(dir)) {
      const score = scoreSession(file, work);
      if (score === undefined) continue;
      if (typeof score === 'string') {
        notes.push(`  ${relative(dir, file)}: ${score}`);
        continue;
      }
      ids += score.identifiers;
      ours.kept += score.ours.kept;
      ours.tokens += score.ours.tokens;
      agent.kept += score.agent.kept;
      agent.tokens += score.agent.tokens;
      rows.push([
        relative(dir, file).slice(0, 48),
        String(score.identifiers),
        pct(score.ours.kept, score.identifiers),
        String(score.ours.tokens),
        pct(score.agent.kept, score.identifiers),
        String(score.agent.tokens),
      ]);
    }
    if (rows.length === 1) return [`summary: no Claude Code session with a compaction under ${dir}`, ...notes];
    rows.push(['all', String(ids), pct(ours.kept, ids), String(ours.tokens), pct(agent.kept, ids), String(agent.tokens)]);
    const pass = ids > 0 && ours.kept / ids >= SUMMARY_KEPT_TARGET && ours.tokens <= agent.tokens;
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    const table = rows.map((r) =>
      r
        .map((c, j) => c.padEnd(widths[j] ?? 0))
        .join('  ')
        .trimEnd(),
    );
    table.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
    return [
      `summary: the span before each Claude Code session's first compaction, pruned with --force --target 1 (offline);`,
      `repeated identifiers (file paths and \`backticked\` names seen twice in user/assistant text) kept by each summary, and its o200k tokens`,
      ...table,
      `target: devs-ctx keeps ≥ ${SUMMARY_KEPT_TARGET * 100} % with total tokens ≤ the agent's: ${pass ? 'PASS' : 'MISS'}`,
      ...notes,
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  endOnCtrlC();
  const dir = process.argv[2] ?? join(projectDir, '..', 'shared', 'realdata');
  try {
    for (const line of summaryBench(dir)) console.log(line);
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    process.stderr.write('bench interrupted\n');
    process.exitCode = 130;
  }
}
