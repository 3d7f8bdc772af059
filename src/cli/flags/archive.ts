import { flag, json } from '../options.js';
import type { OptionsOf } from '../options.js';

export const archiveCopyFlags = [
  flag('--from <path|url>', 'the archive to copy from: a SQLite file, or postgres://user@host/db', (z) =>
    z
      .string({ error: '--from is required: the archive to copy from (a SQLite path or a postgres:// URL)' })
      .check(z.trim(), z.minLength(1, '--from needs a path or URL')),
  ),
  flag('--to <path|url>', 'the archive to copy into (created or migrated if needed)', (z) =>
    z
      .string({ error: '--to is required: the archive to copy into (a SQLite path or a postgres:// URL)' })
      .check(z.trim(), z.minLength(1, '--to needs a path or URL')),
  ),
  json('print one JSON report on stdout'),
] as const;
export type ArchiveCopyOptions = OptionsOf<typeof archiveCopyFlags>;
