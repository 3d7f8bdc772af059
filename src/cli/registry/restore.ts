import { defineCommand } from '../command.js';
import { restoreFlags } from '../flags/restore.js';

export const restoreCommand = defineCommand({
  name: 'restore',
  description: 'rebuild a transcript as it was before a prune, byte for byte, from the archive',
  arguments: [{ name: '<file>', description: 'the pruned transcript' }],
  options: restoreFlags,
  examples: `
Examples:
  $ devs-ctx restore session.jsonl --in-place
  $ devs-ctx restore session.jsonl -o before-prune.jsonl --event 3f2a…

Turns appended after the prune stay at the end. Exit codes: 0 restored, 2 usage error,
3 file or archive unreadable, 4 no prune in the archive produced this file (or it changed
other than by appending), 7 --in-place: the file is locked or open for writing in another
process (Linux).`,
  run: async ({ options, args, ctx }) => (await import('../commands/restore.js')).runRestore(args[0] as string, options, ctx),
});
