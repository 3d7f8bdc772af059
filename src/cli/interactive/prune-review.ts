import { UsageError } from '../../core/errors.js';
import type { PrunePlanning } from '../../core/prune/engine.js';
import { planPrune } from '../../core/prune/plan.js';
import type { PlanEntry, PrunePlan, PrunePolicy } from '../../core/prune/plan.js';
import type { TranscriptEntry } from '../../core/transcript.js';
import { parseTokenAmount } from '../../core/token-amount.js';
import type { ReviewedPlan } from '../../prune/document.js';
import type { CliContext } from '../context.js';
import { terminalWidth } from '../context.js';
import { answer, cancel, canPrompt, loadClack, promptIO, shortTokens, thousands } from './prompts.js';
import type { Clack, PromptIO } from './prompts.js';
import { clip } from '../../core/text-cut.js';

/**
 * `devs-ctx prune --interactive`: the plan as a table (candidate turns with type, tokens, relevance
 * and the planned action), the before/after totals, and a menu to pin or unpin turns and change the
 * target, re-planning after each change, before the prune command writes anything. The plans are
 * the prune's own plan step (`PrunePlanning`): the turns are ranked once, and the plan confirmed
 * here is the one summarized and written.
 */

export interface InteractiveSetup {
  readonly io: PromptIO;
  /** False with --yes: the plan is shown and the prune goes ahead without asking. */
  readonly ask: boolean;
}

/**
 * Checked before anything is read: prompts need a keyboard (so the transcript cannot come on
 * standard input) and a screen that does not carry the transcript or the JSON report.
 */
export function interactiveSetup(
  ctx: CliContext,
  options: { readonly fromStdin: boolean; readonly dryRun: boolean; readonly screen: 'stdout' | 'stderr'; readonly yes: boolean },
): InteractiveSetup {
  if (options.dryRun)
    throw new UsageError('--interactive and --dry-run cannot be used together', '--dry-run prints the plan without asking; --interactive asks, then prunes');
  if (options.fromStdin)
    throw new UsageError(
      '--interactive reads your answers from the terminal, so the transcript must be a file, not standard input',
      'pass the transcript path',
    );
  const screen = options.screen === 'stdout' ? ctx.stdout : ctx.stderr;
  const io = promptIO(ctx, screen);
  const ask = !options.yes && canPrompt(ctx, screen);
  if (!ask && !options.yes) {
    throw new UsageError(
      '--interactive needs a terminal to ask on, and this is not one',
      'use --dry-run to see the plan without writing anything, or --yes to prune with the plan as it is, without asking',
    );
  }
  return { io, ask };
}

interface ReviewRequest {
  readonly ctx: CliContext;
  readonly setup: InteractiveSetup;
  readonly file: string;
  /** Where the pruned transcript goes, in words, for the menu. */
  readonly destination: string;
  readonly entries: readonly TranscriptEntry[];
  readonly tokens: readonly number[];
  /** The prune's plan step: plans for any pins and target, ranked once. */
  readonly planning: PrunePlanning;
  /** The prune's policy, its target included. */
  readonly policy: PrunePolicy & { readonly targetTokens: number };
}

const MAX_TABLE_ROWS = 40;

/** Shows the plan and lets the user adjust it; resolves with their choices, or throws InterruptedError (exit 130) on cancel. */
export async function reviewPrune(request: ReviewRequest): Promise<ReviewedPlan> {
  const { setup, entries, tokens, policy, planning } = request;
  const clack = setup.ask ? await loadClack() : undefined;
  const { io } = setup;
  const width = Math.max(60, ((io.output as { columns?: number }).columns ?? terminalWidth(request.ctx)) - 4);
  clack?.intro(`devs-ctx prune --interactive: ${request.file}`, io);

  const spin = clack?.spinner({ ...io });
  spin?.start(policy.strategy === 'relevance' ? 'Ranking turns by relevance' : 'Planning');
  const first = await planning.plan(policy);
  spin?.stop(policy.strategy === 'relevance' ? `Ranked ${thousands(entries.length)} turns by relevance to the goal` : 'Planned');

  let targetTokens = policy.targetTokens;
  let pins = new Set<number>();
  // Pinned by the policy (prefix, type, `pinned: true`): not the user's to unpin here.
  const policyPinned = new Set(planPrune(first.entries, { ...policy, targetTokens, summaryReserveTokens: 0, force: true }).pinned);
  const pinnable = entries.map((_, i) => i).filter((i) => !policyPinned.has(i));

  for (;;) {
    const planned = targetTokens === policy.targetTokens && pins.size === 0 ? first : await planning.plan({ ...policy, targetTokens }, pins);
    const { plan } = planned;
    const view: PlanView = {
      entries,
      tokens,
      base: planned.entries,
      plan,
      pinned: pins,
      policyPinned,
      planPinned: new Set(plan.pinned),
      tail: new Set(plan.protectedTail),
      width,
    };
    if (!clack) {
      io.output.write(`${renderPlanTable(view)}\n${renderTotals(view)}\n`);
      return { targetTokens, pins };
    }
    clack.log.message(renderPlanTable(view), io);
    clack.log.info(renderTotals(view), io);
    const options: { value: 'prune' | 'pins' | 'target' | 'cancel'; label: string; hint?: string }[] = [];
    if (plan.outcome === 'prune') options.push({ value: 'prune', label: `Prune: write it to ${request.destination}`, hint: 'and archive what is removed' });
    else if (plan.outcome === 'no-change') options.push({ value: 'prune', label: 'Go ahead: nothing to prune, the output is the input' });
    options.push(
      { value: 'pins', label: 'Pin or unpin turns…', hint: pins.size > 0 ? `${pins.size} pinned by you` : 'pinned turns are kept as they are' },
      { value: 'target', label: `Change the target (now ${thousands(targetTokens)} tokens)…` },
      { value: 'cancel', label: 'Cancel: write nothing' },
    );
    const choice = answer(clack, io, await clack.select({ message: 'What now?', options, ...io }));
    if (choice === 'cancel') cancel(clack, io);
    if (choice === 'prune') {
      clack.outro(pins.size > 0 ? `Pruning, keeping the ${pins.size} turn(s) you pinned` : 'Pruning', io);
      return { targetTokens, pins };
    }
    if (choice === 'pins') pins = await askPins(clack, io, view, pinnable);
    if (choice === 'target') targetTokens = await askTarget(clack, io, targetTokens, plan.hardLimitTokens);
  }
}

interface PlanView {
  readonly entries: readonly TranscriptEntry[];
  readonly tokens: readonly number[];
  /** What the plan was made from (tokens, masked size, relevance once ranked). */
  readonly base: readonly PlanEntry[];
  readonly plan: PrunePlan;
  readonly pinned: ReadonlySet<number>;
  readonly policyPinned: ReadonlySet<number>;
  /** The plan's pinned entries (the policy's, the user's, and whole units holding one). */
  readonly planPinned: ReadonlySet<number>;
  readonly tail: ReadonlySet<number>;
  readonly width: number;
}

function actionOf(view: PlanView, i: number): string {
  if (view.plan.dropped.has(i)) return 'drop';
  if (view.plan.masked.has(i)) return 'mask';
  if (view.pinned.has(i)) return 'pinned';
  if (view.planPinned.has(i)) return 'pinned*';
  if (view.tail.has(i)) return 'keep (tail)';
  return 'keep';
}

function row(view: PlanView, i: number, previewWidth: number): string {
  const entry = view.entries[i];
  // A relevance plan that ranked nothing (nothing to prune) scores every turn 0.
  const score = view.base[i]?.relevance ?? (view.plan.strategy === 'relevance' ? 0 : undefined);
  const cells = [
    `#${i + 1}`.padStart(5),
    clip(entry?.turn.id ?? '', 14).padEnd(14),
    (entry?.turn.type ?? '').padEnd(12),
    thousands(view.tokens[i] ?? 0).padStart(8),
    (score === undefined ? '–' : score.toFixed(3)).padStart(6),
    actionOf(view, i).padEnd(11),
  ];
  const preview = clip((entry?.turn.content ?? '').replace(/\s+/g, ' ').trim(), previewWidth);
  return `${cells.join(' ')} ${preview}`.trimEnd();
}

const HEADER_CELLS = ['    #', 'turn'.padEnd(14), 'type'.padEnd(12), 'tokens'.padStart(8), 'score'.padStart(6), 'action'.padEnd(11), 'text'];
const FIXED_WIDTH = HEADER_CELLS.slice(0, -1).join(' ').length + 1;

/** The turns a prune could touch (every turn the policy does not pin), one row each; the planned action in its own column. */
function renderPlanTable(view: PlanView): string {
  const previewWidth = Math.max(10, view.width - FIXED_WIDTH);
  const rows = view.entries.map((_, i) => i).filter((i) => !view.policyPinned.has(i));
  // A long transcript: the rows with an action or a pin first, then kept ones, shown in order.
  const important = rows.filter((i) => actionOf(view, i) !== 'keep' && actionOf(view, i) !== 'keep (tail)');
  const shown = new Set(important.slice(0, MAX_TABLE_ROWS));
  for (const i of rows) if (shown.size < MAX_TABLE_ROWS) shown.add(i);
  const lines = [HEADER_CELLS.join(' '), ...rows.filter((i) => shown.has(i)).map((i) => row(view, i, previewWidth))];
  if (shown.size < rows.length) lines.push(`  … ${rows.length - shown.size} more turns not shown (all are listed under "Pin or unpin turns")`);
  lines.push(
    `  ${view.policyPinned.size} turn(s) pinned by the policy are not listed (first turns, pinned types, "pinned": true); pinned* = kept with a pinned turn it belongs to`,
  );
  return lines.join('\n');
}

function renderTotals(view: PlanView): string {
  const { plan, entries } = view;
  const summaryTurn = plan.dropped.size > 0 ? 1 : 0;
  const afterTurns = entries.length - plan.dropped.size + summaryTurn;
  const head = `${plan.urgency === 'none' ? 'urgency none' : `urgency ${plan.urgency}`}, strategy ${plan.strategy}, target ${thousands(plan.targetTokens)} tokens`;
  if (plan.outcome === 'impossible') return `${head}\nCannot prune: ${plan.note ?? 'the budget cannot be met'}. Unpin turns, or raise the limits.`;
  if (plan.outcome === 'no-change')
    return `${head}\nNothing to prune: ${plan.note ?? 'no change'}.\nbefore ${thousands(plan.totalBefore)} tokens (${entries.length} turns)`;
  const masked = plan.masked.size > 0 ? `, mask ${plan.masked.size}` : '';
  return [
    head,
    `drop ${plan.dropped.size} turn(s)${masked}${summaryTurn ? ', add 1 summary' : ''}${view.pinned.size > 0 ? `; ${view.pinned.size} pinned by you` : ''}`,
    `before ${thousands(plan.totalBefore)} tokens (${entries.length} turns)  →  after ≈ ${thousands(plan.totalAfter)} tokens (${afterTurns} turns)${plan.reachedTarget ? '' : '  (target not reached)'}`,
  ].join('\n');
}

async function askPins(clack: Clack, io: PromptIO, view: PlanView, pinnable: readonly number[]): Promise<Set<number>> {
  if (pinnable.length === 0) {
    clack.log.warn('Every turn is already pinned by the policy.', io);
    return new Set(view.pinned);
  }
  // Room for the prompt's own guide and checkbox, which clack may wrap at less than the full width.
  const previewWidth = Math.max(10, view.width - FIXED_WIDTH - 24);
  const rows = (io.output as { rows?: number }).rows ?? 24;
  const chosen = answer(
    clack,
    io,
    await clack.multiselect<number>({
      message: 'Pin the turns to keep (space toggles, enter confirms); a tool call and its result are kept together',
      options: pinnable.map((i) => ({ value: i, label: row(view, i, previewWidth).trim() })),
      initialValues: [...view.pinned],
      required: false,
      maxItems: Math.max(5, rows - 8),
      ...io,
    }),
  );
  return new Set(chosen);
}

async function askTarget(clack: Clack, io: PromptIO, current: number, hardLimit: number): Promise<number> {
  const raw = answer(
    clack,
    io,
    await clack.text({
      message: `Target: bring the window down to how many tokens? (below the hard limit, ${shortTokens(hardLimit)})`,
      initialValue: String(current),
      validate: (value) => {
        const n = parseTokenAmount(value ?? '');
        if (n === undefined) return 'a positive number of tokens, such as 150000, 150k or 1M';
        if (n >= hardLimit) return `must be below the hard limit (${thousands(hardLimit)})`;
        return undefined;
      },
      ...io,
    }),
  );
  return parseTokenAmount(raw) ?? current;
}
