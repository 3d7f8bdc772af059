import { AGENT_NAMES } from '../../core/names.js';
import { flag } from '../options.js';
import type { OptionsOf } from '../options.js';

export const agentHookFlags = [
  flag(
    '--agent <name>',
    'the agent that runs the hook',
    (z) => z.optional(z.enum(AGENT_NAMES)),
    (option) => option.choices(AGENT_NAMES).makeOptionMandatory(),
  ),
] as const;
export type AgentHookOptions = OptionsOf<typeof agentHookFlags>;
