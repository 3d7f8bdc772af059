import { UsageError } from './errors.js';
import type { EntryTokens } from './accounting.js';
import type { Settings } from './config.js';
import { limitsFromWindow } from './config.js';
import { contextSize, toEstimateTokens } from './context-size.js';
import type { Calibration, ContextSize } from './context-size.js';
import { modelWindow, withAgentModel } from './models.js';
import type { ModelWindow } from './models.js';
import { classifyPruneUrgency } from './policy.js';
import type { PruneUrgency } from './policy.js';
import type { Transcript, UsagePoint } from './transcript.js';
import { thousands } from './numbers.js';

/**
 * Pure: everything devs-ctx says about how full a session's real window is — the calibrated size
 * of the next request, the limits of the model's window, the urgency, where the agent will compact
 * by itself, and the session's whole life. `analyze`, the hook, prune and replay share it.
 */

export type LimitSource = 'model' | 'recorded' | 'flag' | 'env' | 'config' | 'default';

export interface SessionLimits {
  readonly soft: number;
  readonly hard: number;
  /** Where the limits came from. */
  readonly source: LimitSource;
  /** The same in words (the flag, variable or config key; the model and how its window was found). */
  readonly from: string;
}

export interface AgentCompaction {
  /** The context size (model tokens) at which the agent compacts by itself. */
  readonly at: number;
  /** API calls until then at the recent growth per call; null when the size is not growing. */
  readonly turnsLeft: number | null;
}

export interface SessionLife {
  /** The largest context the session reached (recorded, or now). */
  readonly peak: number;
  readonly compactions: number;
  /** The size before each compaction, as the agent recorded it. */
  readonly compactionSizes: readonly number[];
}

export interface SessionContext {
  readonly context: ContextSize;
  readonly calibration: Calibration;
  readonly limits: SessionLimits;
  readonly urgency: PruneUrgency;
  readonly agentCompaction: AgentCompaction | null;
  readonly life: SessionLife;
}

/** Which kind of source `resolveSettings` took the limits from, by its label. */
function limitKind(label: string): LimitSource {
  if (label === 'default') return 'default';
  if (/^(soft from |hard from )?--/.test(label)) return 'flag';
  if (/^(soft from |hard from )?DEVS_/.test(label)) return 'env';
  return 'config';
}

/**
 * The limits for one session: explicit ones (flag, environment, config) as given; otherwise soft
 * 50 % / hard 80 % of the window the model runs in; with nothing known, the seeds' 500k / 800k.
 */
export function sessionLimits(settings: Pick<Settings, 'softLimitTokens' | 'hardLimitTokens' | 'limitSource'>, found: ModelWindow | undefined): SessionLimits {
  if (settings.limitSource === 'default' && found) {
    const { soft, hard } = limitsFromWindow(found.window);
    return { soft, hard, source: found.source, from: `${thousands(found.window)}-token window: ${found.how}` };
  }
  // One limit given, the other not: the other is the model window's share (--help: "default 50 % /
  // 80 % of the model's window, else 500k / 800k"), checked here since only now is the window known.
  const split = /^soft from (.+), hard from (.+)$/.exec(settings.limitSource);
  const defaulted = split?.[1] === 'default' ? 'soft' : split?.[2] === 'default' ? 'hard' : undefined;
  if (!split || !defaulted)
    return { soft: settings.softLimitTokens, hard: settings.hardLimitTokens, source: limitKind(settings.limitSource), from: settings.limitSource };
  const given = (defaulted === 'soft' ? split[2] : split[1]) ?? '';
  const windowShare = found ? limitsFromWindow(found.window) : undefined;
  const soft = defaulted === 'soft' && windowShare ? windowShare.soft : settings.softLimitTokens;
  const hard = defaulted === 'hard' && windowShare ? windowShare.hard : settings.hardLimitTokens;
  const other = found ? `${defaulted} from the ${thousands(found.window)}-token window` : `${defaulted} from default`;
  const from = defaulted === 'soft' ? `${other}, hard from ${given}` : `soft from ${given}, ${other}`;
  if (soft >= hard) {
    throw new UsageError(
      `the soft limit (${soft}) must be below the hard limit (${hard}): ${from}`,
      'set both limits, or --window N to derive them (soft 50 %, hard 80 % of N)',
    );
  }
  return { soft, hard, source: limitKind(given), from };
}

/**
 * Limits and a target given in the model's tokens (`target` defaults to half the soft limit), as
 * the planner counts them: the turns in the file, converted through the session's calibration.
 */
export function plannerLimits<S extends Pick<Settings, 'softLimitTokens' | 'hardLimitTokens' | 'limitSource'>>(
  session: Pick<SessionContext, 'calibration' | 'limits'>,
  settings: S,
  givenTarget: number | undefined,
): { settings: S; modelTarget: number; targetTokens: number } {
  const { calibration, limits } = session;
  const modelTarget = givenTarget ?? Math.floor(limits.soft / 2);
  return {
    settings: withSessionLimits(settings, { ...limits, soft: toEstimateTokens(calibration, limits.soft), hard: toEstimateTokens(calibration, limits.hard) }),
    modelTarget,
    targetTokens: toEstimateTokens(calibration, modelTarget),
  };
}

/** Settings with a session's limits in place (for the prune planner and the policy checks). */
function withSessionLimits<S extends Pick<Settings, 'softLimitTokens' | 'hardLimitTokens' | 'limitSource'>>(settings: S, limits: SessionLimits): S {
  return { ...settings, softLimitTokens: limits.soft, hardLimitTokens: limits.hard, limitSource: limits.from };
}

/**
 * Claude Code compacts by itself when a request would leave less than its buffer: the effective
 * window is the window minus the summary's output reserve (20,000 tokens), and auto-compaction
 * starts 13,000 tokens below that (AUTOCOMPACT_BUFFER_TOKENS), i.e. at 167,000 of a 200k window.
 * Source: Claude Code 2.x cli.js (autoCompact threshold), as read by several public re-implementations;
 * checked against real files: automatic `compact_boundary` lines carry `preTokens` of 157.9k–176.7k
 * in 200k sessions (it checks before a request, so one large tool result can carry it past).
 */
const CLAUDE_CODE_OUTPUT_RESERVE = 20_000;
const CLAUDE_CODE_AUTOCOMPACT_BUFFER = 13_000;
/**
 * Codex compacts by itself at its model's `auto_compact_token_limit`, which codex-rs
 * (core/src/openai_model_info.rs) sets to 90 % of the context window for the gpt-5 family.
 */
const CODEX_AUTOCOMPACT_SHARE = 0.9;
/** Recent growth: the last calls looked at. */
const GROWTH_CALLS = 10;

/** Pure: where the agent will compact by itself, and about how many calls away that is. */
export function forecastAgentCompaction(
  agent: string | undefined,
  window: number | null,
  tokens: number,
  usage: readonly UsagePoint[],
): AgentCompaction | null {
  if (window === null) return null;
  let at: number;
  if (agent === 'claude-code') at = window - CLAUDE_CODE_OUTPUT_RESERVE - CLAUDE_CODE_AUTOCOMPACT_BUFFER;
  else if (agent === 'codex') at = Math.floor(window * CODEX_AUTOCOMPACT_SHARE);
  else return null;
  if (tokens >= at) return { at, turnsLeft: 0 };
  const recent = usage.slice(-GROWTH_CALLS);
  const first = recent[0];
  const last = recent[recent.length - 1];
  if (!first || !last || recent.length < 2) return { at, turnsLeft: null };
  const growth = (last.contextTokens - first.contextTokens) / (recent.length - 1);
  return { at, turnsLeft: growth > 0 ? Math.ceil((at - tokens) / growth) : null };
}

/** Pure: the session's context, limits and urgency (see the module comment). */
export function analyzeContext(input: {
  readonly transcript: Pick<Transcript, 'entries' | 'usage' | 'model' | 'lifetime' | 'carriedCalibration'>;
  readonly tokens: readonly (EntryTokens | number)[];
  readonly settings: Pick<Settings, 'softLimitTokens' | 'hardLimitTokens' | 'limitSource' | 'agentModel'>;
  /** `estimate`: the plain estimate, as devs-ctx said before calibration. */
  readonly basis?: 'auto' | 'estimate';
}): SessionContext {
  const { settings } = input;
  // --agent-model or config agentModel: the model for a transcript that names none (or, the flag, for any).
  const model = withAgentModel(input.transcript.model, settings.agentModel);
  const transcript = model === undefined || model === input.transcript.model ? input.transcript : { ...input.transcript, model };
  const perEntry = input.tokens.map((t) => (typeof t === 'number' ? t : t.total));
  const { calibration, ...context } = contextSize(transcript, perEntry, { basis: input.basis ?? 'auto' });
  const found = modelWindow(transcript.model);
  const limits = sessionLimits(settings, found);
  const urgency = classifyPruneUrgency(
    { turns: [], totalTokenEstimate: context.tokens },
    { ...settings, softLimitTokens: limits.soft, hardLimitTokens: limits.hard, pinnedPrefixTurns: 0 },
  );
  const compactions = transcript.lifetime?.compactions ?? [];
  const compactionSizes = compactions.map((c) => c.preTokens);
  return {
    context,
    calibration,
    limits,
    urgency,
    agentCompaction: forecastAgentCompaction(transcript.model?.agent, context.window, context.tokens, transcript.usage ?? []),
    life: {
      peak: Math.max(context.tokens, transcript.lifetime?.peakRecorded ?? 0, ...compactionSizes),
      compactions: compactions.length,
      compactionSizes,
    },
  };
}
