import { defineCommand } from '../command.js';
import { archiveLocation, flag, inPlace, json, output } from '../options.js';
import type { OptionsOf } from '../options.js';

/** Where restore and recall read the archive. */
export const readArchive = () =>
  archiveLocation('the archive: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)');

/** A prune event's id. */
export const eventId = (description: string) => flag('--event <id>', description, (z) => z.string().min(1).optional());

const options = [
  output('write the restored transcript to this file (atomically; a FIFO or device is written through) instead of stdout'),
  inPlace('replace the transcript with the restored one'),
  eventId('undo this prune (default: the latest prune that produced this file)'),
  readArchive(),
  json('print one JSON report on stdout; needs -o or --in-place'),
] as const;
export type RestoreOptions = OptionsOf<typeof options>;

export const restoreCommand = defineCommand({
  name: 'restore',
  description: 'rebuild a transcript as it was before a prune, byte for byte, from the archive',
  arguments: [{ name: '<file>', description: 'the pruned transcript' }],
  options,
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
