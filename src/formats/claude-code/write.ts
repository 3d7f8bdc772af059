import { toolIds } from '../../core/prune/units.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import { valueTexts } from '../../io/jsonl.js';
import { lastAssistantPending, unpairedToolIds } from '../shared/tool-pairing.js';
import { SYNTHETIC_MODEL } from './read.js';
import { readSessionTree, type SessionLine, type SessionTree } from './tree.js';
import { isRecord, str, type JsonObject } from '../shared/json.js';
import type { FormatWriter, OutputRecord, RefreshAppend, SummaryInsert, Transcript, TranscriptEdit, TranscriptEntry } from '../types.js';

/**
 * Writes an edit back to a Claude Code session the way Claude Code compacts: nothing is deleted, the
 * active chain is re-linked through a new compact_boundary and summary line (docs/formats/claude-code.md,
 * "How devs-ctx writes it").
 */
export const claudeCodeWriter: FormatWriter = {
  name: 'claude-code',
  appendRefresh,

  write(doc, transcript, edit) {
    if (edit.dropped.size === 0 && edit.masked.size === 0 && edit.summary === undefined) {
      return doc.records.map((r) => ({ from: r.index }));
    }
    if (doc.kind !== 'jsonl') throw new Error('a Claude Code session is JSONL, but this document is one JSON value');
    const tree = readSessionTree(doc);
    const entryOf = entryLines(tree, transcript);
    checkEdit(edit, transcript);
    const kept = keptLines(tree, entryOf, edit.dropped);
    const changed = new Map<SessionLine, JsonObject>();
    const update = (line: SessionLine, change: (value: JsonObject) => JsonObject): void => {
      changed.set(line, change(changed.get(line) ?? line.value));
    };

    for (const [index, placeholder] of edit.masked) {
      if (edit.dropped.has(index)) continue;
      const lines = tree.context.filter((line) => entryOf.get(line) === index);
      let masked = 0;
      for (const line of lines) {
        const value = maskToolResults(changed.get(line) ?? line.value, placeholder);
        if (value) {
          changed.set(line, value);
          masked++;
        }
      }
      if (masked === 0) throw new Error(`entry ${index} (${transcript.entries[index]?.turn.id}) is masked but holds no tool_result`);
    }

    const insertBefore = new Map<number, string[]>();
    const atEnd: string[] = [];
    if (edit.dropped.size > 0 || edit.summary !== undefined) {
      relink(tree, entryOf, kept, edit, transcript, { update, insertBefore, atEnd });
    }
    return assemble(doc, tree, changed, insertBefore, atEnd);
  },

  /**
   * What Claude Code (or the API behind it) would trip over. Problems name lines by uuid, not line
   * number, so one the input already had is recognised as such after lines were inserted. The lines in
   * `copied` are not checked for compact JSON, a check of one line alone (each line's JSON written
   * anew: most of a prune's read-back of a large session, whose lines it mostly copies).
   */
  validate(doc, transcript, copied) {
    if (doc.kind !== 'jsonl') return ['the output is not JSONL'];
    const problems: string[] = [];
    const tree = readSessionTree(doc);
    const contextRecords = new Set(tree.context.map((line) => line.record));
    const seen = new Set<string>();
    const reported = new Set<string>();
    /** Uuids on lines Claude Code can parse (one JSON object each). */
    const readable = new Set<string>();
    for (const record of doc.records) {
      const value = record.values.length === 1 ? record.values[0] : undefined;
      const uuid = isRecord(value) ? str(value['uuid']) : undefined;
      if (uuid !== undefined) readable.add(uuid);
    }

    for (const record of doc.records) {
      // Claude Code skips lines it cannot parse: a blank or broken line is never part of the session.
      if (record.values.length === 0) continue;
      if (record.values.length > 1) {
        if (contextRecords.has(record.index)) {
          const uuids = record.values.map((v) => (isRecord(v) ? str(v['uuid']) : undefined)).filter((u) => u !== undefined);
          problems.push(
            `a line holding ${record.values.length} JSON values glued together (uuids ${uuids.join(', ')}) is part of the active context, but Claude Code cannot read it`,
          );
        }
        continue;
      }
      const value = record.values[0];
      if (!isRecord(value)) continue;
      const uuid = str(value['uuid']);
      const name =
        uuid !== undefined ? `line ${uuid}` : `${str(value['type']) ?? 'untyped'} line ${JSON.stringify(record.raw?.subarray(0, 60).toString('utf8') ?? '')}`;
      if (record.raw && !copied?.has(record.index) && !record.raw.equals(Buffer.from(JSON.stringify(value), 'utf8'))) {
        problems.push(`${name} is not compact JSON (Claude Code writes JSON.stringify output)`);
      }
      const parent = value['parentUuid'];
      if (typeof parent === 'string' && !seen.has(parent)) {
        problems.push(
          readable.has(parent)
            ? `${name}: its parent ${parent} comes later in the file`
            : tree.byUuid.has(parent)
              ? `${name}: its parent ${parent} is on a line Claude Code cannot read`
              : `${name}: its parent ${parent} is not in the file`,
        );
      } else if (parent !== null && parent !== undefined && typeof parent !== 'string') {
        problems.push(`${name}: parentUuid is a ${typeof parent}, not a uuid or null`);
      }
      if (uuid !== undefined) {
        if (seen.has(uuid) && !reported.has(uuid)) {
          problems.push(`uuid ${uuid} is used by more than one line`);
          reported.add(uuid);
        }
        seen.add(uuid);
      }
      if (value['type'] === 'system' && value['subtype'] === 'compact_boundary' && value['parentUuid'] !== null) {
        problems.push(`${name}: a compact_boundary must be a root (parentUuid null)`);
      }
    }
    for (const line of tree.chain) {
      const message = line.value['message'];
      if (line.value['isCompactSummary'] === true && (!isRecord(message) || typeof message['content'] !== 'string' || message['content'] === '')) {
        problems.push(`compact summary ${line.uuid}: message.content must be non-empty text`);
      }
    }
    problems.push(...toolPairing(transcript.entries));
    return problems;
  },
};

/**
 * Which entry each context line belongs to (the lines of one API response share one entry;
 * progress, system and `<synthetic>` lines belong to none), checked against the transcript.
 */
function entryLines(tree: SessionTree, transcript: Transcript): Map<SessionLine, number> {
  const entryOf = new Map<SessionLine, number>();
  const byMessageId = new Map<string, number>();
  const starts: SessionLine[] = [];
  for (const line of tree.context) {
    const message = line.value['message'];
    if (line.type !== 'attachment') {
      if ((line.type !== 'user' && line.type !== 'assistant') || !isRecord(message)) continue;
      if (line.type === 'assistant') {
        if (message['model'] === SYNTHETIC_MODEL) continue;
        const id = str(message['id']);
        const existing = id === undefined ? undefined : byMessageId.get(id);
        if (existing !== undefined) {
          entryOf.set(line, existing);
          continue;
        }
        if (id !== undefined) byMessageId.set(id, starts.length);
      }
    }
    entryOf.set(line, starts.length);
    starts.push(line);
  }
  const mismatch =
    starts.length !== transcript.entries.length ||
    starts.some((line, i) => {
      const entry = transcript.entries[i];
      return !entry || entry.turn.id !== line.uuid || !entry.source.records.includes(line.record);
    });
  if (mismatch) throw new Error('the transcript given to the claude-code writer was not read from this document');
  return entryOf;
}

function checkEdit(edit: TranscriptEdit, transcript: Transcript): void {
  const n = transcript.entries.length;
  for (const i of [...edit.dropped, ...edit.masked.keys()]) {
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new Error(`the edit names entry ${i}, but the transcript has ${n}`);
  }
}

/**
 * The context lines that stay on the active chain. An entry's lines follow the entry; a line that
 * is no turn (progress, stop hooks, turn durations, `<synthetic>` replies) follows the turn before
 * it on the chain, because that is what it reports on (lines before the first turn follow it).
 */
function keptLines(tree: SessionTree, entryOf: ReadonlyMap<SessionLine, number>, dropped: ReadonlySet<number>): Set<SessionLine> {
  const status = tree.chain.map((line) => {
    const entry = entryOf.get(line);
    return entry === undefined ? undefined : !dropped.has(entry);
  });
  let previous = status.find((s) => s !== undefined) ?? true;
  const kept = new Set<SessionLine>();
  tree.chain.forEach((line, i) => {
    const own = status[i];
    if (own !== undefined) previous = own;
    if (own ?? previous) kept.add(line);
  });
  for (const line of tree.reattached) {
    const entry = entryOf.get(line);
    if (entry === undefined || !dropped.has(entry)) kept.add(line);
  }
  return kept;
}

interface Layout {
  update(line: SessionLine, change: (value: JsonObject) => JsonObject): void;
  /** New lines to write before an input record. */
  readonly insertBefore: Map<number, string[]>;
  readonly atEnd: string[];
}

/** A node of the new chain: an input line, or one of the two lines the writer adds. */
type ChainNode = { readonly uuid: string; readonly line: SessionLine } | { readonly uuid: string; readonly line?: undefined };

/** Re-links the active chain around the dropped lines, through a new boundary and summary line. */
function relink(
  tree: SessionTree,
  entryOf: ReadonlyMap<SessionLine, number>,
  kept: ReadonlySet<SessionLine>,
  edit: TranscriptEdit,
  transcript: Transcript,
  layout: Layout,
): void {
  const oldLeaf = tree.chain.at(-1);
  if (!oldLeaf) throw new Error('the session has no active chain to prune');
  const keptChain = tree.chain.filter((line) => kept.has(line));
  const summary = edit.summary;
  // The summary sits before the first kept line of a later turn (after every earlier kept line).
  let summaryIndex = keptChain.length;
  if (summary) {
    const i = keptChain.findIndex((line) => (entryOf.get(line) ?? -1) > summary.at);
    if (i !== -1) summaryIndex = i;
  }
  if (keptChain.length === 0 && !summary) throw new Error('the edit drops the whole active context and gives no summary');
  if (!kept.has(oldLeaf) && !(summary && summaryIndex === keptChain.length)) {
    // Claude Code resumes from the last user/assistant line of the file: it has to stay on the chain.
    throw new Error(`the edit drops the session's last line (${oldLeaf.uuid}), which Claude Code resumes from`);
  }

  const boundaryUuid = edit.newId();
  const summaryUuid = summary ? edit.newId() : undefined;
  const chain: ChainNode[] = [{ uuid: boundaryUuid }];
  keptChain.forEach((line, i) => {
    if (i === summaryIndex && summaryUuid) chain.push({ uuid: summaryUuid });
    chain.push({ uuid: line.uuid, line });
  });
  if (summaryUuid && summaryIndex === keptChain.length) chain.push({ uuid: summaryUuid });

  const droppedUuids = new Set(tree.context.filter((line) => !kept.has(line)).map((line) => line.uuid));
  const relinkTo = (line: SessionLine, parent: string): void => {
    layout.update(line, (value) => {
      const next: JsonObject = { ...value, parentUuid: parent };
      for (const key of ['logicalParentUuid', 'sourceToolAssistantUUID']) {
        const ref = next[key];
        if (typeof ref === 'string' && droppedUuids.has(ref)) next[key] = parent;
      }
      return next;
    });
  };
  chain.forEach((node, i) => {
    const parent = chain[i - 1];
    if (node.line && parent && node.line.value['parentUuid'] !== parent.uuid) relinkTo(node.line, parent.uuid);
  });
  // Side-branch results keep their own parent unless it left the chain: then its nearest kept ancestor.
  const chainIndex = new Map(tree.chain.map((line, i) => [line.uuid, i]));
  for (const line of tree.reattached) {
    const parent = str(line.value['parentUuid']);
    if (!kept.has(line) || parent === undefined || !droppedUuids.has(parent)) continue;
    let at = chainIndex.get(parent) ?? -1;
    while (at >= 0 && !kept.has(tree.chain[at] as SessionLine)) at--;
    relinkTo(line, at >= 0 ? (tree.chain[at] as SessionLine).uuid : boundaryUuid);
  }

  // Where the new lines go: the summary right before the first kept line after the removed turns.
  const summaryChild = keptChain[summaryIndex];
  const place = (child: SessionLine | undefined): string[] => {
    if (!child) return layout.atEnd;
    const list = layout.insertBefore.get(child.record) ?? [];
    layout.insertBefore.set(child.record, list);
    return list;
  };
  const boundaryChild = keptChain[0] && summaryIndex > 0 ? keptChain[0] : summaryChild;
  const neighbour = (line: SessionLine | undefined): SessionLine => line ?? oldLeaf;
  place(boundaryChild).push(JSON.stringify(boundaryLine(boundaryUuid, oldLeaf, neighbour(keptChain[0]), edit, transcript)));
  if (summary && summaryUuid) {
    if (summaryChild) checkSummaryPlace(tree, entryOf, kept, summary, summaryChild);
    const parent = chain[chain.findIndex((node) => node.uuid === summaryUuid) - 1]?.uuid ?? boundaryUuid;
    const envelopeFrom = neighbour(keptChain[summaryIndex - 1] ?? summaryChild);
    place(summaryChild).push(JSON.stringify(summaryLine(summaryUuid, parent, envelopeFrom, summary, edit)));
  }
}

/** Every kept line of an earlier turn is before the summary's place in the file, every later one after. */
function checkSummaryPlace(
  tree: SessionTree,
  entryOf: ReadonlyMap<SessionLine, number>,
  kept: ReadonlySet<SessionLine>,
  summary: SummaryInsert,
  child: SessionLine,
): void {
  for (const line of tree.context) {
    if (!kept.has(line)) continue;
    const entry = entryOf.get(line);
    if (entry === undefined) continue;
    const misplaced = entry <= summary.at ? line.record >= child.record : line.record < child.record;
    if (misplaced) {
      throw new Error(`the summary cannot be placed: line ${line.uuid} of entry ${entry} is on the wrong side of line ${child.uuid}`);
    }
  }
}

/** The envelope fields a new line copies from a neighbour (docs/formats/claude-code.md). */
const ENVELOPE_KEYS = ['userType', 'cwd', 'sessionId', 'version', 'gitBranch', 'slug'] as const;

function envelopeOf(line: SessionLine): JsonObject {
  const envelope: JsonObject = {};
  for (const key of ENVELOPE_KEYS) {
    const value = line.value[key];
    if (typeof value === 'string') envelope[key] = value;
  }
  return envelope;
}

/** A manual compact boundary, shaped (and ordered) like the ones Claude Code writes. */
function boundaryLine(uuid: string, oldLeaf: SessionLine, neighbour: SessionLine, edit: TranscriptEdit, transcript: Transcript): JsonObject {
  return {
    parentUuid: null,
    logicalParentUuid: oldLeaf.uuid,
    isSidechain: false,
    ...envelopeOf(neighbour),
    type: 'system',
    subtype: 'compact_boundary',
    content: 'Conversation compacted',
    isMeta: false,
    timestamp: edit.now,
    uuid,
    level: 'info',
    // Before the prune, as its report says (what Claude Code writes here: the context at its compaction).
    compactMetadata: { trigger: 'manual', preTokens: edit.contextBefore ?? transcript.recorded?.contextTokens ?? 0 },
    // devs-ctx's own fields (Claude Code ignores them): this boundary is a prune's, not one of the
    // agent's compactions (its history and `audit` tell them apart by it); the fit that still maps what is left.
    devsCtx: true,
    ...(edit.calibration ? { devsCtxCalibration: { overhead: edit.calibration.overhead, scale: edit.calibration.scale } } : {}),
  };
}

/** The summary as Claude Code writes its own: a user line with string content, flagged as a compact summary. */
function summaryLine(uuid: string, parent: string, neighbour: SessionLine, summary: SummaryInsert, edit: TranscriptEdit): JsonObject {
  return {
    parentUuid: parent,
    isSidechain: false,
    ...envelopeOf(neighbour),
    type: 'user',
    message: { role: 'user', content: summary.text },
    isVisibleInTranscriptOnly: true,
    isCompactSummary: true,
    uuid,
    timestamp: edit.now,
  };
}

/**
 * The line with every tool_result's `content` replaced by the placeholder (a list of parts becomes
 * one text part, so images go too); undefined when it holds no tool_result.
 */
function maskToolResults(value: JsonObject, placeholder: string): JsonObject | undefined {
  const message = value['message'];
  if (!isRecord(message) || !Array.isArray(message['content'])) return undefined;
  let found = false;
  const content = message['content'].map((block: unknown) => {
    if (!isRecord(block) || block['type'] !== 'tool_result') return block;
    found = true;
    return { ...block, content: Array.isArray(block['content']) ? [{ type: 'text', text: placeholder }] : placeholder };
  });
  return found ? { ...value, message: { ...message, content } } : undefined;
}

/**
 * The output lines: untouched records by reference, changed ones re-serialised (a glued record
 * that has to change is written one value per line), new lines where they were placed.
 */
function assemble(
  doc: ParsedDocument,
  tree: SessionTree,
  changed: ReadonlyMap<SessionLine, JsonObject>,
  insertBefore: ReadonlyMap<number, readonly string[]>,
  atEnd: readonly string[],
): OutputRecord[] {
  const changedByRecord = new Map<number, Map<number, JsonObject>>();
  for (const line of tree.lines) {
    const value = changed.get(line);
    if (!value) continue;
    const slots = changedByRecord.get(line.record) ?? new Map<number, JsonObject>();
    slots.set(line.slot, value);
    changedByRecord.set(line.record, slots);
  }
  const out: OutputRecord[] = [];
  for (const record of doc.records) {
    for (const text of insertBefore.get(record.index) ?? []) out.push({ text });
    const slots = changedByRecord.get(record.index);
    if (!slots) {
      out.push({ from: record.index });
      continue;
    }
    const texts = valueTexts(record);
    record.values.forEach((value, slot) => {
      const changedValue = slots.get(slot);
      const text = changedValue ? JSON.stringify(changedValue) : (texts?.[slot] ?? JSON.stringify(value));
      out.push(slot === 0 ? { text, replaces: record.index } : { text });
    });
  }
  for (const text of atEnd) out.push({ text });
  return out;
}

/**
 * Tool pairing on the read-back context: every tool_result answers a tool_use made earlier, and
 * every tool_use is answered, except in the last assistant turn (a session can end while tools run).
 */
function toolPairing(entries: readonly TranscriptEntry[]): string[] {
  const rules = { callBefore: 'earlier', pending: lastAssistantPending(entries.map((e) => e.turn.role)) } as const;
  return unpairedToolIds(entries.map(toolIds), rules).map(({ kind, id, at }) =>
    kind === 'answer'
      ? `${entries[at]?.turn.id} answers tool_use ${id}, which is not earlier on the active chain`
      : `tool_use ${id} (${entries[at]?.turn.id}) has no tool_result on the active chain`,
  );
}

/**
 * A refresh in a Claude Code session: one `isMeta` user line appended (how Claude
 * Code injects context it did not type: skills, reminders), chained to the last line of the active
 * chain, i.e. the leaf or the system lines Claude Code wrote after it (`turn_duration`,
 * `stop_hook_summary`), with the envelope fields (`sessionId`, `cwd`, `version`…) of that line.
 * Every existing line stays byte-identical.
 */
function appendRefresh(doc: ParsedDocument, _transcript: Transcript, refresh: RefreshAppend): OutputRecord[] {
  if (doc.kind !== 'jsonl') throw new Error('a Claude Code session is JSONL, but this document is one JSON value');
  const tree = readSessionTree(doc);
  let parent = tree.chain[tree.chain.length - 1];
  if (!parent) throw new Error('the Claude Code session has no active chain to append a refresh to');
  for (const line of tree.lines) {
    if (line.order > parent.order && line.type === 'system' && line.value['isSidechain'] !== true && line.value['parentUuid'] === parent.uuid) parent = line;
  }
  const line: JsonObject = {
    parentUuid: parent.uuid,
    isSidechain: false,
    ...envelopeOf(parent),
    type: 'user',
    message: { role: 'user', content: [{ type: 'text', text: refresh.text }] },
    isMeta: true,
    uuid: refresh.id,
    timestamp: refresh.now,
  };
  return [...doc.records.map((r) => ({ from: r.index })), { text: JSON.stringify(line) }];
}
