import { flag, json, text } from '../options.js';
import type { OptionsOf } from '../options.js';
import { eventId, readArchive } from './restore.js';

export const recallFlags = [
  flag('--turn <id>', 'print the full archived text of this turn', (z) => z.optional(z.string().check(z.minLength(1)))),
  eventId('only this prune'),
  text('--file <path>', 'only prunes of this transcript'),
  flag('--limit <n>', 'at most this many matches (default 10)', (z) =>
    z.optional(
      z
        .pipe(z.string().check(z.regex(/^\d+$/, '--limit: expected a whole number')), z.transform(Number))
        .check(z.refine((n) => n > 0 && n <= 1000, '--limit: expected 1 to 1000')),
    ),
  ),
  readArchive(),
  json('print one JSON document on stdout'),
] as const;
export type RecallOptions = OptionsOf<typeof recallFlags>;
