import type { ConversationTurn } from '../turn.js';
import type { TranscriptEdit } from './edit.js';
import type { PrunePlan } from './plan.js';

export interface PlanTexts {
  /** The `[Context Summary]` text, required when the plan drops anything. */
  readonly summary?: string;
  /** Placeholder text for each masked entry. */
  readonly placeholders: ReadonlyMap<number, string>;
  /** The excerpt text (placeholder and the lines about the goal) for each entry the plan may excerpt. */
  readonly excerpts?: ReadonlyMap<number, string>;
  readonly now: string;
  readonly newId: () => string;
  readonly calibration?: { readonly overhead: number; readonly scale: number };
}

/** The plan as an edit a format writer can apply. */
export function planToEdit(plan: PrunePlan, texts: PlanTexts): TranscriptEdit {
  const masked = new Map<number, string>();
  for (const i of plan.masked) {
    const placeholder = plan.excerpted.has(i) ? texts.excerpts?.get(i) : texts.placeholders.get(i);
    if (placeholder === undefined) throw new Error(`no placeholder for masked entry ${i}`);
    masked.set(i, placeholder);
  }
  let summary: TranscriptEdit['summary'];
  if (plan.dropped.size > 0) {
    if (texts.summary === undefined) throw new Error('a plan that drops turns needs a summary');
    summary = { text: texts.summary, at: Math.min(...plan.dropped) };
  }
  const calibration = texts.calibration ? { calibration: texts.calibration } : {};
  // The size before, as the report says it: the plan's estimate through the calibration.
  const cal = texts.calibration ?? { overhead: 0, scale: 1 };
  const contextBefore = Math.max(0, Math.round(cal.overhead + cal.scale * plan.totalBefore));
  return { dropped: plan.dropped, masked, ...(summary ? { summary } : {}), ...calibration, contextBefore, now: texts.now, newId: texts.newId };
}

/**
 * Applies an edit to canonical turns (the library's form): dropped turns go, masked ones get the
 * placeholder as content, and one summary turn takes the place of the first dropped turn. Never
 * mutates its input.
 */
export function applyEdit(turns: readonly ConversationTurn[], edit: TranscriptEdit, summaryTokenCount?: number): ConversationTurn[] {
  const out: ConversationTurn[] = [];
  turns.forEach((turn, i) => {
    if (edit.summary && i === edit.summary.at) {
      out.push({
        id: edit.newId(),
        role: 'system',
        type: 'summary',
        content: edit.summary.text,
        timestamp: edit.now,
        ...(summaryTokenCount !== undefined ? { tokenCount: summaryTokenCount } : {}),
      });
    }
    if (edit.dropped.has(i)) return;
    const placeholder = edit.masked.get(i);
    if (placeholder === undefined) {
      out.push(turn);
      return;
    }
    const { tokenCount: _stale, ...rest } = turn;
    out.push({ ...rest, content: placeholder });
  });
  return out;
}
