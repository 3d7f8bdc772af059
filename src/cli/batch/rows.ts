import { join, resolve } from 'node:path';
import { buildId, fileIdentity, RowCache, rowSchemaKey } from '../../io/row-cache.js';
import type { FileIdentity } from '../../io/row-cache.js';
import { STDIN } from '../../io/input.js';
import { spanInRange } from './range.js';
import { projectOf } from './session.js';
import type { SessionOutcome, SessionRun, SessionSummary } from './session.js';

/** What is kept of a row: everything but how the path was typed (the file and project are re-made from it). */
type CachedRow = Omit<SessionSummary, 'file' | 'project'>;

/** A transcript looked up in the row cache: its finished outcome, or how to remember it once analysed. */
export type RowLookup =
  | { readonly kind: 'hit'; readonly outcome: SessionOutcome }
  | {
      readonly kind: 'miss';
      readonly remember: (outcome: SessionOutcome) => void;
      /** It had a row and is at least as long now: read it on from where it ended (src/cli/batch/resume.ts). */
      readonly grown: boolean;
    }
  | { readonly kind: 'none' };

/**
 * The finished rows of earlier batch runs (src/io/row-cache.ts): a transcript whose identity is
 * unchanged is not read again. Only rows are cached: standard input, `--json` (it prints whole
 * reports) and errors are analysed every time. A hit gives what analysing the file would give, the
 * `--since`/`--until` check included (on the row's timestamps, or the file's modification time).
 */
export class BatchRows {
  readonly #cache: RowCache<CachedRow>;
  readonly #run: SessionRun;
  readonly #resume: SessionRun['resume'];

  constructor(run: SessionRun, encoding: string, cacheDir: string | undefined) {
    this.#run = run;
    const build = buildId();
    const on = cacheDir !== undefined && build !== undefined && !run.full;
    const schema = on
      ? rowSchemaKey(build, { settings: run.settings, format: run.format ?? null, strict: run.strict, encoding, basis: run.basis ?? 'auto' })
      : undefined;
    this.#cache = RowCache.open<CachedRow>(on ? cacheDir : undefined, schema);
    if (on && cacheDir !== undefined && schema !== undefined) this.#resume = { dir: join(cacheDir, 'resume'), schema };
  }

  lookup(path: string): RowLookup {
    if (!this.#cache.enabled || path === STDIN) return { kind: 'none' };
    const absolute = resolve(this.#run.cwd, path);
    const identity = fileIdentity(absolute);
    if (identity === undefined) return { kind: 'none' };
    const row = this.#cache.get(absolute, identity);
    if (row === undefined) {
      return {
        kind: 'miss',
        grown: this.#cache.grew(absolute, identity),
        remember: (outcome) => {
          if (outcome.kind !== 'session') return;
          const { file: _file, project: _project, ...kept } = outcome.summary;
          this.#cache.set(absolute, identity, kept);
        },
      };
    }
    return { kind: 'hit', outcome: this.#outcome(path, row, identity) };
  }

  #outcome(path: string, row: CachedRow, identity: FileIdentity): SessionOutcome {
    const project = projectOf(path);
    const range = this.#run.range;
    if (range) {
      const at =
        row.firstTimestamp !== null && row.lastTimestamp !== null
          ? { first: Date.parse(row.firstTimestamp), last: Date.parse(row.lastTimestamp) }
          : { first: identity.mtimeMs, last: identity.mtimeMs };
      if (!spanInRange(at, range)) return { kind: 'outOfRange', file: path, project };
    }
    return { kind: 'session', summary: { file: path, project, ...row } };
  }

  /** Where grown transcripts are read on from (the rows' schema: the same build and settings), when rows are cached. */
  get resume(): SessionRun['resume'] {
    return this.#resume;
  }

  save(): void {
    this.#cache.save();
  }
}
