import { isTurn, quickTurn, SaopEnvelopeSchema, TurnSchema } from '../../core/turn.js';
import type { ConversationTurn } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { FormatAdapter, TranscriptEntry } from '../types.js';
import { detectionSample, safeJson } from '../shared/json.js';
import { describeZodIssues } from '../shared/zod-issues.js';
import { devsSkeleton } from './skeleton.js';

/** Whether `value` is an object with all these keys (what a schema requiring them needs first). */
function hasFields(value: unknown, ...keys: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && keys.every((key) => key in value);
}

/**
 * The native `devs` format: one canonical turn per line, or a SAOP envelope line (seed 004), which is
 * read as one assistant turn holding its reasoning, action and observation (docs/formats/devs.md).
 */
export const devsAdapter: FormatAdapter = {
  name: 'devs',

  detect(doc) {
    if (doc.kind !== 'jsonl') return 0;
    const sample = detectionSample(doc);
    let turns = 0;
    let envelopes = 0;
    for (const value of sample) {
      // Each schema only on a value with its required fields: a failed parse builds its issues, and
      // detection sees every other format's lines (a Claude Code session's hundreds of them) here.
      if (hasFields(value, 'id', 'content') && isTurn(value)) turns++;
      else if (hasFields(value, 'thought') && SaopEnvelopeSchema.safeParse(value).success) envelopes++;
    }
    if (sample.length === 0) return 0;
    const share = (turns + envelopes) / sample.length;
    if (share >= 0.5) return 10;
    return share > 0 ? 4 : 0;
  },

  read(doc) {
    const entries: TranscriptEntry[] = [];
    const issues: ReadIssue[] = [];
    let envelopes = 0;
    for (const record of doc.records) {
      for (const value of record.values) {
        const quick = quickTurn(value);
        if (quick !== undefined) {
          entries.push({ turn: quick, source: { records: [record.index] }, blobs: [] });
          continue;
        }
        const turn = TurnSchema.safeParse(value);
        if (turn.success) {
          entries.push({ turn: turn.data, source: { records: [record.index] }, blobs: [] });
          continue;
        }
        const envelope = SaopEnvelopeSchema.safeParse(value);
        if (envelope.success) {
          envelopes++;
          entries.push({
            turn: envelopeTurn(envelope.data, record.line),
            source: { records: [record.index] },
            blobs: [],
          });
          continue;
        }
        issues.push({
          line: record.line,
          severity: 'error',
          reason: `not a devs turn: ${describeZodIssues(turn.error.issues, value)}`,
          hint: 'a turn needs id, role (system|user|assistant|tool), type and content; the line was skipped',
        });
      }
    }
    const notes = envelopes > 0 ? [`${envelopes} SAOP envelope line(s) read as assistant turns`] : [];
    return { format: 'devs', entries, issues, notes };
  },

  skeleton: devsSkeleton,
};

function envelopeTurn(envelope: ReturnType<typeof SaopEnvelopeSchema.parse>, line: number): ConversationTurn {
  const parts = [envelope.thought.reasoning];
  if (envelope.action !== undefined) parts.push(safeJson(envelope.action));
  if (envelope.observation !== undefined) parts.push(safeJson(envelope.observation));
  return {
    id: envelope.id ?? `line-${line}`,
    role: 'assistant',
    type: 'message',
    content: parts.join('\n'),
    ...(envelope.timestamp !== undefined ? { timestamp: envelope.timestamp } : {}),
    ...(envelope.node !== undefined ? { node: envelope.node } : {}),
  };
}
