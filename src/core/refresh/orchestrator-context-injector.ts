import type { ConversationTurn, SaopEnvelope } from '../turn.js';
import type { ContextRefresher } from './context-refresher.js';

/** A new envelope whose `thought.reasoning` starts with the refresh; the input is not touched. */
export function prependRefresh(envelope: SaopEnvelope, refreshText: string): SaopEnvelope {
  return { ...envelope, thought: { ...envelope.thought, reasoning: `${refreshText}\n\n${envelope.thought.reasoning}` } };
}

/** What a refresh turn needs besides its text (ids and clocks are injected, so tests are deterministic). */
export interface RefreshTurnFields {
  readonly id: string;
  readonly node?: string | undefined;
  readonly timestamp?: string | undefined;
}

/**
 * The refresh as a native turn (type `refresh`). Role `system`: it is the orchestrator speaking, not
 * the user; the type is not pinned, so an old refresh can be pruned like any other turn.
 */
export function refreshTurn(text: string, fields: RefreshTurnFields): ConversationTurn {
  return {
    id: fields.id,
    role: 'system',
    type: 'refresh',
    content: text,
    ...(fields.timestamp !== undefined ? { timestamp: fields.timestamp } : {}),
    ...(fields.node !== undefined ? { node: fields.node } : {}),
  };
}

/**
 * [3_MCP-TAS-089] Seed 004: asks the refresher on every turn and, when a refresh is due, puts it in
 * front of the agent: prepended to a SAOP envelope's reasoning, or (for a loop that keeps canonical
 * turns) as a refresh turn appended after the turn.
 */
export class OrchestratorContextInjector {
  constructor(private readonly refresher: ContextRefresher) {}

  /** The envelope itself when no refresh is due, else a new envelope with the refresh prepended. */
  async injectIfNeeded(envelope: SaopEnvelope, turnIndex: number): Promise<SaopEnvelope> {
    const result = await this.refresher.onTurn(turnIndex);
    if (!result.refreshed || result.injectedSummary === undefined) return envelope;
    return prependRefresh(envelope, result.injectedSummary);
  }

  /** The refresh turn to append after this turn, or undefined when none is due (`fields` as a function is only called then). */
  async refreshTurnIfNeeded(turnIndex: number, fields: RefreshTurnFields | (() => RefreshTurnFields)): Promise<ConversationTurn | undefined> {
    const result = await this.refresher.onTurn(turnIndex);
    if (!result.refreshed || result.injectedSummary === undefined) return undefined;
    return refreshTurn(result.injectedSummary, typeof fields === 'function' ? fields() : fields);
  }

  /** The orchestrator moved to another node: the count starts again. */
  resetNode(): void {
    this.refresher.resetNode();
  }
}
