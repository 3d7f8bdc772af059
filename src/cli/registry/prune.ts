import { defineCommand } from '../command.js';
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
const archiveSchema = (z: Zod) => z.union([z.string(), z.boolean()]).optional();

const options = [
  output('write the pruned transcript to this file (atomically; a FIFO or device is written through) instead of stdout'),
  inPlace('replace the transcript itself (locks it; the original stays until the new file is complete)'),
  boolean('--dry-run', 'print the plan (what is masked or dropped, why, tokens saved) and write nothing'),
  json('print one JSON report (with schemaVersion) on stdout; needs -o, --in-place or --dry-run'),
  force('prune even when the urgency is none'),
  target("bring the window down to this many tokens, in the model's tokens (default: half the soft limit)"),
  flag(
    '--summary-share <percent>',
    "the summary's budget as a share of the removed tokens (default 2 %, kept between 1,000 and 8,000 tokens)",
    (z) =>
      z
      .string()
      .trim()
      .regex(/^\d+(?:\.\d+)?%?$/, '--summary-share takes a percentage of the removed tokens, e.g. 3 or 3%')
      .transform((v) => Number(v.replace('%', '')))
      .refine((v) => v > 0 && v <= 50, '--summary-share must be more than 0 and at most 50 (%)')
      .optional(),
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
  flag(
    '--embedding-model <id>',
    'Gemini model for embeddings (default gemini-embedding-001; also $DEVS_CTX_EMBEDDING_MODEL)',
    (z) => z.string().trim().min(1, '--embedding-model needs a model id').optional(),
  ),
  timeout('give up on one Gemini request after this many seconds (default 60); failed requests are retried with backoff'),
  fallback('when Gemini fails, use the offline summarizer and embedder instead of exiting 5'),
  noRedact('send text to Gemini without masking API keys, tokens, private keys and passwords first'),
  boolean('-i, --interactive', 'on a terminal: show the plan, let me pin or unpin turns and change the target, then prune when I confirm'),
  yes('with --interactive: show the plan and prune without asking (also without a terminal)'),
  ...readingFlags('the token-count cache'),
] as const;
export type PruneOptions = OptionsOf<typeof options>;

export const pruneCommand = defineCommand({
  name: 'prune',
  description: 'prune a transcript: keep pinned turns, mask old tool output, drop the least relevant turns, add one summary, archive what was removed',
  arguments: [{ name: '[file]', description: 'transcript file; - (or nothing, when piped) reads standard input' }],
  options,
  examples: `
Examples:
  $ devs-ctx prune session.jsonl --dry-run
  $ devs-ctx prune session.jsonl --in-place --window 200k
  $ devs-ctx prune session.jsonl -o pruned.jsonl --strategy recency --target 100k --json
  $ cat session.jsonl | devs-ctx prune --force > pruned.jsonl
  $ devs-ctx prune session.jsonl --in-place --interactive
  $ GEMINI_API_KEY=… devs-ctx prune session.jsonl --in-place --summarizer gemini --fallback extractive

Gemini: the key comes from $GEMINI_API_KEY, $GOOGLE_API_KEY or the config file's geminiApiKey and is
never printed; $DEVS_CTX_GEMINI_BASE_URL points requests at a proxy or gateway (https, or http to
this machine). A project's devs-ctx.config.json geminiBaseUrl is ignored unless it is https and
~/.config/devs-ctx/config.json says "allowProjectGeminiBaseUrl": true.

Exit codes: 0 pruned, or nothing to do (the output is then the input, byte for byte),
2 usage error, 3 input unreadable or output not writable, 4 invalid transcript,
5 summarizer or embedder failed (nothing written), 6 pinned and protected turns alone exceed
the limit (nothing written), 7 the file is locked by another devs-ctx or open for writing
in another process (Linux), 130 interrupted before the write (nothing written).`,
  run: async ({ options, args, ctx }) => (await import('../commands/prune.js')).runPrune(args[0] as string | undefined, options, ctx),
});
