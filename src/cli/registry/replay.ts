import { defineCommand } from '../command.js';
import { replayFlags } from '../flags/replay.js';

export const replayCommand = defineCommand({
  name: 'replay',
  description: 'replay a transcript through the orchestrator loop and show where prunes and refreshes would fire',
  arguments: [{ name: '<file>', description: 'transcript file (- reads standard input)' }],
  options: replayFlags,
  examples: `
Examples:
  $ devs-ctx replay session.jsonl --window 200k
  $ devs-ctx replay session.jsonl --threshold 8 --strategy recency --json | jq '.prunes, .hardLimitExceeded'

Feeds the transcript turn by turn through the orchestrator loop (offline pruner and refresher) and
shows where prunes and refreshes would fire. Writes nothing.

Exit codes: 0, 2 usage error, 3 input unreadable, 4 invalid transcript.`,
  run: async ({ options, args, ctx }) => (await import('../commands/replay.js')).runReplay(args[0] as string, options, ctx),
});
