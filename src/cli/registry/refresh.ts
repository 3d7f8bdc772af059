import { defineCommand } from '../command.js';
import {
  boolean,
  config,
  encoding,
  fallback,
  force,
  format,
  inPlace,
  json,
  model,
  noCache,
  noRedact,
  output,
  prd,
  refreshTokens,
  strict,
  summarizer,
  tas,
  threshold,
  timeout,
} from '../options.js';
import type { OptionsOf } from '../options.js';

const options = [
  boolean('--check', 'write nothing; exit 12 when a refresh is due, 0 when not'),
  output('write the transcript to this file (atomically; a FIFO or device is written through) instead of stdout'),
  inPlace('replace the transcript itself (locks it; the original stays until the new file is complete)'),
  json('print one JSON report (with schemaVersion) on stdout; needs --check, -o or --in-place'),
  threshold(),
  force('refresh now even when fewer turns have passed (never twice in a row)'),
  tas(),
  prd(),
  refreshTokens(),
  summarizer('who condenses a TAS/PRD over budget: extractive (an offline outline) or gemini (default: gemini when a Gemini API key is set)'),
  model('Gemini model for condensing (default gemini-3.5-flash; also $DEVS_CTX_MODEL)'),
  timeout('give up on one Gemini request after this many seconds (default 60)'),
  fallback('when Gemini fails, condense offline instead of exiting 5'),
  noRedact('send the TAS/PRD to Gemini without masking secrets first'),
  // A refresh sets no limits: the reading options without them.
  format(),
  encoding(),
  config(),
  strict(),
  noCache('the token-count and summary caches'),
] as const;
export type RefreshOptions = OptionsOf<typeof options>;

export const refreshCommand = defineCommand({
  name: 'refresh',
  description: 'append a [CONTEXT REFRESH] turn (TAS and PRD summaries) when one is due in the current orchestrator node',
  arguments: [{ name: '[file]', description: 'transcript file; - (or nothing, when piped) reads standard input' }],
  options,
  examples: `
Examples:
  $ devs-ctx refresh session.jsonl --check          # exit 12 when a refresh is due
  $ devs-ctx refresh session.jsonl --in-place       # append one when due (locked, atomic)
  $ devs-ctx refresh session.jsonl --in-place --tas docs/tas.md --prd docs/prd.md --refresh-tokens 1500
  $ devs-ctx refresh session.jsonl -o refreshed.jsonl --force --json

A refresh is due after --threshold (5) turns in the current orchestrator node (a turn's "node";
a new node starts the count again) since the last refresh. Running it twice never injects twice.

Exit codes: 0 refreshed, or nothing due (the output is then the input, byte for byte),
12 --check: a refresh is due, 2 usage error (also: no TAS or PRD to refresh with),
3 input unreadable or output not writable, 4 invalid transcript, 5 Gemini failed to condense the
TAS/PRD (nothing written), 7 the file is locked or open for writing in another process (Linux),
130 interrupted (nothing written).`,
  run: async ({ options, args, ctx }) => (await import('../commands/refresh.js')).runRefresh(args[0] as string | undefined, options, ctx),
});
