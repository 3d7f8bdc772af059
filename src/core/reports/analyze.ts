import type { FormatName, Transcript } from '../transcript.js';
import type { EntryTokens } from '../accounting.js';
import type { Settings } from '../config.js';
import type { ReadIssue } from '../issues.js';
import { classifyPruneUrgency, partitionTurns } from '../policy.js';
import type { PruneUrgency } from '../policy.js';
import type { TurnRole, TurnType } from '../turn.js';
import { analyzeContext } from '../session-context.js';
import type { AgentCompaction, LimitSource, SessionLife } from '../session-context.js';
import type { ContextSize } from '../context-size.js';
import { inferGoal } from '../goal.js';
import { clip, clipLine } from '../text-cut.js';

/** Bumped on any breaking change to the `--json` shape of `analyze`. */
export const ANALYZE_SCHEMA_VERSION = 2;
const HEAVIEST = 10;
const PREVIEW_CHARS = 60;
const GOAL_CHARS = 300;

export interface TokenGroup {
  readonly turns: number;
  readonly tokens: number;
}

interface HeavyTurn {
  readonly index: number;
  readonly id: string;
  readonly role: TurnRole;
  readonly type: TurnType;
  readonly tokens: number;
  readonly preview: string;
}

export interface TurnTokens {
  readonly id: string;
  readonly role: TurnRole;
  readonly type: TurnType;
  readonly tokens: number;
}

export interface AnalyzeReport {
  readonly schemaVersion: number;
  readonly file: string;
  readonly format: FormatName;
  readonly encoding: string;
  readonly turns: number;
  /** Our tokenizer over the turns in the file (the estimate; `context.tokens` is what the model sees). */
  readonly totalTokens: number;
  /** The size of the next request in the model's tokens, and how it was found; urgency follows `tokens`. */
  readonly context: ContextSize & {
    /** model tokens = overhead + scale × estimated tokens, as used for this session (prune targets, growth). */
    readonly mapping: { readonly overhead: number; readonly scale: number };
  };
  readonly limits: { readonly soft: number; readonly hard: number; readonly source: LimitSource; readonly from: string };
  readonly urgency: PruneUrgency;
  /** Where the agent (Claude Code, Codex) compacts by itself, and about how many API calls away. */
  readonly agentCompaction: AgentCompaction | null;
  /** The session's whole life: peak context and the agent's compactions (with the size before each). */
  readonly lifetime: SessionLife;
  /** What a prune would rank by: the latest substantive user request (`how`: latest, task or first). */
  readonly goal: null | { readonly text: string; readonly how: 'latest' | 'task' | 'first'; readonly turn: number };
  readonly byType: Readonly<Partial<Record<TurnType, TokenGroup>>>;
  readonly byRole: Readonly<Partial<Record<TurnRole, TokenGroup>>>;
  readonly blobTokens: number;
  readonly pinned: TokenGroup & { readonly ids: readonly string[] };
  readonly protectedTail: TokenGroup;
  readonly candidates: TokenGroup;
  readonly heaviest: readonly HeavyTurn[];
  /** Every turn in context order with its tokens (the running total is the window's growth). */
  readonly perTurn: readonly TurnTokens[];
  readonly recorded: null | {
    readonly contextTokens: number;
    readonly source: string;
    readonly contextWindow?: number;
    /** estimate − recorded: negative when the file's real context holds more (system prompt, tools). */
    readonly difference: number;
    /** The urgency the recorded size would have (the exit code follows `context.tokens`). */
    readonly urgency: PruneUrgency;
  };
  readonly issues: readonly ReadIssue[];
  readonly notes: readonly string[];
}

function add<K extends string>(groups: Partial<Record<K, TokenGroup>>, key: K, tokens: number): void {
  const group = groups[key] ?? { turns: 0, tokens: 0 };
  groups[key] = { turns: group.turns + 1, tokens: group.tokens + tokens };
}

function group(indexes: readonly number[], tokens: readonly EntryTokens[]): TokenGroup {
  return { turns: indexes.length, tokens: indexes.reduce((sum, i) => sum + (tokens[i]?.total ?? 0), 0) };
}

/**
 * The content with its whitespace runs made one space, trimmed, cut to `chars` with an ellipsis.
 * Only as much of the content is flattened as the preview shows: a prefix that already gives more
 * than `chars` characters (not counting trailing whitespace, which the whole text might not have)
 * starts the whole text's flattening exactly, so a 100 KB tool output costs a few hundred bytes.
 */
export function preview(content: string, chars = PREVIEW_CHARS): string {
  for (let prefix = chars * 4; chars > 0 && prefix < content.length; prefix *= 4) {
    const flat = content.slice(0, prefix).replace(/\s+/g, ' ').trimStart();
    if (flat.trimEnd().length > chars) return clip(flat, chars);
  }
  return clipLine(content, chars);
}

interface AnalyzeInput {
  readonly file: string;
  readonly transcript: Transcript;
  readonly tokens: readonly EntryTokens[];
  readonly settings: Settings;
  readonly readIssues: readonly ReadIssue[];
  /** `estimate`: size and urgency from the plain estimate (devs-ctx before calibration). */
  readonly basis?: 'auto' | 'estimate';
}

/** What a batch row shows of a transcript: the report's size, urgency, life and issues, without its per-turn parts. */
export type AnalyzeSummary = Pick<
  AnalyzeReport,
  'format' | 'turns' | 'totalTokens' | 'context' | 'limits' | 'urgency' | 'agentCompaction' | 'lifetime' | 'issues'
> & {
  readonly recorded: null | Pick<NonNullable<AnalyzeReport['recorded']>, 'contextTokens'>;
};

/**
 * Pure: the part of `buildAnalyzeReport` a batch row needs (the same numbers: the report is built
 * from it), without the goal, the heaviest turns' previews, the partition or the per-turn list.
 */
export function summarizeAnalysis(input: AnalyzeInput): AnalyzeSummary {
  const { transcript, tokens, settings } = input;
  let total = 0;
  for (let i = 0; i < transcript.entries.length; i++) total += tokens[i]?.total ?? 0;
  const session = analyzeContext({ transcript, tokens, settings, basis: input.basis ?? 'auto' });
  const recorded = transcript.recorded;
  return {
    format: transcript.format,
    turns: transcript.entries.length,
    totalTokens: total,
    context: { ...session.context, mapping: { overhead: session.calibration.overhead, scale: session.calibration.scale } },
    limits: session.limits,
    urgency: session.urgency,
    agentCompaction: session.agentCompaction,
    lifetime: session.life,
    recorded: recorded ? { contextTokens: recorded.contextTokens } : null,
    issues: [...input.readIssues, ...transcript.issues],
  };
}

/** Pure: everything `analyze` says about one transcript. */
export function buildAnalyzeReport(input: AnalyzeInput): AnalyzeReport {
  const { transcript, tokens, settings } = input;
  const turns = transcript.entries.map((e) => e.turn);
  const byType: Partial<Record<TurnType, TokenGroup>> = {};
  const byRole: Partial<Record<TurnRole, TokenGroup>> = {};
  const perTurn: TurnTokens[] = [];
  let blobs = 0;
  turns.forEach((turn, i) => {
    const t = tokens[i]?.total ?? 0;
    blobs += tokens[i]?.blobs ?? 0;
    perTurn.push({ id: turn.id, role: turn.role, type: turn.type, tokens: t });
    add(byType, turn.type, t);
    add(byRole, turn.role, t);
  });
  const partition = partitionTurns(turns, settings);
  const heaviest = turns
    .map((turn, index) => ({ turn, index, tokens: tokens[index]?.total ?? 0 }))
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index)
    .slice(0, HEAVIEST)
    .map(({ turn, index, tokens: t }) => ({
      index,
      id: turn.id,
      role: turn.role,
      type: turn.type,
      tokens: t,
      preview: preview(turn.content),
    }));
  const recorded = transcript.recorded;
  const summary = summarizeAnalysis(input);
  const total = summary.totalTokens;
  const limitConfig = { ...settings, softLimitTokens: summary.limits.soft, hardLimitTokens: summary.limits.hard };
  const goal = inferGoal(turns);
  return {
    schemaVersion: ANALYZE_SCHEMA_VERSION,
    file: input.file,
    format: summary.format,
    encoding: settings.encoding,
    turns: summary.turns,
    totalTokens: total,
    context: summary.context,
    limits: summary.limits,
    urgency: summary.urgency,
    agentCompaction: summary.agentCompaction,
    lifetime: summary.lifetime,
    goal: goal ? { text: preview(goal.text, GOAL_CHARS), how: goal.how, turn: goal.index } : null,
    byType,
    byRole,
    blobTokens: blobs,
    pinned: { ...group(partition.pinned, tokens), ids: partition.pinned.map((i) => turns[i]?.id ?? '') },
    protectedTail: group(partition.protectedTail, tokens),
    candidates: group(partition.candidates, tokens),
    heaviest,
    perTurn,
    recorded: recorded
      ? {
          contextTokens: recorded.contextTokens,
          source: recorded.source,
          ...(recorded.contextWindow !== undefined ? { contextWindow: recorded.contextWindow } : {}),
          difference: total - recorded.contextTokens,
          urgency: classifyPruneUrgency({ turns, totalTokenEstimate: recorded.contextTokens }, limitConfig),
        }
      : null,
    issues: summary.issues,
    notes: transcript.notes,
  };
}

/** Running total after each turn. */
export function windowGrowth(perTurn: readonly TurnTokens[]): number[] {
  let total = 0;
  return perTurn.map((t) => (total += t.tokens));
}

const URGENCY_RANK: Record<PruneUrgency, number> = { none: 0, soft: 1, hard: 2 };

export function worstUrgency(urgencies: readonly PruneUrgency[]): PruneUrgency {
  return urgencies.reduce<PruneUrgency>((worst, u) => (URGENCY_RANK[u] > URGENCY_RANK[worst] ? u : worst), 'none');
}
