import type { ConversationTurn, TurnType } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import { imageSize } from '../shared/image-size.js';
import type { FormatAdapter, OpaqueBlob, RecordedUsage, Transcript, TranscriptEntry } from '../types.js';
import type { CompactionRecord, UsagePoint } from '../../core/transcript.js';
import { DETECT_SAMPLE, isRecord, str, num, type JsonObject, safeJson } from '../shared/json.js';
import { lastAssistantPending, unpairedToolIds } from '../shared/tool-pairing.js';
import { readSessionTree, type SessionLine, type SessionTree } from './tree.js';
import { thousands } from '../../core/numbers.js';
import { claudeCodeSkeleton } from './skeleton.js';

/**
 * Reads Claude Code session files: a tree of lines linked by `parentUuid`, whose active chain (after the
 * last compaction, parallel results re-attached) is the context. What the format is, its traps and the
 * reading decisions: docs/formats/claude-code.md.
 */

/** Lines that only say "Claude Code" weakly (no message), skipped when sampling for detection. */
const NOISE_TYPES = new Set(['queue-operation', 'file-history-snapshot']);
const DETECT_SCAN_LIMIT = 5000;
/** Claude Code's window for Claude models (the 1M window is an opt-in mode, seen in records above this). */
const CLAUDE_CODE_WINDOW = 200_000;
const CLAUDE_1M_WINDOW = 1_000_000;

/** The model of assistant placeholder lines (errors, "No response requested."): not context. */
export const SYNTHETIC_MODEL = '<synthetic>';
const MAX_LISTED_ISSUES = 20;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${thousands(n)} ${n === 1 ? one : many}`;
}

/** A user/assistant line with the envelope fields that make it Claude Code. */
function isChainMessageLine(value: JsonObject): boolean {
  return (
    (value['type'] === 'user' || value['type'] === 'assistant') &&
    typeof value['uuid'] === 'string' &&
    typeof value['sessionId'] === 'string' &&
    isRecord(value['message']) &&
    !('payload' in value) &&
    !('role' in value)
  );
}

/** Claude Code lines that carry no message but are distinctive (envelope or bookkeeping lines). */
function isClaudeBookkeeping(value: JsonObject): boolean {
  const type = value['type'];
  if (typeof type !== 'string' || 'payload' in value || 'role' in value) return false;
  if (typeof value['uuid'] === 'string' && typeof value['sessionId'] === 'string' && 'parentUuid' in value) return true;
  if (type === 'file-history-snapshot') return isRecord(value['snapshot']);
  if (type === 'queue-operation') return typeof value['operation'] === 'string';
  if (type === 'summary') return typeof value['leafUuid'] === 'string' && typeof value['summary'] === 'string';
  return false;
}

/** Looks like another format's line (Codex envelope, native/OpenAI message, Gemini header/patch). */
function isForeign(value: JsonObject): boolean {
  return (
    'payload' in value ||
    ('role' in value && !('uuid' in value)) ||
    (typeof value['projectHash'] === 'string' && !('uuid' in value)) ||
    '$set' in value ||
    '$rewindTo' in value
  );
}

/** What detection counts in the first lines, and whether it stopped at its limits (not at the end of the file). */
function detectTally(doc: ParsedDocument) {
  const tally = { messages: 0, bookkeeping: 0, foreign: 0, settled: false };
  let sampled = 0;
  let scanned = 0;
  outer: for (const record of doc.records) {
    for (const value of record.values) {
      if (++scanned > DETECT_SCAN_LIMIT || sampled >= DETECT_SAMPLE) {
        tally.settled = true;
        break outer;
      }
      if (!isRecord(value)) continue;
      if (isChainMessageLine(value)) {
        tally.messages++;
        sampled++;
      } else if (isClaudeBookkeeping(value)) {
        tally.bookkeeping++;
        // A file can be mostly queue-operations (docs/formats/claude-code.md, Traps): keep looking for messages.
        if (!NOISE_TYPES.has(String(value['type']))) sampled++;
      } else {
        if (isForeign(value)) tally.foreign++;
        sampled++;
      }
    }
  }
  return tally;
}

function detect(doc: ParsedDocument): number {
  if (doc.kind !== 'jsonl') return 0;
  const { messages, bookkeeping, foreign } = detectTally(doc);
  if (messages === 0) return bookkeeping >= 2 && foreign === 0 ? 5 : 0;
  if (foreign > messages + bookkeeping) return 2;
  if (messages >= 3) return 9;
  return messages + bookkeeping >= 2 ? 8 : 7;
}

/** A turn being built (an assistant turn collects the lines of its response). */
interface Builder {
  readonly id: string;
  readonly role: ConversationTurn['role'];
  readonly line: number;
  timestamp: string | undefined;
  isCompactSummary: boolean;
  readonly parts: string[];
  readonly blobs: OpaqueBlob[];
  readonly records: number[];
  readonly toolUseIds: string[];
  readonly toolResultIds: string[];
  blockTypes: Set<string>;
  /** Assistant turns: the blocks already read, so a response written twice is counted once (see `seenBefore`). */
  readonly seenBlocks: Map<string, { readonly block: JsonObject; json?: string }[]>;
  /** Assistant turns: `message.id` and `requestId` of the first line, to find its usage. */
  usageKey: string | undefined;
}

interface ReadState {
  readonly issues: ReadIssue[];
  unknownBlocks: number;
  repeatedBlocks: number;
}

function blobFromSource(kind: 'image' | 'document', source: unknown): OpaqueBlob | undefined {
  if (!isRecord(source)) return undefined;
  const mediaType = str(source['media_type']);
  const data = str(source['data']);
  if (source['type'] === 'base64' && data !== undefined) {
    const size = kind === 'image' ? imageSize(data) : undefined;
    return {
      kind,
      provider: 'anthropic',
      base64Length: data.length,
      ...(mediaType !== undefined ? { mediaType } : {}),
      ...(size ? { width: size.width, height: size.height } : {}),
    };
  }
  if (source['type'] === 'url' || source['type'] === 'file') {
    return { kind, provider: 'anthropic', base64Length: 0, ...(mediaType !== undefined ? { mediaType } : {}) };
  }
  return undefined;
}

/** Text and blobs of a document block (base64/url → blob; plain-text source → text). */
function readDocumentBlock(block: JsonObject, parts: string[], blobs: OpaqueBlob[]): void {
  const source = block['source'];
  if (isRecord(source) && source['type'] === 'text' && typeof source['data'] === 'string') {
    parts.push(source['data']);
    return;
  }
  if (isRecord(source) && source['type'] === 'content' && Array.isArray(source['content'])) {
    for (const inner of source['content']) {
      if (isRecord(inner) && typeof inner['text'] === 'string') parts.push(inner['text']);
    }
    return;
  }
  const blob = blobFromSource('document', source);
  if (blob) blobs.push(blob);
}

/** The text of a tool_result's `content` (string, or text parts joined by newlines) and its blobs. */
function readToolResultContent(content: unknown, blobs: OpaqueBlob[], state: ReadState): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    switch (part['type']) {
      case 'text':
        if (typeof part['text'] === 'string') texts.push(part['text']);
        break;
      case 'image': {
        const blob = blobFromSource('image', part['source']);
        if (blob) blobs.push(blob);
        break;
      }
      case 'document':
        readDocumentBlock(part, texts, blobs);
        break;
      case 'tool_reference':
        if (typeof part['tool_name'] === 'string') texts.push(part['tool_name']);
        break;
      default:
        state.unknownBlocks++;
        if (typeof part['text'] === 'string') texts.push(part['text']);
    }
  }
  return texts.join('\n');
}

const lengthOrKind = (value: unknown): string | number => (typeof value === 'string' ? value.length : typeof value);
/** Never `String()` of a parsed value: an object with its own `toString` key, or an array nested 100,000 deep, throws. */
const textOrKind = (value: unknown): string => (typeof value === 'string' ? value : typeof value);

/**
 * Whether a block with the same JSON was read before in this turn (and if not, it is noted). Blocks
 * are first told apart by a key equal JSON always shares (type, id, the lengths of text, thinking and
 * name): only blocks that share it are written out as JSON and compared, a few per response at most.
 */
function seenBefore(seen: Map<string, { readonly block: JsonObject; json?: string }[]>, block: JsonObject): boolean {
  const key = `${textOrKind(block['type'])}\u0000${textOrKind(block['id'])}\u0000${lengthOrKind(block['text'])}\u0000${lengthOrKind(block['thinking'])}\u0000${lengthOrKind(block['name'])}`;
  const alike = seen.get(key);
  if (alike === undefined) {
    seen.set(key, [{ block }]);
    return false;
  }
  const json = safeJson(block);
  for (const earlier of alike) {
    earlier.json ??= safeJson(earlier.block);
    if (earlier.json === json) return true;
  }
  alike.push({ block, json });
  return false;
}

/** Adds one `message.content` (string or blocks) to a turn being built. */
function addContent(builder: Builder, content: unknown, state: ReadState): void {
  if (typeof content === 'string') {
    builder.parts.push(content);
    builder.blockTypes.add('text');
    return;
  }
  if (!Array.isArray(content)) {
    state.issues.push({
      line: builder.line,
      severity: 'warning',
      reason: `message.content is ${content === null ? 'null' : typeof content}, not a string or a list of blocks; read as empty`,
    });
    return;
  }
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (builder.role === 'assistant') {
      // The same response can be written twice (a resumed session re-appends it): count it once.
      if (seenBefore(builder.seenBlocks, block)) {
        state.repeatedBlocks++;
        continue;
      }
    }
    const type = str(block['type']) ?? '';
    builder.blockTypes.add(type);
    switch (type) {
      case 'text':
        if (typeof block['text'] === 'string') builder.parts.push(block['text']);
        break;
      case 'thinking':
        if (typeof block['thinking'] === 'string') builder.parts.push(block['thinking']);
        break;
      case 'redacted_thinking':
        builder.blobs.push({
          kind: 'encrypted',
          provider: 'anthropic',
          base64Length: typeof block['data'] === 'string' ? block['data'].length : 0,
        });
        break;
      case 'tool_use':
      case 'server_tool_use': {
        const name = str(block['name']) ?? '';
        builder.parts.push(`${name} ${safeJson(block['input'] ?? {})}`);
        const id = str(block['id']);
        if (id !== undefined && type === 'tool_use') builder.toolUseIds.push(id);
        break;
      }
      case 'tool_result': {
        const id = str(block['tool_use_id']);
        if (id !== undefined) builder.toolResultIds.push(id);
        builder.parts.push(readToolResultContent(block['content'], builder.blobs, state));
        break;
      }
      case 'image': {
        const blob = blobFromSource('image', block['source']);
        if (blob) builder.blobs.push(blob);
        break;
      }
      case 'document':
        readDocumentBlock(block, builder.parts, builder.blobs);
        break;
      default:
        // Newer block kinds (advisor_tool_result, web search results…): their text if any.
        state.unknownBlocks++;
        if (typeof block['text'] === 'string') builder.parts.push(block['text']);
        else if (block['content'] !== undefined) builder.parts.push(readToolResultContent(block['content'], builder.blobs, state));
    }
  }
}

function newBuilder(node: SessionLine, role: ConversationTurn['role']): Builder {
  return {
    id: node.uuid,
    role,
    line: node.line,
    timestamp: str(node.value['timestamp']),
    isCompactSummary: node.value['isCompactSummary'] === true,
    parts: [],
    blobs: [],
    records: [node.record],
    toolUseIds: [],
    toolResultIds: [],
    blockTypes: new Set(),
    seenBlocks: new Map(),
    usageKey: undefined,
  };
}

function turnType(builder: Builder): TurnType {
  if (builder.role === 'assistant') {
    if (builder.toolUseIds.length > 0 || builder.blockTypes.has('server_tool_use')) return 'tool_call';
    const types = [...builder.blockTypes];
    if (types.length > 0 && types.every((t) => t === 'thinking' || t === 'redacted_thinking')) return 'reasoning';
    return 'message';
  }
  if (builder.role === 'tool') return 'tool_result';
  return builder.isCompactSummary ? 'summary' : 'message';
}

function toEntry(builder: Builder): TranscriptEntry {
  const turn: ConversationTurn = {
    id: builder.id,
    role: builder.role,
    type: turnType(builder),
    content: builder.parts.filter((p) => p.length > 0).join('\n'),
    ...(builder.timestamp !== undefined ? { timestamp: builder.timestamp } : {}),
  };
  const joined = [...new Set(builder.records)];
  const records = [...joined].sort((a, b) => a - b);
  const source = joined.some((r, i) => r !== records[i]) ? { records, joined } : { records };
  // The call ids keep a call and its results in one prune unit (src/core/prune/units.ts).
  const links =
    builder.toolUseIds.length > 0 || builder.toolResultIds.length > 0 ? { links: { calls: [...builder.toolUseIds], answers: [...builder.toolResultIds] } } : {};
  // A placeholder replaces one tool output; a line that also carries typed text, or answers several
  // calls, would read back as more than the placeholder, so such a turn is never masked (only dropped).
  const maskable =
    builder.role === 'tool' && (builder.toolResultIds.length !== 1 || [...builder.blockTypes].some((t) => t !== 'tool_result'))
      ? { maskable: false as const }
      : {};
  return { turn, source, blobs: builder.blobs, ...links, ...maskable };
}

/** The input side of one API call: the context size when it was made. */
function usageOf(message: JsonObject): { context: number; total: number } | undefined {
  const usage = message['usage'];
  if (!isRecord(usage)) return undefined;
  const context = num(usage['input_tokens']) + num(usage['cache_creation_input_tokens']) + num(usage['cache_read_input_tokens']);
  if (context <= 0) return undefined;
  return { context, total: context + num(usage['output_tokens']) };
}

function usageKeyOf(value: JsonObject, message: JsonObject): string | undefined {
  const id = str(message['id']);
  return id === undefined ? undefined : `${id}\u0000${str(value['requestId']) ?? ''}`;
}

/** `wholeLife`: the whole file, through the agent's compactions (their summaries left out), for `replay`. */
function read(doc: ParsedDocument, options: { readonly wholeLife?: boolean } = {}): Transcript {
  const state: ReadState = { issues: [], unknownBlocks: 0, repeatedBlocks: 0 };
  const { issues } = state;
  const notes: string[] = [];
  if (doc.kind !== 'jsonl') {
    issues.push({ line: 0, severity: 'error', reason: 'a Claude Code session is JSONL, but this file is one JSON document' });
    return { format: 'claude-code', entries: [], issues, notes };
  }
  const file = scanFile(doc, issues);
  const tree = readSessionTree(doc, { wholeLife: options.wholeLife === true, subagents: true });
  issues.push(...tree.issues);
  let model = file.model;
  if (tree.subagent) {
    notes.push('only sidechain lines: read as a subagent transcript (its own chain)');
    model ??= subagentModel(tree);
  }
  if (!tree.leaf) notes.push('no user or assistant line to start the active chain from');
  const compaction = compactionsOnChain(tree.walk, file.compactBoundariesInFile, notes);
  if (tree.reattached.size > 0) {
    notes.push(`${plural(tree.reattached.size, 'tool result')} of parallel calls re-attached from side branches`);
  }

  const turns = buildTurns(tree.context, state, options.wholeLife === true);
  issues.push(...pairingIssues(turns.builders));
  const entries = turns.builders.map((b) => {
    const entry = toEntry(b);
    const cleared = b.toolResultIds.length > 0 && b.toolResultIds.every((id) => compaction.clearedToolIds.has(id));
    return cleared ? { ...entry, notSent: 'tool result cleared from the request by Claude Code microcompaction' } : entry;
  });
  const { usage, recorded } = recordedUsage(turns.builders, file.usageByKey, compaction.boundary, notes);
  notes.push(...leftOutNotes(file, tree, turns, state));

  issues.sort((a, b) => a.line - b.line);
  const recordedWindow = file.peakRecorded > CLAUDE_CODE_WINDOW ? CLAUDE_1M_WINDOW : undefined;
  const { firstAt, lastAt } = file;
  return {
    format: 'claude-code',
    entries,
    issues,
    ...(recorded ? { recorded } : {}),
    usage,
    model: {
      agent: 'claude-code',
      ...(model !== undefined ? { id: model } : {}),
      ...(recordedWindow !== undefined
        ? { recordedWindow, recordedWindowHow: `a recorded context of ${thousands(file.peakRecorded)} tokens (above 200k: 1M mode)` }
        : {}),
    },
    lifetime: {
      compactions: file.compactions,
      peakRecorded: file.peakRecorded,
      ...(firstAt && lastAt ? { span: { first: firstAt.raw, last: lastAt.raw } } : {}),
    },
    ...carriedCalibration(compaction.boundary?.value),
    notes,
  };
}

/** The calibration a devs-ctx prune recorded on the compact boundary it wrote (`devsCtxCalibration`). */
function carriedCalibration(boundary: JsonObject | undefined): { carriedCalibration?: { overhead: number; scale: number } } {
  const carried = boundary?.['devsCtxCalibration'];
  if (!isRecord(carried)) return {};
  const { overhead, scale } = carried;
  if (typeof overhead !== 'number' || typeof scale !== 'number' || !Number.isFinite(overhead) || !Number.isFinite(scale) || !(scale > 0)) return {};
  return { carriedCalibration: { overhead, scale } };
}

/** What the whole file says besides its tree: compactions, recorded usage, the model, its time span. */
interface FileScan {
  values: number;
  readonly skippedByType: Map<string, number>;
  readonly usageByKey: Map<string, { context: number; total: number }>;
  readonly compactions: CompactionRecord[];
  compactBoundariesInFile: number;
  model: string | undefined;
  peakRecorded: number;
  firstAt: { at: number; raw: string } | undefined;
  lastAt: { at: number; raw: string } | undefined;
}

/** Every value of the file, tree or not: remembers the largest usage copy of each API response. */
function scanFile(doc: ParsedDocument, issues: ReadIssue[]): FileScan {
  const scan: FileScan = {
    values: 0,
    skippedByType: new Map(),
    usageByKey: new Map(),
    compactions: [],
    compactBoundariesInFile: 0,
    model: undefined,
    peakRecorded: 0,
    firstAt: undefined,
    lastAt: undefined,
  };
  for (const record of doc.records) {
    for (const value of record.values) {
      scan.values++;
      if (!isRecord(value)) {
        issues.push({ line: record.line, severity: 'warning', reason: 'line is JSON but not an object; skipped' });
        continue;
      }
      const type = str(value['type']) ?? 'without a type';
      // The whole file's time span: a session that compacted started long before its active chain.
      const stamp = str(value['timestamp']);
      const at = stamp === undefined ? NaN : Date.parse(stamp);
      if (stamp !== undefined && Number.isFinite(at)) {
        if (scan.firstAt === undefined || at < scan.firstAt.at) scan.firstAt = { at, raw: stamp };
        if (scan.lastAt === undefined || at > scan.lastAt.at) scan.lastAt = { at, raw: stamp };
      }
      if (type === 'system' && value['subtype'] === 'compact_boundary') {
        scan.compactBoundariesInFile++;
        const meta = value['compactMetadata'];
        // A prune's boundary (devs-ctx's own, marked) is none of the agent's compactions.
        if (value['devsCtx'] !== true && value['devsCtxCalibration'] === undefined)
          scan.compactions.push({
            preTokens: isRecord(meta) ? num(meta['preTokens']) : 0,
            trigger: (isRecord(meta) ? str(meta['trigger']) : undefined) ?? 'unknown',
            ...(stamp !== undefined ? { timestamp: stamp } : {}),
          });
      }
      if (type === 'assistant' && isRecord(value['message'])) scanAssistant(scan, value, value['message']);
      if (str(value['uuid']) === undefined) scan.skippedByType.set(type, (scan.skippedByType.get(type) ?? 0) + 1);
    }
  }
  return scan;
}

function scanAssistant(scan: FileScan, value: JsonObject, message: JsonObject): void {
  const key = usageKeyOf(value, message);
  const usage = usageOf(message);
  const id = str(message['model']);
  if (id !== undefined && id !== SYNTHETIC_MODEL && value['isSidechain'] !== true) scan.model = id;
  if (usage && usage.context > scan.peakRecorded) scan.peakRecorded = usage.context;
  const known = key === undefined ? undefined : scan.usageByKey.get(key);
  if (key !== undefined && usage && (!known || usage.total > known.total)) scan.usageByKey.set(key, usage);
}

/** A subagent file's model: the last real assistant line's, sidechain or not. */
function subagentModel(tree: SessionTree): string | undefined {
  let model: string | undefined;
  for (const line of tree.lines) {
    const message = line.value['message'];
    const id = isRecord(message) ? str(message['model']) : undefined;
    if (line.type === 'assistant' && id !== undefined && id !== SYNTHETIC_MODEL) model = id;
  }
  return model;
}

/** The last compact boundary on the walk, and the tool results microcompaction cleared after it. */
function compactionsOnChain(walk: readonly SessionLine[], inFile: number, notes: string[]) {
  let boundary: SessionLine | undefined;
  let microcompactsAfter = 0;
  /** tool_use ids whose results Claude Code cleared from the request (microcompaction after the last compaction). */
  let clearedToolIds = new Set<string>();
  for (const line of walk) {
    if (line.type !== 'system') continue;
    if (line.value['subtype'] === 'compact_boundary') {
      boundary = line;
      microcompactsAfter = 0;
      clearedToolIds = new Set();
    } else if (line.value['subtype'] === 'microcompact_boundary') {
      microcompactsAfter++;
      const meta = line.value['microcompactMetadata'];
      const ids = isRecord(meta) ? meta['compactedToolIds'] : undefined;
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') clearedToolIds.add(id);
    }
  }
  if (boundary) {
    const meta = boundary.value['compactMetadata'];
    const pre = isRecord(meta) ? num(meta['preTokens']) : 0;
    notes.push(
      `${plural(inFile, 'compact boundary', 'compact boundaries')}; counting after the last` +
        (pre > 0 ? ` (${boundary.value['devsCtx'] === true ? 'devs-ctx' : 'Claude Code'} counted ${thousands(pre)} before it)` : ''),
    );
  } else if (inFile > 0) {
    notes.push(`${plural(inFile, 'compact boundary', 'compact boundaries')} in the file, none on the active chain`);
  }
  if (microcompactsAfter > 0) {
    notes.push(
      `${plural(microcompactsAfter, 'microcompact boundary', 'microcompact boundaries')} after the last compaction: ` +
        `the results of ${plural(clearedToolIds.size, 'tool call')} are cleared from the request (the file keeps them) and count 0`,
    );
  }
  return { boundary, clearedToolIds };
}

interface BuiltTurns {
  readonly builders: Builder[];
  /** Lines on the chain that are no turn, by type (`system/<subtype>` for system lines). */
  readonly skippedOnChain: Map<string, number>;
  synthetic: number;
  attachments: number;
}

/** Pass 4: context lines → turns (one assistant turn per API response). */
function buildTurns(context: readonly SessionLine[], state: ReadState, wholeLife: boolean): BuiltTurns {
  const built: BuiltTurns = { builders: [], skippedOnChain: new Map(), synthetic: 0, attachments: 0 };
  const { builders, skippedOnChain } = built;
  const byMessageId = new Map<string, Builder>();
  for (const line of context) {
    const { value } = line;
    if (line.type === 'attachment') {
      const builder = newBuilder(line, 'user');
      const attachment = value['attachment'];
      builder.parts.push(isRecord(attachment) && typeof attachment['content'] === 'string' ? attachment['content'] : safeJson(attachment ?? null));
      builder.blockTypes.add('text');
      builders.push(builder);
      built.attachments++;
      continue;
    }
    if (line.type !== 'user' && line.type !== 'assistant') {
      const key = line.type === 'system' ? `system/${str(value['subtype']) ?? '?'}` : line.type;
      skippedOnChain.set(key, (skippedOnChain.get(key) ?? 0) + 1);
      continue;
    }
    if (wholeLife && value['isCompactSummary'] === true) continue;
    const message = value['message'];
    if (!isRecord(message)) {
      state.issues.push({ line: line.line, severity: 'warning', reason: `${line.type} line without a message object; skipped` });
      continue;
    }
    if (line.type === 'assistant') {
      if (message['model'] === SYNTHETIC_MODEL) {
        built.synthetic++;
        continue;
      }
      const messageId = str(message['id']);
      const existing = messageId === undefined ? undefined : byMessageId.get(messageId);
      if (existing) {
        existing.records.push(line.record);
        addContent(existing, message['content'], state);
        continue;
      }
      const builder = newBuilder(line, 'assistant');
      builder.usageKey = usageKeyOf(value, message);
      if (messageId !== undefined) byMessageId.set(messageId, builder);
      addContent(builder, message['content'], state);
      builders.push(builder);
      continue;
    }
    const content = message['content'];
    const isResult = Array.isArray(content) && content.some((b) => isRecord(b) && b['type'] === 'tool_result');
    const builder = newBuilder(line, isResult ? 'tool' : 'user');
    addContent(builder, content, state);
    builders.push(builder);
  }
  return built;
}

/** Pairing checks: a prune must never separate a call from its result. */
function pairingIssues(builders: readonly Builder[]): ReadIssue[] {
  const problems = unpairedToolIds(
    builders.map((b) => ({ calls: b.toolUseIds, answers: b.toolResultIds })),
    { callBefore: 'anywhere', pending: lastAssistantPending(builders.map((b) => b.role)) },
  );
  const issues: ReadIssue[] = problems.slice(0, MAX_LISTED_ISSUES).map((p) => {
    const line = builders[p.at]?.line ?? 0;
    return p.kind === 'answer'
      ? { line, severity: 'warning', reason: `tool_result for ${p.id} has no tool_use on the active chain` }
      : { line, severity: 'warning', reason: `tool_use ${p.id} has no tool_result on the active chain` };
  });
  if (problems.length > MAX_LISTED_ISSUES) {
    issues.push({ line: 0, severity: 'warning', reason: `${problems.length - MAX_LISTED_ISSUES} more unpaired tool calls or results` });
  }
  return issues;
}

/**
 * Recorded usage: every real API call on the active chain that still describes it. A call made
 * before the last compact boundary is stale: the lines a prune keeps after its boundary carry
 * the usage of requests that held the turns it dropped.
 */
function recordedUsage(
  builders: readonly Builder[],
  usageByKey: ReadonlyMap<string, { context: number; total: number }>,
  boundary: SessionLine | undefined,
  notes: string[],
): { usage: UsagePoint[]; recorded: RecordedUsage | undefined } {
  const boundaryTime = boundary ? str(boundary.value['timestamp']) : undefined;
  const usage: UsagePoint[] = [];
  let staleCalls = 0;
  let recorded: RecordedUsage | undefined;
  builders.forEach((b, i) => {
    const call = b.usageKey === undefined ? undefined : usageByKey.get(b.usageKey);
    if (!call) return;
    const stale = boundaryTime !== undefined && b.timestamp !== undefined && b.timestamp < boundaryTime;
    if (stale) {
      staleCalls++;
      return;
    }
    usage.push({ entriesBefore: i, contextTokens: call.context });
    recorded = { contextTokens: call.context, source: 'last API call: input + cache tokens', atEntry: i };
  });
  if (staleCalls > 0) {
    notes.push(`${plural(staleCalls, 'recorded API call')} made before the context was last pruned or compacted: not used for its size`);
  }
  return { usage, recorded };
}

/** What was left out, in one line, and what was read only approximately. */
function leftOutNotes(file: FileScan, tree: SessionTree, turns: BuiltTurns, state: ReadState): string[] {
  const notes: string[] = [];
  const sidechainLines = tree.lines.filter((l) => l.value['isSidechain'] === true).length;
  const offChain = tree.lines.length - tree.context.length - (tree.subagent ? 0 : sidechainLines);
  const skipped: string[] = [];
  const add = (n: number, what: string): void => {
    if (n > 0) skipped.push(`${thousands(n)} ${what}`);
  };
  for (const [type, n] of [...file.skippedByType].sort((a, b) => b[1] - a[1])) add(n, type);
  for (const [type, n] of [...turns.skippedOnChain].sort((a, b) => b[1] - a[1])) add(n, `${type} on the chain`);
  if (!tree.subagent) add(sidechainLines, 'sidechain');
  add(turns.synthetic, '<synthetic> assistant');
  add(offChain, 'off the active chain (before the last compaction or on other branches)');
  if (skipped.length > 0) notes.push(`${plural(file.values, 'line')} read; not context: ${skipped.join(', ')}`);
  if (turns.attachments > 0) notes.push(`${plural(turns.attachments, 'attachment line')} read as user context (text approximated)`);
  if (state.repeatedBlocks > 0) notes.push(`${plural(state.repeatedBlocks, 'repeated content block')} of a response written twice counted once`);
  if (state.unknownBlocks > 0) notes.push(`${plural(state.unknownBlocks, 'content block')} of an unknown type: only their text is counted`);
  return notes;
}

/**
 * The turns of a Claude Code session's whole life, in order: every chain before the agent's own
 * compactions joined through each boundary's logical parent, the compaction summaries left out.
 * `replay` walks them; `entries` of a normal read are only the turns after the last compaction.
 */
export function claudeCodeWholeLife(doc: ParsedDocument): readonly TranscriptEntry[] {
  return read(doc, { wholeLife: true }).entries;
}

export const claudeCodeAdapter: FormatAdapter = {
  name: 'claude-code',
  detect,
  read,
  detectionSettled: (doc) => doc.kind !== 'jsonl' || detectTally(doc).settled,
  skeleton: claudeCodeSkeleton,
};
