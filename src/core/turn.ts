import { z } from 'zod';

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
  id: z.string().min(1),
  role: TurnRoleSchema,
  type: TurnTypeSchema,
  content: z.string(),
  timestamp: z.string().optional(),
  pinned: z.boolean().optional(),
  tokenCount: z.number().int().nonnegative().optional(),
  node: z.string().optional(),
});
export type ConversationTurn = z.infer<typeof TurnSchema>;

/** A SAOP envelope line (seed 004): the agent's thought/action/observation record. */
export const SaopEnvelopeSchema = z.looseObject({
  thought: z.looseObject({ reasoning: z.string() }),
  action: z.unknown().optional(),
  observation: z.unknown().optional(),
  id: z.string().optional(),
  node: z.string().optional(),
  timestamp: z.string().optional(),
});
export type SaopEnvelope = z.infer<typeof SaopEnvelopeSchema>;

/** Seed 001's window: the turns and their summed estimate. */
export interface ContextWindow {
  readonly turns: readonly ConversationTurn[];
  readonly totalTokenEstimate: number;
}
