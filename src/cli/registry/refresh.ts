import { defineCommand } from '../command.js';
import { refreshFlags } from '../flags/refresh.js';

export const refreshCommand = defineCommand({
  name: 'refresh',
  description: 'append a [CONTEXT REFRESH] turn (TAS and PRD summaries) when one is due in the current orchestrator node',
  arguments: [{ name: '[file]', description: 'transcript file; - (or nothing, when piped) reads standard input' }],
  options: refreshFlags,
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
