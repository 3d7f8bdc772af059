import { defineCommand } from '../command.js';
import type { CommandDefinition } from '../command.js';
import { flag, json } from '../options.js';
import type { OptionsOf } from '../options.js';

const EXAMPLES = `
Examples:
  $ devs-ctx archive copy --from ~/.local/share/devs-ctx/archive.sqlite --to postgres://devs_ctx@db.internal/team
  $ devs-ctx archive copy --from "$DEVS_CTX_ARCHIVE_URL" --to backup.sqlite --json

The password in a URL is never printed (use PGPASSWORD or ~/.pgpass to keep it out of the command
line); sslmode and connect_timeout (seconds, default 10) in the URL are honoured.
Exit codes: 0 copied and verified, 2 usage error, 3 an archive unreadable or unreachable, or an event
with the same id but other content in the destination (nothing is overwritten).`;

const options = [
  flag(
    '--from <path|url>',
    'the archive to copy from: a SQLite file, or postgres://user@host/db',
    (z) => z.string({ error: '--from is required: the archive to copy from (a SQLite path or a postgres:// URL)' }).trim().min(1, '--from needs a path or URL'),
  ),
  flag(
    '--to <path|url>',
    'the archive to copy into (created or migrated if needed)',
    (z) => z.string({ error: '--to is required: the archive to copy into (a SQLite path or a postgres:// URL)' }).trim().min(1, '--to needs a path or URL'),
  ),
  json('print one JSON report on stdout'),
] as const;
export type ArchiveCopyOptions = OptionsOf<typeof options>;

export const archiveCommand: CommandDefinition = {
  name: 'archive',
  description: 'manage the archive itself: copy it between SQLite and PostgreSQL',
  examples: EXAMPLES,
  subcommands: [
    defineCommand({
      name: 'copy',
      description:
        'copy every prune event the destination lacks (a SQLite file or a PostgreSQL database, either way), then verify counts and content hashes; safe to run again',
      options,
      examples: EXAMPLES,
      run: async ({ options, ctx }) => (await import('../commands/archive-copy.js')).runArchiveCopy(options, ctx),
    }),
  ],
};
