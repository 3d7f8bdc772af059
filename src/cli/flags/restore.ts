import { archiveLocation, flag, inPlace, json, output } from '../options.js';
import type { OptionsOf } from '../options.js';

/** Where restore and recall read the archive. */
export const readArchive = () =>
  archiveLocation(
    'the archive: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)',
  );

/** A prune event's id. */
export const eventId = (description: string) => flag('--event <id>', description, (z) => z.optional(z.string().check(z.minLength(1))));

export const restoreFlags = [
  output('write the restored transcript to this file (atomically; a FIFO or device is written through) instead of stdout'),
  inPlace('replace the transcript with the restored one'),
  eventId('undo this prune (default: the latest prune that produced this file)'),
  readArchive(),
  json('print one JSON report on stdout; needs -o or --in-place'),
] as const;
export type RestoreOptions = OptionsOf<typeof restoreFlags>;
