import { defineCommand } from '../command.js';
import { mcpFlags } from '../flags/mcp.js';

export const mcpCommand = defineCommand({
  name: 'mcp',
  description: 'serve the agent over MCP (stdio): its context status, recall of pruned and compacted turns, any turn read back, the pinned documents',
  options: mcpFlags,
  examples: `
Tools: context_status, recall (archived and compacted turns), get_turn (paged), pinned_context.
Every answer is capped in tokens (maxTokens, default 2000) and says how to get more.

Examples:
  $ claude mcp add devs-ctx -- devs-ctx mcp          # or: devs-ctx hook install --agent claude-code
  $ devs-ctx mcp --session 70d782f7-b303-4e48-9512-6bec16c37abd

Exit codes: 0 when the client closes the connection, 2 usage error.`,
  run: async ({ options, ctx }) => (await import('../commands/mcp.js')).runMcp(options, ctx),
});
