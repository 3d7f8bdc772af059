import { PINNED_TURN_TYPES } from '../policy.js';
import { SUMMARY_PREFIX } from '../prune/edit.js';
import { toolIds } from '../prune/units.js';
import type { TranscriptEntry } from '../transcript.js';
import type { ConversationTurn, TurnType } from '../turn.js';
import { DEFAULT_REFRESH_THRESHOLD, REFRESH_PREFIX } from './context-refresher.js';

/**
 * [SPEC §6 Refresh] Whether a transcript is due a refresh: the `refresh` command's decision, pure.
 * The transcript is the counter's memory, so running `refresh` twice in a row never injects twice.
 */

/**
 * A refresh turn: the native type, or a message (what devs-ctx writes in a foreign format: a user
 * line; in a SAOP envelope: its reasoning) whose text starts with the marker. A tool result or call
 * that starts with it (a `cat` of a transcript, say) is not one, and does not hold the next refresh back.
 */
export function isRefreshTurn(turn: ConversationTurn): boolean {
  return turn.type === 'refresh' || (turn.type === 'message' && turn.content.startsWith(REFRESH_PREFIX));
}

/**
 * Turns of the conversation: messages, reasoning and tool calls. Not counted: a tool result (it is
 * the observation of its call, as in one SAOP envelope), refreshes, `[Context Summary]` turns and
 * pinned project knowledge (system prompt, PRD, TAS…, `pinned: true`), which are context put in
 * front of the agent, not steps of the conversation. `OrchestratorLoop` and `replay` count the same way.
 */
export function countsTowardRefresh(turn: ConversationTurn, pinnedTypes: readonly TurnType[] = PINNED_TURN_TYPES): boolean {
  if (isRefreshTurn(turn) || turn.type === 'tool_result') return false;
  if (turn.type === 'summary' || turn.content.startsWith(SUMMARY_PREFIX)) return false;
  if (turn.pinned === true) return false;
  return !pinnedTypes.includes(turn.type);
}

export interface RefreshDecisionOptions {
  readonly threshold?: number | undefined;
  /** Due now whatever the count, except right after a refresh or while a tool call waits for its result. */
  readonly force?: boolean;
  readonly pinnedTypes?: readonly TurnType[];
  /** The id of a tool call at the end still waiting for its result (see `pendingToolCall`); a latest turn of type `tool_call` counts as one too. */
  readonly pendingToolCall?: string | undefined;
}

/**
 * A tool call in the trailing run of tool calls and results that no result in that run answers:
 * the agent is waiting for it, and nothing may come between the call and its result.
 */
export function pendingToolCall(entries: readonly TranscriptEntry[]): string | undefined {
  const answered = new Set<string>();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (!entry) continue;
    const { calls, answers } = toolIds(entry);
    const isTool = entry.turn.type === 'tool_call' || entry.turn.type === 'tool_result' || calls.length > 0 || answers.length > 0;
    if (!isTool) return undefined;
    for (const id of answers) answered.add(id);
    const open = calls.find((id) => !answered.has(id));
    if (open !== undefined) return open;
  }
  return undefined;
}

/**
 * - `due`: a refresh should be written now;
 * - `not-due`: fewer turns than the threshold since the last refresh in this node;
 * - `just-refreshed`: the latest turn of the node is a refresh (also with `force`);
 * - `waiting-for-tool`: the latest turn is a tool call without its result yet; a turn between a
 *   call and its result would break the pairing providers require, so the refresh waits.
 */
/** `unavailable`: one would be due, but there is nothing to refresh with (no TAS or PRD) or no agent to refresh. */
export type RefreshStatus = 'due' | 'not-due' | 'just-refreshed' | 'waiting-for-tool' | 'unavailable';

export interface RefreshDecision {
  readonly status: RefreshStatus;
  readonly due: boolean;
  /** The current orchestrator node (the latest `node` a turn names), or null when no turn names one. */
  readonly node: string | null;
  readonly threshold: number;
  /** Turns counted since the last refresh in this node, or since the node began. */
  readonly turnsSinceRefresh: number;
  /** Index of the last refresh turn in the current node. */
  readonly lastRefreshIndex?: number;
  /** Index of the node's first turn. */
  readonly nodeStart: number;
  /** One sentence for people. */
  readonly reason: string;
}

export function planRefresh(turns: readonly ConversationTurn[], options: RefreshDecisionOptions = {}): RefreshDecision {
  const threshold = options.threshold ?? DEFAULT_REFRESH_THRESHOLD;
  const pinnedTypes = options.pinnedTypes ?? PINNED_TURN_TYPES;
  // A turn without `node` is in the node of the turn before it (the first ones in none).
  const nodes: (string | null)[] = [];
  let carried: string | null = null;
  for (const turn of turns) {
    carried = turn.node ?? carried;
    nodes.push(carried);
  }
  const node = nodes[nodes.length - 1] ?? null;

  let nodeStart = 0;
  let lastRefreshIndex: number | undefined;
  let count = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    if (nodes[i] !== node) {
      nodeStart = i + 1;
      break;
    }
    const turn = turns[i];
    if (!turn) continue;
    if (isRefreshTurn(turn)) {
      lastRefreshIndex = i;
      break;
    }
    if (countsTowardRefresh(turn, pinnedTypes)) count++;
  }

  const where = node === null ? '' : ` in node ${node}`;
  const since = lastRefreshIndex !== undefined ? `since the last refresh${where}` : node === null ? 'in the transcript' : `since node ${node} began`;
  const base = { node, threshold, turnsSinceRefresh: count, nodeStart, ...(lastRefreshIndex !== undefined ? { lastRefreshIndex } : {}) };
  const result = (status: RefreshStatus, reason: string): RefreshDecision => ({ status, due: status === 'due', reason, ...base });

  const last = turns[turns.length - 1];
  if (options.pendingToolCall !== undefined || last?.type === 'tool_call') {
    const which = options.pendingToolCall !== undefined ? `tool call ${options.pendingToolCall}` : `the latest turn (${last?.id}), a tool call,`;
    return result('waiting-for-tool', `${which} is still waiting for its result; a refresh there would separate them`);
  }
  if (lastRefreshIndex !== undefined && count === 0) return result('just-refreshed', `the latest turn${where} is already a refresh`);
  const counted = `${count} turn${count === 1 ? '' : 's'} ${since} (threshold ${threshold})`;
  if (count >= threshold) return result('due', counted);
  if (options.force) return result('due', `${counted}; forced`);
  return result('not-due', `${counted}; due after ${threshold - count} more`);
}
