import { defineCommand } from '../command.js';
import { recallFlags } from '../flags/recall.js';

export const recallCommand = defineCommand({
  name: 'recall',
  description: 'search the turns prunes archived (full text, ranked), or print one archived turn',
  arguments: [{ name: '[query...]', description: 'words to look for' }],
  options: recallFlags,
  examples: `
Examples:
  $ devs-ctx recall "migration failed"
  $ devs-ctx recall parseConfig --file session.jsonl --json
  $ devs-ctx recall --turn toolu_01ABC

Exit codes: 0 (also when nothing matches, or no turn has the --turn id), 2 usage error, 3 archive
unreadable or damaged. The archive is opened read-only.`,
  run: async ({ options, args, ctx }) => (await import('../commands/recall.js')).runRecall(args[0] as string[], options, ctx),
});
