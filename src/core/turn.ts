import * as z from 'zod/mini';
import './zod-english.js';

/** [SPEC §4] The roles a canonical turn can have. */
const TurnRoleSchema = z.enum(['system', 'user', 'assistant', 'tool']);
export type TurnRole = z.infer<typeof TurnRoleSchema>;

/** [SPEC §4] The kinds of turn; `system|prd|tas|requirements|spec|plan` are pinned by default. */
export const TurnTypeSchema = z.enum([
  'system',
  'prd',
  'tas',
  'requirements',
  'spec',
  'plan',
  'message',
  'reasoning',
  'tool_call',
  'tool_result',
  'summary',
  'refresh',
]);
export type TurnType = z.infer<typeof TurnTypeSchema>;

/**
 * One canonical turn: the native `devs` line, and what every foreign adapter produces.
 * Unknown fields are kept (loose object) so a native line round-trips.
 */
export const TurnSchema = z.looseObject({
  id: z.string().check(z.minLength(1)),
  role: TurnRoleSchema,
  type: TurnTypeSchema,
  content: z.string(),
  timestamp: z.optional(z.string()),
  pinned: z.optional(z.boolean()),
  tokenCount: z.optional(z.number().check(z.int(), z.nonnegative())),
  node: z.optional(z.string()),
});
export type ConversationTurn = z.infer<typeof TurnSchema>;

/** A SAOP envelope line (seed 004): the agent's thought/action/observation record. */
export const SaopEnvelopeSchema = z.looseObject({
  thought: z.looseObject({ reasoning: z.string() }),
  action: z.optional(z.unknown()),
  observation: z.optional(z.unknown()),
  id: z.optional(z.string()),
  node: z.optional(z.string()),
  timestamp: z.optional(z.string()),
});
export type SaopEnvelope = z.infer<typeof SaopEnvelopeSchema>;

/** Seed 001's window: the turns and their summed estimate. */
export interface ContextWindow {
  readonly turns: readonly ConversationTurn[];
  readonly totalTokenEstimate: number;
}
