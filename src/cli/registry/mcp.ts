import { defineCommand } from '../command.js';
import { agent, flag, text } from '../options.js';
import type { OptionsOf } from '../options.js';

const options = [
  flag('--session <id|path>', "the session to answer for (default: each call's session argument, else the newest session of this directory)", (z) => z.string().min(1).optional()),
  agent("only look at this agent's sessions"),
  text('--archive <path>', 'the SQLite archive (default: $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)'),
] as const;
export type McpOptions = OptionsOf<typeof options>;

export const mcpCommand = defineCommand({
  name: 'mcp',
  description: 'serve the agent over MCP (stdio): its context status, recall of pruned and compacted turns, any turn read back, the pinned documents',
  options,
  examples: `
Tools: context_status, recall (archived and compacted turns), get_turn (paged), pinned_context.
Every answer is capped in tokens (maxTokens, default 2000) and says how to get more.

Examples:
  $ claude mcp add devs-ctx -- devs-ctx mcp          # or: devs-ctx hook install --agent claude-code
  $ devs-ctx mcp --session 70d782f7-b303-4e48-9512-6bec16c37abd

Exit codes: 0 when the client closes the connection, 2 usage error.`,
  run: async ({ options, ctx }) => (await import('../commands/mcp.js')).runMcp(options, ctx),
});
