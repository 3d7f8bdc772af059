import {
  boolean,
  embedder,
  fallback,
  flag,
  force,
  goal,
  inPlace,
  json,
  model,
  noRedact,
  output,
  readingFlags,
  strategy,
  summarizer,
  target,
  timeout,
  yes,
} from '../options.js';
import type { OptionsOf, Zod } from '../options.js';

/** `--archive PATH` or `--no-archive` (false). */
const archiveSchema = (z: Zod) => z.optional(z.union([z.string(), z.boolean()]));

export const pruneFlags = [
  output('write the pruned transcript to this file (atomically; a FIFO or device is written through) instead of stdout'),
  inPlace('replace the transcript itself (locks it; the original stays until the new file is complete)'),
  boolean('--dry-run', 'print the plan (what is masked or dropped, why, tokens saved) and write nothing'),
  json('print one JSON report (with schemaVersion) on stdout; needs -o, --in-place or --dry-run'),
  force('prune even when the urgency is none'),
  target("bring the window down to this many tokens, in the model's tokens (default: half the soft limit)"),
  flag('--summary-share <percent>', "the summary's budget as a share of the removed tokens (default 2 %, kept between 1,000 and 8,000 tokens)", (z) =>
    z.optional(
      z
        .pipe(
          z.string().check(z.trim(), z.regex(/^\d+(?:\.\d+)?%?$/, '--summary-share takes a percentage of the removed tokens, e.g. 3 or 3%')),
          z.transform((v: string) => Number(v.replace('%', ''))),
        )
        .check(z.refine((v) => v > 0 && v <= 50, '--summary-share must be more than 0 and at most 50 (%)')),
    ),
  ),
  strategy('which turns go first: relevance to the goal, or recency (oldest first)'),
  goal('what the agent is working on, to rank turns by (default: the latest user request or task turn)'),
  flag(
    '--archive <path|url>',
    'where to keep removed turns: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)',
    archiveSchema,
  ),
  flag('--no-archive', 'do not archive the removed turns (they then exist only in the original file)', archiveSchema),
  summarizer('who writes the summary: extractive (offline) or gemini (default: gemini when a Gemini API key is set, else extractive)'),
  embedder('how turns are ranked for --strategy relevance: local (offline) or gemini (default: gemini when a Gemini API key is set, else local)'),
  model('Gemini model for summaries (default gemini-3.5-flash; also $DEVS_CTX_MODEL)'),
  flag('--embedding-model <id>', 'Gemini model for embeddings (default gemini-embedding-001; also $DEVS_CTX_EMBEDDING_MODEL)', (z) =>
    z.optional(z.string().check(z.trim(), z.minLength(1, '--embedding-model needs a model id'))),
  ),
  timeout('give up on one Gemini request after this many seconds (default 60); failed requests are retried with backoff'),
  fallback('when Gemini fails, use the offline summarizer and embedder instead of exiting 5'),
  noRedact('send text to Gemini without masking API keys, tokens, private keys and passwords first'),
  boolean('-i, --interactive', 'on a terminal: show the plan, let me pin or unpin turns and change the target, then prune when I confirm'),
  yes('with --interactive: show the plan and prune without asking (also without a terminal)'),
  ...readingFlags('the token-count cache'),
] as const;
export type PruneOptions = OptionsOf<typeof pruneFlags>;
