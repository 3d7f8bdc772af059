import { defineCommand } from '../command.js';
import { AGENT_NAMES } from '../../core/names.js';
import { flag } from '../options.js';
import type { OptionsOf } from '../options.js';

const options = [
  flag('--agent <name>', 'the agent that runs the hook', (z) => z.enum(AGENT_NAMES).optional(), (option) => option.choices(AGENT_NAMES).makeOptionMandatory()),
] as const;
export type AgentHookOptions = OptionsOf<typeof options>;

/** What an agent's hook runs: it never blocks the agent, so main.ts turns its usage errors into exit 0. */
export const agentHookCommand = defineCommand({
  name: 'agent-hook',
  description: "what the agents' compaction hooks run (installed by hook install --agent): reads the hook's JSON on stdin; never blocks the agent",
  arguments: [{ name: '<hook>', description: 'pre-compact (archive and index the window) or post-compact (print the re-grounding)' }],
  options,
  run: async ({ options, args, ctx }) => (await import('../commands/agent-hook.js')).runAgentHook(args[0] as string, options, ctx),
});
