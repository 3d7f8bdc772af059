import { defineCommand } from '../command.js';
import { boolean, choice, flag, json, readingFlags, text, wholeNumber } from '../options.js';
import type { OptionsOf } from '../options.js';

const options = [
  json('print one JSON document (with schemaVersion) and nothing else on stdout'),
  boolean('--ndjson', 'many sessions: print one JSON line per session as it is done, then a totals line'),
  choice('--sort <key>', 'many sessions: order rows by tokens or urgency, largest first (rows then print at the end)', ['tokens', 'urgency']),
  text('--since <when>', 'many sessions: only sessions with a turn at or after this (2026-05-01, 2026-05-01T09:30Z, or an age: 12h, 7d, 2w)'),
  text('--until <when>', 'many sessions: only sessions with a turn before this (a date includes that whole day)'),
  flag(
    '--jobs <n>',
    'worker threads for many sessions, or for counting one large transcript (default: one per core; 1 = no workers)',
    wholeNumber('--jobs', 'a whole number of worker threads from 1 to 256', 1, 256),
  ),
  choice('--basis <kind>', 'the context size: auto (calibrated on the recorded API calls) or estimate (the turns in the file only)', ['auto', 'estimate']),
  ...readingFlags('the token-count cache nor the finished reports of unchanged files'),
] as const;
export type AnalyzeOptions = OptionsOf<typeof options>;

export const analyzeCommand = defineCommand({
  name: 'analyze',
  description: 'count tokens, classify pruning urgency, and show what a prune would remove',
  arguments: [{ name: '[paths...]', description: "transcript files, directories or quoted globs ('~/.claude/projects/*/*.jsonl'); - (or nothing, when piped) reads standard input" }],
  options,
  examples: `
Examples:
  $ devs-ctx analyze session.jsonl
  $ devs-ctx analyze ~/.claude/projects --since 7d --sort urgency
  $ devs-ctx analyze '~/.codex/sessions/**/*.jsonl' --ndjson | jq -c 'select(.urgency != "none")'
  $ devs-ctx analyze session.jsonl --json | jq '.urgency, .context'
  $ cat rollout.jsonl | devs-ctx analyze - --format codex

The size is the one the model sees: for a transcript that records its API usage (Claude Code,
Codex, Gemini CLI) the estimate is calibrated on those records (system prompt, tools, the model's
tokenizer); --basis estimate uses the plain estimate. Without --window or limits, the limits are
soft 50 % / hard 80 % of the window of the session's model (else 500k / 800k).

Exit codes (by that size): 0 below the soft limit, 10 soft limit reached, 11 hard limit reached,
2 usage error, 3 input unreadable, 4 invalid transcript.`,
  run: async ({ options, args, ctx }) => (await import('../commands/analyze.js')).runAnalyze(args[0] as string[], options, ctx),
});
