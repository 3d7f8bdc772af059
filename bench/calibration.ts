/**
 * The calibration check (part of `npm run bench`; alone: `node --import tsx bench/calibration.ts [dir]`).
 *
 * Over every Claude Code and Codex session under ../shared/realdata (or the given folder): cut the
 * session just before each recorded API call after the first few, read what the cut file would hold
 * (the entries before the call and the calls recorded before it), and compare `contextSize().tokens`
 * with what that call recorded. Prints the median and p90 |error| (per session: its median over its
 * cuts), and how often the urgency agrees with the recorded size's urgency (soft 50 % / hard 80 % of
 * the session's window).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countEntries } from '../src/core/accounting.js';
import { contextSize } from '../src/core/context-size.js';
import { limitsFromWindow } from '../src/core/config.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { Transcript } from '../src/core/transcript.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';

export interface CalibrationResult {
  readonly sessions: number;
  readonly cuts: number;
  readonly medianError: number;
  readonly p90Error: number;
  readonly estimateMedianError: number;
  readonly urgencyAgreement: number;
}

/** Calls before the first cut: a session's first calls have nothing before them to learn from. */
const FIRST_CUT = 2;

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 0.5))] as number;
}

function sessionsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sessionsUnder(path));
    else if (name.endsWith('.jsonl')) out.push(path);
  }
  return out;
}

const urgency = (tokens: number, window: number): number => {
  const limits = limitsFromWindow(window);
  return tokens >= limits.hard ? 2 : tokens >= limits.soft ? 1 : 0;
};

export async function runCalibration(dir: string, log: (line: string) => void = () => {}): Promise<CalibrationResult> {
  const counter = loadCounter('o200k_base');
  const perSession: number[] = [];
  const perSessionEstimate: number[] = [];
  let agree = 0;
  let judged = 0;
  let cuts = 0;
  for (const path of sessionsUnder(dir)) {
    let transcript: Transcript;
    try {
      transcript = readTranscript(parseDocument(readFileSync(path), { path }));
    } catch (error) {
      log(`  ${path}: ${String(error)}`);
      continue;
    }
    if (transcript.format !== 'claude-code' && transcript.format !== 'codex') continue;
    const usage = transcript.usage ?? [];
    if (usage.length <= FIRST_CUT) continue;
    const perEntry = countEntries(transcript.entries, counter).map((t) => t.total);
    const errors: number[] = [];
    const estimateErrors: number[] = [];
    let lastAgree = true;
    for (let k = FIRST_CUT; k < usage.length; k++) {
      const call = usage[k];
      if (!call || call.contextTokens <= 0) continue;
      const cut = { ...transcript, entries: transcript.entries.slice(0, call.entriesBefore), usage: usage.slice(0, k) };
      const size = contextSize(cut, perEntry.slice(0, call.entriesBefore));
      errors.push(Math.abs(size.tokens - call.contextTokens) / call.contextTokens);
      estimateErrors.push(Math.abs(size.estimate - call.contextTokens) / call.contextTokens);
      const window = size.window ?? 1_000_000;
      lastAgree = urgency(size.tokens, window) === urgency(call.contextTokens, window);
    }
    if (errors.length === 0) continue;
    cuts += errors.length;
    judged++;
    if (lastAgree) agree++;
    const sessionError = quantile(errors, 0.5);
    perSession.push(sessionError);
    perSessionEstimate.push(quantile(estimateErrors, 0.5));
    log(
      `  ${path.slice(dir.length + 1)}: ${errors.length} cuts, median |error| ${(sessionError * 100).toFixed(1)} %, p90 ${(quantile(errors, 0.9) * 100).toFixed(1)} %`,
    );
  }
  return {
    sessions: judged,
    cuts,
    medianError: quantile(perSession, 0.5),
    p90Error: quantile(perSession, 0.9),
    estimateMedianError: quantile(perSessionEstimate, 0.5),
    urgencyAgreement: judged === 0 ? Number.NaN : agree / judged,
  };
}

export function formatCalibration(r: CalibrationResult): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
  return (
    `calibration: ${r.sessions} session(s), ${r.cuts} cut(s): median |error| ${pct(r.medianError)} (target ≤ 3 %), ` +
    `p90 ${pct(r.p90Error)} (target ≤ 8 %), urgency agreement ${pct(r.urgencyAgreement)} (target ≥ 95 %); ` +
    `plain estimate: median |error| ${pct(r.estimateMedianError)}`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2] ?? join(fileURLToPath(new URL('..', import.meta.url)), '..', 'shared', 'realdata');
  const result = await runCalibration(dir, (line) => console.log(line));
  console.log(formatCalibration(result));
}
