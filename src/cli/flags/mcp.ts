import { agent, flag, text } from '../options.js';
import type { OptionsOf } from '../options.js';

export const mcpFlags = [
  flag('--session <id|path>', "the session to answer for (default: each call's session argument, else the newest session of this directory)", (z) =>
    z.optional(z.string().check(z.minLength(1))),
  ),
  agent("only look at this agent's sessions"),
  text(
    '--archive <path|url>',
    'the archive to search: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)',
  ),
] as const;
export type McpOptions = OptionsOf<typeof mcpFlags>;
