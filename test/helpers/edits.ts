import type { TranscriptEdit } from '../../src/core/prune/edit.js';
import { SUMMARY_PREFIX } from '../../src/core/prune/edit.js';
import { buildUnits } from '../../src/core/prune/units.js';
import type { Transcript } from '../../src/core/transcript.js';

/** Deterministic RFC 4122 v4-shaped ids: 00000000-0000-4000-8000-000000000001, … */
export function sequentialIds(): () => string {
  let n = 0;
  return () => {
    n++;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  };
}

export const TEST_NOW = '2026-11-23T12:00:00.000Z';

/**
 * An edit like a prune makes: drops every whole unit lying entirely between the first `keepHead`
 * entries and the last `keepTail`, masks the listed tool results, and puts a summary where the
 * first dropped entry was.
 */
export function dropMiddleEdit(
  transcript: Transcript,
  options: { keepHead?: number; keepTail?: number; mask?: readonly number[]; summaryText?: string } = {},
): TranscriptEdit {
  const keepHead = options.keepHead ?? 2;
  const keepTail = options.keepTail ?? 5;
  const n = transcript.entries.length;
  const dropped = new Set<number>();
  for (const unit of buildUnits(transcript.entries)) {
    if (unit.entries.every((i) => i >= keepHead && i < n - keepTail)) for (const i of unit.entries) dropped.add(i);
  }
  const masked = new Map<number, string>();
  for (const i of options.mask ?? []) masked.set(i, `[devs-ctx: tool output masked; recall ${transcript.entries[i]?.turn.id}]`);
  const first = Math.min(...dropped);
  return {
    dropped,
    masked,
    ...(dropped.size > 0 ? { summary: { text: options.summaryText ?? `${SUMMARY_PREFIX}\nTest summary of ${dropped.size} turns.`, at: first } } : {}),
    now: TEST_NOW,
    newId: sequentialIds(),
  };
}

/**
 * An edit by hand: the listed entries dropped, the listed ones masked with their text, and (when
 * anything is dropped, or `summaryAt` is given) the summary at the first dropped entry.
 */
export function editOf(parts: {
  dropped?: readonly number[];
  masked?: Iterable<readonly [number, string]>;
  summaryText: string;
  summaryAt?: number;
}): TranscriptEdit {
  const dropped = parts.dropped ?? [];
  const at = parts.summaryAt ?? (dropped.length > 0 ? Math.min(...dropped) : undefined);
  return {
    dropped: new Set(dropped),
    masked: new Map([...(parts.masked ?? [])].map(([i, text]) => [i, text] as [number, string])),
    ...(at !== undefined ? { summary: { text: parts.summaryText, at } } : {}),
    now: TEST_NOW,
    newId: sequentialIds(),
  };
}

/** A turn as the tests compare it after a write: role, type, content. */
export type TurnShape = [role: string, type: string, content: string];

export const contextShape = (t: Transcript): TurnShape[] => t.entries.map((e) => [e.turn.role, e.turn.type, e.turn.content]);

/**
 * What the active context must read back as after an edit: kept entries in order, masked ones
 * holding their placeholder, the summary (read back with `summaryAs` role and type) in place.
 */
export function expectedContext(t: Transcript, edit: TranscriptEdit, summaryAs: [role: string, type: string] = ['user', 'message']): TurnShape[] {
  const out: TurnShape[] = [];
  let placed = false;
  const summary = (): void => {
    if (edit.summary && !placed) out.push([...summaryAs, edit.summary.text]);
    placed = true;
  };
  t.entries.forEach((e, i) => {
    if (edit.dropped.has(i)) return;
    if (edit.summary && i > edit.summary.at) summary();
    out.push([e.turn.role, e.turn.type, edit.masked.get(i) ?? e.turn.content]);
  });
  summary();
  return out;
}
