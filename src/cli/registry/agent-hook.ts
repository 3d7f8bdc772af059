import { defineCommand } from '../command.js';
import { agentHookFlags } from '../flags/agent-hook.js';

/** What an agent's hook runs: it never blocks the agent, so main.ts turns its usage errors into exit 0. */
export const agentHookCommand = defineCommand({
  name: 'agent-hook',
  description: "what the agents' compaction hooks run (installed by hook install --agent): reads the hook's JSON on stdin; never blocks the agent",
  arguments: [{ name: '<hook>', description: 'pre-compact (archive and index the window) or post-compact (print the re-grounding)' }],
  options: agentHookFlags,
  run: async ({ options, args, ctx }) => (await import('../commands/agent-hook.js')).runAgentHook(args[0] as string, options, ctx),
});
