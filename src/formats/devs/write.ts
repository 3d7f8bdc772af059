import { isTurn, SaopEnvelopeSchema } from '../../core/turn.js';
import type { SaopEnvelope } from '../../core/turn.js';
import { toolIds } from '../../core/prune/units.js';
import { prependRefresh, refreshTurn } from '../../core/refresh/orchestrator-context-injector.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import { valueTexts } from '../../io/jsonl.js';
import { isRecord, safeJson } from '../shared/json.js';
import { isNoOp, refreshAsEdit } from '../shared/edit.js';
import { unpairedToolIds } from '../shared/tool-pairing.js';
import type { FormatWriter, OutputRecord, RefreshAppend, Transcript, TranscriptEdit, TranscriptEntry } from '../types.js';

/**
 * Writes an edit back to a native `devs` transcript: a dropped turn is a removed line, a masked result
 * its line with `content` replaced, the summary a new line where the first dropped turn was; every other
 * line, blank and malformed ones included, is kept (docs/formats/devs.md).
 */
export const devsWriter: FormatWriter = {
  name: 'devs',
  appendRefresh,

  write(doc, transcript, edit) {
    return rewriteLines(doc, transcript, edit, {
      isEntry: isDevsLine,
      mask: maskTurn,
      summary: () => summaryTurn(transcript, edit),
    });
  },

  validate(doc, transcript) {
    const problems: string[] = [];
    if (doc.kind !== 'jsonl' && transcript.entries.length > 0) {
      problems.push('the output is no longer one JSON value per line');
    }
    const ids = new Set<string>();
    for (const entry of transcript.entries) {
      if (ids.has(entry.turn.id)) problems.push(`turn id ${entry.turn.id} is used twice`);
      ids.add(entry.turn.id);
    }
    problems.push(...toolPairProblems(transcript.entries));
    return problems;
  },
};

/** How a line-per-entry format turns an edit into lines (the native format, one-message-per-line chat). */
export interface LineRewrite {
  /** Whether a parsed value of a line is one the adapter reads as an entry (in the adapter's order). */
  isEntry(value: unknown): boolean;
  /** The value with its body replaced by the placeholder, everything else kept. */
  mask(value: unknown, placeholder: string): unknown;
  /** The new summary value (called once, only when the edit has a summary). */
  summary(): unknown;
}

/**
 * An edit as lines, for formats where each entry is one JSON value on one line: untouched lines come
 * back as `{from}`, a dropped entry's line goes, a masked entry's line is re-serialised, and the
 * summary is a new line in front of the first dropped entry. Lines that are not entries (blank,
 * malformed, unknown values) stay in place, also between dropped entries: they were never context,
 * and dropping them would lose bytes no archive holds. A line of glued values that the edit touches
 * is written as one line per value (the glue was a corruption; each value keeps its place).
 */
export function rewriteLines(doc: ParsedDocument, transcript: Transcript, edit: TranscriptEdit, how: LineRewrite): OutputRecord[] {
  if (isNoOp(edit)) return doc.records.map((r) => ({ from: r.index }));

  const entriesByRecord = new Map<number, number[]>();
  transcript.entries.forEach((entry, i) => {
    const record = entry.source.records[0];
    if (record === undefined) return;
    const list = entriesByRecord.get(record);
    if (list) list.push(i);
    else entriesByRecord.set(record, [i]);
  });
  const summaryAt = edit.summary ? Math.min(edit.summary.at, transcript.entries.length) : undefined;
  const out: OutputRecord[] = [];
  const pushSummary = (): void => {
    out.push({ text: safeJson(how.summary()) });
  };

  for (const record of doc.records) {
    const entries = entriesByRecord.get(record.index) ?? [];
    const touched = entries.some((i) => edit.dropped.has(i) || edit.masked.has(i));
    const summaryInside = summaryAt !== undefined && entries.includes(summaryAt) && entries[0] !== summaryAt;
    if (!touched && !summaryInside) {
      if (summaryAt !== undefined && entries[0] === summaryAt) pushSummary();
      out.push({ from: record.index });
      continue;
    }
    // Match the line's values to its entries, in order.
    const positions = record.values.flatMap((value, k) => (how.isEntry(value) ? [k] : []));
    if (positions.length !== entries.length) {
      throw new Error(`line ${record.line}: ${positions.length} entry value(s) but the transcript has ${entries.length} entries there`);
    }
    // The first value written from this line says it replaces the line; the summary is new.
    let replaces: number | undefined = record.index;
    const pushText = (text: string): void => {
      out.push(replaces === undefined ? { text } : { text, replaces });
      replaces = undefined;
    };
    // Values the edit leaves alone keep their exact text (pinned turns stay byte-identical). The
    // line's text is decoded only for such a value: not for a line the prune drops whole.
    let texts: string[] | undefined | null = null;
    const asWas = (value: unknown, k: number): string => {
      if (texts === null) texts = valueTexts(record);
      return texts?.[k] ?? safeJson(value);
    };
    record.values.forEach((value, k) => {
      const slot = positions.indexOf(k);
      const i = slot === -1 ? undefined : entries[slot];
      if (i === undefined) {
        pushText(asWas(value, k));
        return;
      }
      if (i === summaryAt) pushSummary();
      if (edit.dropped.has(i)) return;
      const placeholder = edit.masked.get(i);
      pushText(placeholder === undefined ? asWas(value, k) : safeJson(how.mask(value, placeholder)));
    });
  }
  if (summaryAt === transcript.entries.length) pushSummary();
  return out;
}

/** An edit that changes nothing: every line comes back as it was. */

function isDevsLine(value: unknown): boolean {
  return isTurn(value) || SaopEnvelopeSchema.safeParse(value).success;
}

/**
 * A masked turn: `content` replaced in place (key order kept). A stale `tokenCount` is removed, as
 * the library's `applyEdit` does: it counted the old content.
 */
function maskTurn(value: unknown, placeholder: string): unknown {
  if (!isRecord(value) || !isTurn(value)) {
    // A SAOP envelope has no single body to mask, and only tool results are ever masked.
    throw new Error('only native turns can be masked; a SAOP envelope line was asked to be');
  }
  const { tokenCount: _stale, ...rest } = value;
  return { ...rest, content: placeholder };
}

/**
 * The summary as a native turn. It takes the orchestrator node of the turn before it, else of the
 * first turn it replaces, so per-node refresh counting sees it in the node it belongs to.
 */
function summaryTurn(transcript: Transcript, edit: TranscriptEdit): unknown {
  const summary = edit.summary;
  if (!summary) throw new Error('no summary in this edit');
  let node: string | undefined;
  for (let i = Math.min(summary.at, transcript.entries.length) - 1; i >= 0; i--) {
    if (edit.dropped.has(i)) continue;
    node = transcript.entries[i]?.turn.node;
    break;
  }
  node ??= transcript.entries[summary.at]?.turn.node;
  return {
    id: edit.newId(),
    role: 'system',
    type: 'summary',
    content: summary.text,
    timestamp: edit.now,
    ...(node !== undefined ? { node } : {}),
  };
}

/**
 * Tool pairing on the read-back entries (call ids from links or a turn's `callId`): every result
 * answers a call made earlier, and every call is answered, unless it is still pending at the very end.
 */
function toolPairProblems(entries: readonly TranscriptEntry[]): string[] {
  const pending = (at: number): boolean => entries.slice(at + 1).every((e) => e.turn.type === 'tool_call' || e.turn.type === 'tool_result');
  return unpairedToolIds(entries.map(toolIds), { callBefore: 'earlier', pending }).map(({ kind, id, at }) =>
    kind === 'answer'
      ? `${entries[at]?.turn.id} answers tool call ${id}, which no earlier turn makes`
      : `tool call ${id} (${entries[at]?.turn.id}) has no result`,
  );
}

/**
 * A refresh in a native transcript: a new `refresh` turn at the end, or, when the
 * last entry is a SAOP envelope, that envelope written anew with the refresh prepended to its
 * `thought.reasoning` (seed 004's injector); every other line stays byte-identical.
 */
function appendRefresh(doc: ParsedDocument, transcript: Transcript, refresh: RefreshAppend): OutputRecord[] {
  const last = transcript.entries[transcript.entries.length - 1];
  const record = last ? doc.records[last.source.records[0] ?? -1] : undefined;
  const values = record?.values.filter(isDevsLine) ?? [];
  const lastValue = values[values.length - 1];
  if (!record || !SaopEnvelopeSchema.safeParse(lastValue).success || isTurn(lastValue)) {
    const edit = refreshAsEdit(transcript, refresh);
    return rewriteLines(doc, transcript, edit, {
      isEntry: isDevsLine,
      mask: maskTurn,
      summary: () => refreshTurn(refresh.text, { id: refresh.id, node: refresh.node, timestamp: refresh.now }),
    });
  }
  // The envelope is the last entry value of its line (its key order kept); a glued line is written one value per line.
  const position = record.values.lastIndexOf(lastValue);
  const texts = valueTexts(record);
  return doc.records.flatMap((r): OutputRecord[] => {
    if (r.index !== record.index) return [{ from: r.index }];
    return r.values.map((value, k) => {
      const text = k === position ? safeJson(prependRefresh(lastValue as SaopEnvelope, refresh.text)) : (texts?.[k] ?? safeJson(value));
      return k === 0 ? { text, replaces: r.index } : { text };
    });
  });
}
