import { defineCommand } from '../command.js';
import type { CommandDefinition } from '../command.js';
import { archiveCopyFlags } from '../flags/archive.js';

const EXAMPLES = `
Examples:
  $ devs-ctx archive copy --from ~/.local/share/devs-ctx/archive.sqlite --to postgres://devs_ctx@db.internal/team
  $ devs-ctx archive copy --from "$DEVS_CTX_ARCHIVE_URL" --to backup.sqlite --json

The password in a URL is never printed (use PGPASSWORD or ~/.pgpass to keep it out of the command
line); sslmode and connect_timeout (seconds, default 10) in the URL are honoured.
Exit codes: 0 copied and verified, 2 usage error, 3 an archive unreadable or unreachable, or an event
with the same id but other content in the destination (nothing is overwritten).`;

export const archiveCommand: CommandDefinition = {
  name: 'archive',
  description: 'manage the archive itself: copy it between SQLite and PostgreSQL',
  examples: EXAMPLES,
  subcommands: [
    defineCommand({
      name: 'copy',
      description:
        'copy every prune event the destination lacks (a SQLite file or a PostgreSQL database, either way), then verify counts and content hashes; safe to run again',
      options: archiveCopyFlags,
      examples: EXAMPLES,
      run: async ({ options, ctx }) => (await import('../commands/archive-copy.js')).runArchiveCopy(options, ctx),
    }),
  ],
};
