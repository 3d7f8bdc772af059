import type { TextTokenCounter } from '../core/accounting.js';
import { resolveSettings } from '../core/config.js';
import type { Settings } from '../core/config.js';
import { InvalidTranscriptError, UsageError } from '../core/errors.js';
import { loadCounter } from '../core/tokens/encodings.js';
import type { EncodingName } from '../core/tokens/encodings.js';
import type { Transcript, TranscriptEntry } from '../core/transcript.js';
import type { FormatName } from '../formats/index.js';
import { loadConfig } from '../io/config.js';
import { TokenCountCache } from '../io/count-cache.js';
import { STDIN, readInput } from '../io/input.js';
import type { ParsedDocument, ReadOptions } from '../io/jsonl.js';
import { testMark } from './context.js';
import type { CliContext } from './context.js';
import type { LimitOptions } from './options.js';
import { countAcrossThreads } from './parallel-count.js';
import type { CountWorkers } from './parallel-count.js';
import { installPrebuiltRankTables } from '../io/rank-tables.js';

// Every command that counts tokens loads this module (not main.ts, so --version and --help never
// load the tokenizer): counters use the prebuilt binary rank tables from here on.
installPrebuiltRankTables();

/** Parts every command that reads a transcript shares: settings, counting, loading (its flags are in options.ts). */

/** Flags > environment > config file > defaults [SPEC §6]. */
export function settingsFor(options: LimitOptions, ctx: CliContext): { settings: Settings; file: ReturnType<typeof loadConfig> } {
  const file = loadConfig({ cwd: ctx.cwd, ...(options.config ? { explicitPath: options.config } : {}) });
  const settings = resolveSettings({
    flags: {
      ...(options.window !== undefined ? { window: options.window } : {}),
      ...(options.softLimit !== undefined ? { softLimit: options.softLimit } : {}),
      ...(options.hardLimit !== undefined ? { hardLimit: options.hardLimit } : {}),
      ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
      ...(options.agentModel !== undefined ? { agentModel: options.agentModel } : {}),
    },
    env: ctx.env,
    ...(file ? { file } : {}),
  });
  return { settings, file };
}

/** Texts to count ahead from this many characters on make the counter a bulk one. */
const BULK_PREPARE_CHARS = 1_000_000;

/** Counts through the content-hash cache; the tokenizer is only loaded when a count is missing. */
export class CachedCounter implements TextTokenCounter {
  private readonly cache: TokenCountCache;
  private counter: TextTokenCounter | undefined;

  /** `workers`: count workers started ahead (a prune's), counted on beside this thread until they end. */
  constructor(
    private readonly encoding: EncodingName,
    cacheDir: string | undefined,
    private readonly workers?: CountWorkers,
  ) {
    this.cache = TokenCountCache.open(cacheDir, encoding);
  }

  /** Counts known ahead (by `prepare`), by the text itself: no second hash. */
  readonly #known = new Map<string, number>();

  /**
   * Counts, ahead of `count`, every text of these entries (those countEntries counts) that the cache
   * does not have, across `jobs` threads when there is enough of it (a large transcript counted
   * cold); then `count` only looks them up. `alongside`: other work for this thread meanwhile (see
   * countAcrossThreads); it runs whatever there is to count.
   */
  async prepare(entries: readonly TranscriptEntry[], jobs: number, alongside?: () => Promise<void>): Promise<void> {
    const texts: string[] = [];
    for (const entry of entries) if (entry.notSent === undefined) texts.push(entry.turn.content);
    await this.#prepareTexts(texts, jobs, alongside);
  }

  /**
   * TextTokenCounter.countAlongside: these texts counted ahead on the workers still started (none
   * are started for it), while `alongside` runs here. A worker that ended meanwhile leaves its share
   * to this thread (countAcrossThreads); the work alongside failing is the error.
   */
  async countAlongside(texts: readonly string[], alongside: () => Promise<void>): Promise<void> {
    await this.#prepareTexts(texts, 1 + (this.workers?.waiting ?? 0), alongside);
  }

  async #prepareTexts(texts: readonly string[], jobs: number, alongside?: () => Promise<void>): Promise<void> {
    // Count workers waiting while this thread has other work (a prune's): they are sent the texts
    // first, and the cache is looked up while they count.
    if (alongside !== undefined && this.cache.enabled && (this.workers?.waiting ?? 0) > 0) return this.#prepareOnWorkers(texts, jobs, alongside);
    const missing: string[] = [];
    const keys: string[] = [];
    let chars = 0;
    for (const text of texts) {
      if (text.length === 0 || this.#known.has(text)) continue;
      const key = this.cache.enabled ? TokenCountCache.key(text) : '';
      const cached = this.cache.enabled ? this.cache.get(key) : undefined;
      if (cached !== undefined) {
        this.#known.set(text, cached);
        continue;
      }
      this.#known.set(text, -1);
      missing.push(text);
      keys.push(key);
      chars += text.length;
    }
    if (missing.length === 0) {
      await alongside?.();
      return;
    }
    const counts = await countAcrossThreads(missing, this.#counter(chars >= BULK_PREPARE_CHARS), this.encoding, jobs, alongside, this.workers);
    for (const [i, text] of missing.entries()) {
      const count = counts[i] as number;
      this.#known.set(text, count);
      if (this.cache.enabled) this.cache.set(keys[i] as string, count);
    }
  }

  /**
   * #prepareTexts with count workers waiting and work alongside: every text not counted yet in this
   * process goes to the workers at once, and this thread looks each up in the cache before its other
   * work. One found there is kept with the cache's count, as when the cache is looked up first (a
   * worker that reached it first counted it for nothing), and is not added to the cache again.
   */
  async #prepareOnWorkers(texts: readonly string[], jobs: number, alongside: () => Promise<void>): Promise<void> {
    const unknown: string[] = [];
    let chars = 0;
    for (const text of texts) {
      if (text.length === 0 || this.#known.has(text)) continue;
      this.#known.set(text, -1);
      unknown.push(text);
      chars += text.length;
    }
    if (unknown.length === 0) {
      await alongside();
      return;
    }
    const keys: string[] = [];
    /** Per text, the count found in the cache (undefined: none). */
    const cached: (number | undefined)[] = [];
    const lookUp = (found: (i: number, count: number) => void): void => {
      for (const [i, text] of unknown.entries()) {
        const key = TokenCountCache.key(text);
        keys.push(key);
        const count = this.cache.get(key);
        cached.push(count);
        if (count !== undefined) found(i, count);
      }
    };
    // This thread's counter is made only if it counts (the workers count all when they can).
    const bulk = chars >= BULK_PREPARE_CHARS;
    const here: TextTokenCounter = { count: (text) => this.#counter(bulk).count(text) };
    const counts = await countAcrossThreads(unknown, here, this.encoding, jobs, alongside, this.workers, lookUp);
    for (const [i, text] of unknown.entries()) {
      const found = cached[i];
      this.#known.set(text, found ?? (counts[i] as number));
      if (found === undefined) this.cache.set(keys[i] ?? TokenCountCache.key(text), counts[i] as number);
    }
  }

  /**
   * The exact counter, loaded on first use (its rank table is the slow part). `bulk`: this thread is
   * about to count a large transcript's share, and a prune then its excerpts and summary: the path
   * that is faster once compiled, from the start (see loadCounter).
   */
  #counter(bulk = false): TextTokenCounter {
    this.counter ??= loadCounter(this.encoding, { bulk });
    return this.counter;
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    const known = this.#known.get(text);
    if (known !== undefined && known >= 0) return known;
    if (!this.cache.enabled) return this.#counter().count(text);
    const key = TokenCountCache.key(text);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const counter = this.#counter();
    const count = counter.count(text);
    this.cache.set(key, count);
    return count;
  }

  save(): void {
    this.cache.save();
  }
}

export interface LoadedTranscript {
  readonly doc: ParsedDocument;
  readonly transcript: Transcript;
  /** How to name the input in messages: the path, or `(stdin)`. */
  readonly display: string;
}

/**
 * Reads and checks one transcript: an empty file, a file with no readable turn, and (under
 * --strict) any bad line are invalid transcripts (exit 4). Bytes are kept for writing back.
 */
export async function loadTranscriptInput(
  path: string,
  run: { format: FormatName | undefined; strict: boolean; ctx: CliContext; keepRaw?: boolean; digest?: ReadOptions['digest'] },
): Promise<LoadedTranscript> {
  testMark(run.ctx, 'reading');
  const doc = await readInput(path, { stdin: run.ctx.stdin, cwd: run.ctx.cwd, keepRaw: run.keepRaw === true, ...(run.digest ? { digest: run.digest } : {}) });
  const display = path === STDIN ? '(stdin)' : path;
  if (doc.records.every((r) => r.blank)) {
    throw new InvalidTranscriptError(`${display}: the transcript is empty`, 'nothing to analyse; check that the agent has written to it');
  }
  // The format readers (and their schemas) load with the first transcript read: a re-run whose
  // results all come from the cache never loads them.
  const { readTranscript } = await import('../formats/index.js');
  const transcript = readTranscript(doc, run.format);
  if (transcript.entries.length === 0 && doc.issues.length + transcript.issues.length > 0) {
    const first = [...doc.issues, ...transcript.issues][0];
    throw new InvalidTranscriptError(
      `${display}: no turn could be read (line ${first?.line}: ${first?.reason})`,
      run.format ? `is it really ${run.format}? try without --format` : 'pass --format if the format was guessed wrong',
    );
  }
  // --strict: any line the reader could not take as it is, or any the adapter rejected, is fatal.
  const badLines = run.strict ? [...doc.issues, ...transcript.issues.filter((i) => i.severity === 'error')] : [];
  const first = badLines[0];
  if (first) {
    throw new InvalidTranscriptError(
      `${display}: line ${first.line}: ${first.reason}${badLines.length > 1 ? ` (and ${badLines.length - 1} more bad line(s))` : ''}`,
      'without --strict, bad lines are reported and skipped',
    );
  }
  return { doc, transcript, display };
}

/** A target at or above the hard limit is a usage error (the window would be pruned and still hard). */
export function checkTarget(target: number, hard: number): void {
  if (target >= hard) {
    throw new UsageError(
      `--target ${target} is not below the hard limit (${hard})`,
      'the target is what a prune brings the window down to; the default is half the soft limit',
    );
  }
}
