import { defineCommand } from '../command.js';
import { flag, json, text } from '../options.js';
import type { OptionsOf } from '../options.js';
import { eventId, readArchive } from './restore.js';

const options = [
  flag('--turn <id>', 'print the full archived text of this turn', (z) => z.string().min(1).optional()),
  eventId('only this prune'),
  text('--file <path>', 'only prunes of this transcript'),
  flag(
    '--limit <n>',
    'at most this many matches (default 10)',
    (z) =>
      z
      .string()
      .regex(/^\d+$/, '--limit: expected a whole number')
      .transform(Number)
      .refine((n) => n > 0 && n <= 1000, '--limit: expected 1 to 1000')
      .optional(),
  ),
  readArchive(),
  json('print one JSON document on stdout'),
] as const;
export type RecallOptions = OptionsOf<typeof options>;

export const recallCommand = defineCommand({
  name: 'recall',
  description: 'search the turns prunes archived (full text, ranked), or print one archived turn',
  arguments: [{ name: '[query...]', description: 'words to look for' }],
  options,
  examples: `
Examples:
  $ devs-ctx recall "migration failed"
  $ devs-ctx recall parseConfig --file session.jsonl --json
  $ devs-ctx recall --turn toolu_01ABC

Exit codes: 0 (also when nothing matches, or no turn has the --turn id), 2 usage error, 3 archive
unreadable or damaged. The archive is opened read-only.`,
  run: async ({ options, args, ctx }) => (await import('../commands/recall.js')).runRecall(args[0] as string[], options, ctx),
});
