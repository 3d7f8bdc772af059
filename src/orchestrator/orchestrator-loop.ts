import { annotateWithTokenEstimates, toContextWindow } from '../core/accounting.js';
import type { TextTokenCounter } from '../core/accounting.js';
import type { ContextPrunedEvent, PruneResult } from '../core/prune/context-pruner.js';
import { countsTowardRefresh } from '../core/refresh/decision.js';
import type { OrchestratorContextInjector } from '../core/refresh/orchestrator-context-injector.js';
import type { ContextWindow, ConversationTurn, TurnType } from '../core/turn.js';

/**
 * [9_ROADMAP-TAS-105] [9_ROADMAP-REQ-SYS-001] Seed 000: the agent loop with the pruner wired in.
 * It knows no summarizer and does no token arithmetic of its own: it asks the step function for
 * the agent's next turn(s), has them annotated, asks the injector whether a refresh is due, hands
 * the window to `contextPruner.prune(window, activeTaskContext)`, keeps what comes back, and logs.
 */

/** What the loop needs of a pruner: seed 000's form of `ContextPruner.prune`. */
export interface WindowPruner {
  prune(window: ContextWindow, activeTaskContext?: string): Promise<PruneResult>;
}

/** The task the agent works on: its title or requirement id, or both. */
export type ActiveTask = string | { readonly id?: string; readonly title?: string };

export interface StepInput {
  /** The window as the agent sees it now (after the previous iteration's prune). */
  readonly window: ContextWindow;
  /** 1-based number of the step being asked for. */
  readonly turnIndex: number;
  readonly task: string | undefined;
}

/** One agent step: the turns it adds (a message, or a tool call with its results), and optionally a new task. */
export interface AgentStep {
  readonly turns: readonly ConversationTurn[];
  readonly task?: ActiveTask;
}

/** Returns the agent's next step; `undefined` or `null` ends the loop. */
export type StepFunction = (input: StepInput) => Promise<AgentStep | readonly ConversationTurn[] | ConversationTurn | undefined | null>;

/** Logged when a refresh turn is added to the window. */
export interface ContextRefreshedEvent {
  readonly event: 'context_refreshed';
  readonly turnIndex: number;
  readonly node: string | null;
  readonly turnId: string;
}

export type OrchestratorLogEvent = ContextPrunedEvent | ContextRefreshedEvent;

/** Everything one iteration did, for a caller that wants more than the log (e.g. `devs-ctx replay`). */
export interface LoopIteration {
  readonly turnIndex: number;
  readonly appended: readonly ConversationTurn[];
  /** The refresh turn added after the step, if one was. */
  readonly refresh?: ConversationTurn;
  /** The window after the step, before the prune. */
  readonly before: ContextWindow;
  /** The prune's answer, when it pruned. */
  readonly prune?: PruneResult;
  /** The window the next step sees. */
  readonly window: ContextWindow;
}

export interface OrchestratorLoopOptions {
  readonly step: StepFunction;
  /** Optional: without one the loop never prunes (a graceful no-op, e.g. in tests). */
  readonly contextPruner?: WindowPruner;
  /** Optional: without one the loop never refreshes. */
  readonly injector?: OrchestratorContextInjector;
  /** The log sink: `context_pruned` after every prune, `context_refreshed` after every refresh. */
  readonly log?: (event: OrchestratorLogEvent) => void;
  readonly onIteration?: (iteration: LoopIteration) => void;
  readonly task?: ActiveTask;
  /** The window to start from (system prompt, PRD…). */
  readonly initialTurns?: readonly ConversationTurn[];
  /** Turn types that are project knowledge, not turns of the conversation, for the refresh count (default `PINNED_TURN_TYPES`). */
  readonly pinnedTypes?: readonly TurnType[];
  /** Counts turns that arrive without `tokenCount` (default: js-tiktoken o200k_base). */
  readonly counter?: TextTokenCounter;
  readonly newId?: () => string;
  readonly now?: () => Date;
}

/** `REQ-42: make retries idempotent`, `REQ-42`, or the title alone. */
export function taskContext(task: ActiveTask | undefined): string | undefined {
  if (task === undefined) return undefined;
  if (typeof task === 'string') return task.trim() || undefined;
  const parts = [task.id, task.title].filter((p): p is string => typeof p === 'string' && p.trim().length > 0);
  return parts.length > 0 ? parts.join(': ') : undefined;
}

export class OrchestratorLoop {
  private current: ContextWindow;
  private task: string | undefined;
  private steps = 0;
  private node: string | null = null;
  private refreshes = 0;
  /** A refresh that fired while a tool call waited for its result: added after the next step. */
  private heldRefresh: ConversationTurn | undefined;

  constructor(private readonly options: OrchestratorLoopOptions) {
    this.current = toContextWindow(this.annotate(options.initialTurns ?? []));
    this.task = taskContext(options.task);
    for (const turn of this.current.turns) this.node = turn.node ?? this.node;
  }

  get window(): ContextWindow {
    return this.current;
  }

  /** Steps taken so far. */
  get turnIndex(): number {
    return this.steps;
  }

  get activeTaskContext(): string | undefined {
    return this.task;
  }

  /** Runs steps until the step function ends the loop (or `maxTurns` steps); returns the final window. */
  async run(options: { maxTurns?: number } = {}): Promise<ContextWindow> {
    const max = options.maxTurns ?? Number.POSITIVE_INFINITY;
    while (this.steps < max && (await this.runStep())) {
      // each iteration did its work in runStep
    }
    return this.current;
  }

  /** One iteration: step, append, annotate, refresh, prune, log. False when the step function is done. */
  async runStep(): Promise<boolean> {
    const turnIndex = this.steps + 1;
    const output = await this.options.step({ window: this.current, turnIndex, task: this.task });
    if (output === undefined || output === null) return false;
    this.steps = turnIndex;
    const step = normalise(output);
    if (step.task !== undefined) this.task = taskContext(step.task);

    const appended = this.annotate(step.turns);
    const refresh = await this.refreshAfter(appended, turnIndex);
    const turns = [...this.current.turns, ...appended, ...(refresh ? [refresh] : [])];
    const before = toContextWindow(turns);

    let prune: PruneResult | undefined;
    let window = before;
    if (this.options.contextPruner) {
      const result = await this.options.contextPruner.prune(before, this.task);
      if (result.pruned) {
        prune = result;
        window = result.window;
        this.options.log?.({
          event: 'context_pruned',
          removedTurnCount: result.removedTurnCount,
          tokensSaved: result.tokensSaved,
          newTotal: result.window.totalTokenEstimate,
        });
      }
    }
    this.current = window;
    this.options.onIteration?.({ turnIndex, appended, ...(refresh ? { refresh } : {}), before, ...(prune ? { prune } : {}), window });
    return true;
  }

  /** Asks the injector once per turn that counts (node changes reset it first); at most one refresh turn per step. */
  private async refreshAfter(appended: readonly ConversationTurn[], turnIndex: number): Promise<ConversationTurn | undefined> {
    const injector = this.options.injector;
    if (!injector) return undefined;
    let refresh = this.heldRefresh;
    this.heldRefresh = undefined;
    for (const turn of appended) {
      if (turn.node !== undefined && turn.node !== this.node) {
        this.node = turn.node;
        injector.resetNode();
        refresh = undefined; // a refresh for the node that ended is no use in the next one
      }
      if (!countsTowardRefresh(turn, this.options.pinnedTypes)) continue;
      const node = this.node ?? undefined;
      const fields = () => ({
        id: this.options.newId?.() ?? `refresh-${turnIndex}-${++this.refreshes}`,
        node,
        timestamp: (this.options.now?.() ?? new Date()).toISOString(),
      });
      refresh = (await injector.refreshTurnIfNeeded(turnIndex, fields)) ?? refresh;
    }
    if (!refresh) return undefined;
    // Never between a tool call and its result.
    if (appended[appended.length - 1]?.type === 'tool_call') {
      this.heldRefresh = refresh;
      return undefined;
    }
    const counted = this.annotate([refresh])[0] ?? refresh;
    this.options.log?.({ event: 'context_refreshed', turnIndex, node: this.node, turnId: counted.id });
    return counted;
  }

  /** Seed 000's annotation, for the turns that arrive without a count (counts already known are kept). */
  private annotate(turns: readonly ConversationTurn[]): ConversationTurn[] {
    if (turns.every((t) => t.tokenCount !== undefined)) return [...turns];
    const missing = turns.filter((t) => t.tokenCount === undefined);
    const counted = annotateWithTokenEstimates(missing, this.options.counter ? { counter: this.options.counter } : {});
    let k = 0;
    return turns.map((t) => (t.tokenCount !== undefined ? t : (counted[k++] ?? t)));
  }
}

function normalise(output: AgentStep | readonly ConversationTurn[] | ConversationTurn): AgentStep {
  if (Array.isArray(output)) return { turns: output as readonly ConversationTurn[] };
  if ('turns' in output && Array.isArray(output.turns)) return output as AgentStep;
  return { turns: [output as ConversationTurn] };
}
