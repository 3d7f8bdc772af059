import { countEntries } from '../../core/accounting.js';
import { BudgetImpossibleError, ExitCode, ProviderError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { analyzeContext, plannerLimits } from '../../core/session-context.js';
import { toModelTokens } from '../../core/context-size.js';
import { defaultTargetTokens } from '../../core/prune/plan.js';
import { ContextPruner } from '../../core/prune/context-pruner.js';
import type { PruneResult } from '../../core/prune/context-pruner.js';
import { ContextRefresher } from '../../core/refresh/context-refresher.js';
import { isRefreshTurn } from '../../core/refresh/decision.js';
import { OrchestratorContextInjector } from '../../core/refresh/orchestrator-context-injector.js';
import type { ContextWindow, ConversationTurn } from '../../core/turn.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { claudeCodeWholeLife } from '../../formats/claude-code/read.js';
import { codexWholeLife } from '../../formats/codex/read.js';
import { OrchestratorLoop } from '../../orchestrator/orchestrator-loop.js';
import type { WindowPruner } from '../../orchestrator/orchestrator-loop.js';
import { FileSummaryCache } from '../../providers/summary-cache.js';
import { CondensingSummaryProvider, MemorySummaryCache, StaticSummaryProvider } from '../../providers/summary-providers.js';
import { LocalEmbedder } from '../../providers/local-embedder.js';
import type { CliContext } from '../context.js';
import { buildProviders, chooseProviders, providersReport } from '../choose-providers.js';
import type { ProviderSet } from '../choose-providers.js';
import { reportError } from '../errors.js';
import { renderReplayReport } from '../render/replay-text.js';
import { REPLAY_SCHEMA_VERSION } from '../../core/reports/replay.js';
import type { ReplayEvent, ReplayReport } from '../../core/reports/replay.js';
import type { ReplayOptions } from '../flags/replay.js';
import { CachedCounter, checkTarget, loadTranscriptInput, settingsFor } from '../shared.js';
import { DEFAULT_REFRESH_TOKENS, readDocuments } from './refresh.js';
import { thousands } from '../../core/numbers.js';

/**
 * `devs-ctx replay FILE`: feeds a transcript, turn by turn, through the library's orchestrator loop
 * with the configured limits, the offline pruner and the refresher, and reports what the policy
 * would have done: where prunes and refreshes fire, what they save, how large the window got.
 */
export async function runReplay(path: string | undefined, options: ReplayOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    if (path === undefined) throw new UsageError('no transcript given', 'pass the transcript path (or - to read standard input)');
    const setup = await replaySetup(path, { ...options }, ctx);
    const report = replayReport(setup, await simulate(setup, ctx));
    if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.stdout.write(renderReplayReport(report, ctx));
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

/** The transcript, its counts and calibration, the limits in the loop's tokens, and the turns to walk. */
async function replaySetup(path: string, options: ReplayOptions, ctx: CliContext) {
  const { settings: givenSettings, file } = settingsFor(options, ctx);
  // The config file's refresh settings, where no flag gave them.
  options.threshold ??= file?.config.refreshThreshold;
  options.refreshTokens ??= file?.config.refreshTokens;
  const givenTarget = options.target ?? file?.config.target;
  if (!givenSettings.limitSource.includes('default')) checkTarget(givenTarget ?? defaultTargetTokens(givenSettings), givenSettings.hardLimitTokens);
  const strategy = options.strategy ?? file?.config.strategy ?? 'relevance';

  const { doc, transcript, display } = await loadTranscriptInput(path, { format: options.format, strict: options.strict === true, ctx });
  const cacheDir = options.cache === false ? undefined : defaultCacheDir(ctx.env);
  const counter = new CachedCounter(givenSettings.encoding, cacheDir);
  // Counted once per turn (blobs by their provider's rule); the loop keeps counts it is given.
  const tokens = countEntries(transcript.entries, counter).map((t) => t.total);
  // Limits and target are in the model's tokens; each point of the session is judged by its
  // calibrated size (the loop counts turns: the limits are converted through the calibration).
  const session = analyzeContext({ transcript, tokens, settings: givenSettings });
  const calibration = session.calibration;
  const { settings, modelTarget, targetTokens } = plannerLimits(session, givenSettings, givenTarget);
  checkTarget(modelTarget, session.limits.hard);
  const m = (estimate: number): number => toModelTokens(calibration, estimate);
  const saved = (estimate: number): number => Math.round(calibration.scale * estimate);
  const notes: string[] = [];
  if (calibration.basis !== 'estimate') {
    notes.push(`sizes in the model's tokens (${calibration.basis}: ${calibration.scale} × the estimate + ${thousands(calibration.overhead)})`);
  }
  // A Claude Code or Codex session the agent compacted is walked whole: every turn of the file, through its
  // compactions (their summaries left out: the policy prunes instead), each point judged by the
  // session's calibration (it maps the estimate of any turns to the model's tokens).
  const compactions = transcript.lifetime?.compactions.length ?? 0;
  const whole =
    compactions === 0
      ? undefined
      : transcript.format === 'claude-code'
        ? claudeCodeWholeLife(doc)
        : transcript.format === 'codex'
          ? codexWholeLife(doc)
          : undefined;
  const walked = whole ?? transcript.entries;
  const walkedTokens = whole ? countEntries(whole, counter).map((t) => t.total) : tokens;
  if (whole)
    notes.push(
      `walked the whole file: ${thousands(whole.length)} turns through the agent's ${compactions} compaction${compactions === 1 ? '' : 's'} (the active context after the last has ${thousands(transcript.entries.length)})`,
    );
  const all = walked.map((e, i): ConversationTurn => ({ ...e.turn, tokenCount: walkedTokens[i] ?? 0 }));
  const turns = options.refresh === false ? all : all.filter((t) => !isRefreshTurn(t));
  if (turns.length < all.length) notes.push(`${all.length - turns.length} refresh turn(s) already in the transcript were left out: the replay makes its own`);
  return {
    options,
    file,
    strategy,
    transcript,
    display,
    cacheDir,
    counter,
    session,
    calibration,
    settings,
    modelTarget,
    targetTokens,
    m,
    saved,
    notes,
    whole,
    turns,
  };
}
type ReplaySetup = Awaited<ReturnType<typeof replaySetup>>;

/** The pruner the replay runs: offline unless asked, with ids that do not change run to run. */
function offlinePruner(setup: ReplaySetup, providers: ProviderSet, newId: () => string): ContextPruner {
  const { counter, settings, targetTokens, strategy } = setup;
  return new ContextPruner(providers.summarizer, {
    counter,
    softLimitTokens: settings.softLimitTokens,
    hardLimitTokens: settings.hardLimitTokens,
    pinnedPrefixTurns: settings.pinnedPrefixTurns,
    pinnedTypes: settings.pinnedTypes,
    protectedTailTurns: settings.protectedTailTurns,
    targetTokens,
    strategy,
    embedder: providers.embedder,
    ...(providers.fallbackEmbedder ? { fallbackEmbedder: providers.fallbackEmbedder } : {}),
    // Ids the pruner makes end up in later summaries' text: random ones would change the counts run to run.
    newId,
    now: () => new Date(0),
  });
}

/** Runs the orchestrator loop over the turns; what fired at each step and the windows it left. */
async function simulate(setup: ReplaySetup, ctx: CliContext) {
  const { options, file, strategy, counter, settings, m, saved, notes, turns, display, cacheDir } = setup;
  const events: ReplayEvent[] = [];
  let ids = 0;
  const steps = agentSteps(turns);
  let stepIndex = 0;
  const lastId = (step: number): string => steps[step - 1]?.at(-1)?.id ?? '';
  // Offline unless asked (a replay simulates many prunes; with Gemini each would be paid for):
  // the extractive summarizer and the local embedder, or Gemini with --summarizer/--embedder.
  const choice = await chooseProviders({ ...options, summarizer: options.summarizer ?? 'extractive', embedder: options.embedder ?? 'local' }, ctx, file);
  const local = new LocalEmbedder(strategy === 'relevance' ? turns.map((t) => t.content) : []);
  const providers = await buildProviders(choice, { counter, local, onProgress: () => undefined });
  const pruner = offlinePruner(setup, providers, () => `replay-summary-${++ids}`);
  // A failed prune is reported after the step's refresh, in the order the loop did them.
  const failures: ReplayEvent[] = [];
  const gated = new ReplayPruner(pruner, settings.softLimitTokens, (step, kind, window, message) =>
    failures.push({ kind, step, turnId: lastId(step), windowBefore: m(window.totalTokenEstimate), windowAfter: m(window.totalTokenEstimate), message }),
  );

  const injector = options.refresh === false ? undefined : refreshInjector(options, turns, { display, counter, cacheDir, ctx, notes });
  const threshold = injector ? (options.threshold ?? 5) : null;
  const peaks: number[] = [];
  const windows: number[] = [];
  let largest = { tokens: 0, step: 0, turnId: '' };
  const over: number[] = [];

  const loop = new OrchestratorLoop({
    step: () => {
      const next = steps[stepIndex++];
      gated.step = stepIndex;
      return Promise.resolve(next ? { turns: next } : undefined);
    },
    contextPruner: gated,
    ...(injector ? { injector: injector.injector } : {}),
    ...(options.goal !== undefined ? { task: options.goal } : {}),
    counter,
    pinnedTypes: settings.pinnedTypes,
    newId: () => `replay-${++ids}`,
    now: () => new Date(0),
    onIteration: (it) => {
      const turnId = lastId(it.turnIndex);
      if (it.refresh) {
        const size = it.refresh.tokenCount ?? 0;
        events.push({
          kind: 'refresh',
          step: it.turnIndex,
          turnId,
          windowBefore: m(it.before.totalTokenEstimate - size),
          windowAfter: m(it.before.totalTokenEstimate),
          tokens: saved(size),
          node: it.refresh.node ?? null,
        });
      }
      events.push(...failures.splice(0));
      if (it.prune) {
        events.push({
          kind: 'prune',
          step: it.turnIndex,
          turnId,
          windowBefore: m(it.before.totalTokenEstimate),
          windowAfter: m(it.window.totalTokenEstimate),
          tokensSaved: saved(it.prune.tokensSaved),
          removedTurnCount: it.prune.removedTurnCount,
        });
      }
      peaks.push(m(it.before.totalTokenEstimate));
      windows.push(m(it.window.totalTokenEstimate));
      if (m(it.before.totalTokenEstimate) > largest.tokens) largest = { tokens: m(it.before.totalTokenEstimate), step: it.turnIndex, turnId };
      if (it.window.totalTokenEstimate >= settings.hardLimitTokens) over.push(it.turnIndex);
    },
  });
  const final = await loop.run();
  counter.save();
  injector?.save();
  if (choice.summarizer === 'gemini' || choice.embedder === 'gemini') {
    const used = await providersReport(choice, providers, false);
    const cost = used.estimatedCostUsd === null ? 'cost unknown for this model' : `about $${used.estimatedCostUsd.toFixed(4)}`;
    notes.push(
      `summaries by ${used.summarizer}, ranking by ${used.embedder}: ${used.requests} Gemini requests (${used.retries} retries), ${used.tokensSent} tokens sent, ${used.tokensReceived} received, ${cost}`,
    );
  }
  return { events, steps, threshold, largest, over, final, peaks, windows };
}

function replayReport(setup: ReplaySetup, run: Awaited<ReturnType<typeof simulate>>): ReplayReport {
  const { whole, session, transcript, display, modelTarget, strategy, notes, turns, m } = setup;
  const { events, steps, threshold, largest, over, final, peaks, windows } = run;
  const prunes = events.filter((e) => e.kind === 'prune');
  // Before the agent's own compactions: the sizes it recorded are in the model's tokens already.
  const lifeOverHard =
    whole === undefined &&
    session.life.compactions > 0 &&
    Math.max(...session.life.compactionSizes, transcript.lifetime?.peakRecorded ?? 0) >= session.limits.hard;
  const report: ReplayReport = {
    schemaVersion: REPLAY_SCHEMA_VERSION,
    file: display,
    format: transcript.format,
    limits: { soft: session.limits.soft, hard: session.limits.hard, target: modelTarget, source: session.limits.from },
    strategy,
    refreshThreshold: threshold,
    notes,
    turns: turns.length,
    steps: steps.length,
    events,
    prunes: prunes.length,
    refreshes: events.filter((e) => e.kind === 'refresh').length,
    tokensSaved: prunes.reduce((sum, e) => sum + (e.tokensSaved ?? 0), 0),
    largestWindow: largest,
    hardLimitExceeded: over.length > 0 || lifeOverHard,
    stepsOverHardLimit: over,
    finalWindow: { turns: final.turns.length, tokens: m(final.totalTokenEstimate) },
    windowTokens: windows,
    peakTokens: peaks,
    lifetime: { ...session.life, overHardLimit: lifeOverHard, wholeFile: whole !== undefined },
  };
  return report;
}

/**
 * Agent steps from transcript turns: a turn on its own, except that tool results join the step of
 * their call, and consecutive calls (parallel calls) share one step, so a refresh never lands
 * between a call and its result.
 */
export function agentSteps(turns: readonly ConversationTurn[]): ConversationTurn[][] {
  const steps: ConversationTurn[][] = [];
  for (const turn of turns) {
    const current = steps[steps.length - 1];
    const last = current?.[current.length - 1];
    if (current && last && (turn.type === 'tool_result' || (turn.type === 'tool_call' && last.type === 'tool_call'))) current.push(turn);
    else steps.push([turn]);
  }
  return steps;
}

type FailureKind = 'prune-impossible' | 'prune-failed';

/**
 * The pruner as the replay runs it: below the soft limit it answers "not pruned" without ranking
 * the whole window on every turn (what the pruner would conclude anyway), and a prune that cannot
 * be done (budget impossible, summary not smaller) is recorded and the replay goes on.
 */
class ReplayPruner implements WindowPruner {
  step = 0;
  constructor(
    private readonly inner: WindowPruner,
    private readonly softLimit: number,
    private readonly onFailure: (step: number, kind: FailureKind, window: ContextWindow, message: string) => void,
  ) {}

  async prune(window: ContextWindow, activeTaskContext?: string): Promise<PruneResult> {
    const unchanged: PruneResult = { pruned: false, window, removedTurnCount: 0, tokensSaved: 0 };
    if (window.totalTokenEstimate < this.softLimit) return unchanged;
    try {
      return await this.inner.prune(window, activeTaskContext);
    } catch (error) {
      if (error instanceof BudgetImpossibleError) this.onFailure(this.step, 'prune-impossible', window, error.message);
      else if (error instanceof ProviderError) this.onFailure(this.step, 'prune-failed', window, error.message);
      else throw error;
      return unchanged;
    }
  }
}

/** The refresher the replay runs: TAS/PRD from --tas/--prd or the transcript's pinned turns; with neither, no refreshes (and a note). */
function refreshInjector(
  options: ReplayOptions,
  turns: ConversationTurn[],
  run: { readonly display: string; readonly counter: CachedCounter; readonly cacheDir: string | undefined; readonly ctx: CliContext; readonly notes: string[] },
): { injector: OrchestratorContextInjector; save: () => void } | undefined {
  const { texts } = readDocuments(options, turns, run.ctx);
  if (texts.tas === undefined && texts.prd === undefined) {
    run.notes.push('no TAS or PRD in the transcript and no --tas/--prd: refreshes were not simulated');
    return undefined;
  }
  const cache = run.cacheDir ? new FileSummaryCache(run.cacheDir) : new MemorySummaryCache();
  const provider = new CondensingSummaryProvider(new StaticSummaryProvider(texts, run.display), {
    budgetTokens: options.refreshTokens ?? DEFAULT_REFRESH_TOKENS,
    counter: run.counter,
    cache,
  });
  const refresher = new ContextRefresher({ ...(options.threshold !== undefined ? { threshold: options.threshold } : {}), summaryProvider: provider });
  return { injector: new OrchestratorContextInjector(refresher), save: () => (cache instanceof FileSummaryCache ? cache.save() : undefined) };
}
