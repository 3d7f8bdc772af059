import type { ConversationTurn, TurnType } from '../core/turn.js';
import type { ReadIssue } from '../core/issues.js';
import type { ParsedDocument } from '../io/jsonl.js';
import { imageSize } from './image-size.js';
import type { FormatAdapter, OpaqueBlob, RecordedUsage, Transcript, TranscriptEntry } from './types.js';
import type { CompactionRecord, UsagePoint } from '../core/transcript.js';
import { DETECT_SAMPLE, isRecord, str, num, type JsonObject, safeJson } from './json.js';

/**
 * Claude Code session files (FORMATS §1): lines linked by `parentUuid` into a tree.
 *
 * Decisions:
 * - The active context is the chain from the last user/assistant/attachment line (not sidechain)
 *   up to its root, cut after the last `compact_boundary` on it (FORMATS §1.8).
 * - 2.1.x writes each parallel tool result as a child of its own tool_use line, so those results
 *   sit on side branches: every tool_result answering a tool_use on the active chain is put back,
 *   in file order, as Claude Code does when it rebuilds the request (FORMATS §1.7).
 * - The lines of one API response (one content block each, sharing `message.id`) are one turn,
 *   placed where its first line is; `source.records` lists every line.
 * - progress, system, file-history-snapshot, queue-operation, summary (titles), sidechain and
 *   `<synthetic>` assistant lines are not turns; `toolUseResult` (the UI copy of a tool output) is
 *   never read, only `message.content`.
 * - Images and documents are blobs, not text; `redacted_thinking` is an encrypted blob; thinking
 *   `signature`s are ignored (they are not sent as tokens).
 * - `attachment` lines (2.1.97+) are user context; their text is approximated (`content` when it
 *   is a string, otherwise the attachment's JSON).
 */

/** Lines that only say "Claude Code" weakly (no message), skipped when sampling for detection. */
const NOISE_TYPES = new Set(['queue-operation', 'file-history-snapshot']);
const DETECT_SCAN_LIMIT = 5000;
/** Line types a session can be resumed from (FORMATS §1.8: "the last suitable line"). */
export const LEAF_TYPES: ReadonlySet<string> = new Set(['user', 'assistant', 'attachment']);
/** Claude Code's window for Claude models (the 1M window is an opt-in mode, seen in records above this). */
const CLAUDE_CODE_WINDOW = 200_000;
const CLAUDE_1M_WINDOW = 1_000_000;

/** The model of assistant placeholder lines (errors, "No response requested."): not context. */
export const SYNTHETIC_MODEL = '<synthetic>';
const MAX_LISTED_ISSUES = 20;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
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

function detect(doc: ParsedDocument): number {
  if (doc.kind !== 'jsonl') return 0;
  let messages = 0;
  let bookkeeping = 0;
  let foreign = 0;
  let sampled = 0;
  let scanned = 0;
  outer: for (const record of doc.records) {
    for (const value of record.values) {
      if (++scanned > DETECT_SCAN_LIMIT || sampled >= DETECT_SAMPLE) break outer;
      if (!isRecord(value)) continue;
      if (isChainMessageLine(value)) {
        messages++;
        sampled++;
      } else if (isClaudeBookkeeping(value)) {
        bookkeeping++;
        // A file can be mostly queue-operations (FORMATS §1.10): keep looking for messages.
        if (!NOISE_TYPES.has(String(value['type']))) sampled++;
      } else {
        if (isForeign(value)) foreign++;
        sampled++;
      }
    }
  }
  if (messages === 0) return bookkeeping >= 2 && foreign === 0 ? 5 : 0;
  if (foreign > messages + bookkeeping) return 2;
  if (messages >= 3) return 9;
  return messages + bookkeeping >= 2 ? 8 : 7;
}

/** One line (one parsed value) with a `uuid`. */
interface Node {
  readonly value: JsonObject;
  readonly uuid: string;
  readonly type: string;
  readonly record: number;
  readonly line: number;
  /** Position among all parsed values (glued lines hold several). */
  readonly order: number;
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
  /** Assistant turns: the blocks already read, so a response written twice is counted once. */
  readonly seenBlocks: Set<string>;
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
      const key = safeJson(block);
      if (builder.seenBlocks.has(key)) {
        state.repeatedBlocks++;
        continue;
      }
      builder.seenBlocks.add(key);
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

function newBuilder(node: Node, role: ConversationTurn['role']): Builder {
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
    seenBlocks: new Set(),
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
  const records = [...new Set(builder.records)].sort((a, b) => a - b);
  // The call ids keep a call and its results in one prune unit (src/core/prune/units.ts).
  const links =
    builder.toolUseIds.length > 0 || builder.toolResultIds.length > 0
      ? { links: { calls: [...builder.toolUseIds], answers: [...builder.toolResultIds] } }
      : {};
  // A placeholder replaces one tool output; a line that also carries typed text, or answers several
  // calls, would read back as more than the placeholder, so such a turn is never masked (only dropped).
  const maskable =
    builder.role === 'tool' && (builder.toolResultIds.length !== 1 || [...builder.blockTypes].some((t) => t !== 'tool_result'))
      ? { maskable: false as const }
      : {};
  return { turn, source: { records }, blobs: builder.blobs, ...links, ...maskable };
}

/** The input side of one API call: the context size when it was made. */
function usageOf(message: JsonObject): { context: number; total: number } | undefined {
  const usage = message['usage'];
  if (!isRecord(usage)) return undefined;
  const context =
    num(usage['input_tokens']) + num(usage['cache_creation_input_tokens']) + num(usage['cache_read_input_tokens']);
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

  // Pass 1: index every line with a uuid; remember the largest usage copy of each API response.
  const byUuid = new Map<string, Node>();
  const nodes: Node[] = [];
  const usageByKey = new Map<string, { context: number; total: number }>();
  const skippedByType = new Map<string, number>();
  const duplicateUuids: { line: number; first: number; uuid: string }[] = [];
  let leaf: Node | undefined;
  let order = 0;
  let values = 0;
  let compactBoundariesInFile = 0;
  let sidechainLines = 0;
  let sidechainLeaf: Node | undefined;
  let model: string | undefined;
  let peakRecorded = 0;
  const compactions: CompactionRecord[] = [];
  // The whole file's time span: a session that compacted started long before its active chain.
  let firstAt: { at: number; raw: string } | undefined;
  let lastAt: { at: number; raw: string } | undefined;
  for (const record of doc.records) {
    for (const value of record.values) {
      values++;
      if (!isRecord(value)) {
        issues.push({ line: record.line, severity: 'warning', reason: 'line is JSON but not an object; skipped' });
        continue;
      }
      const type = str(value['type']) ?? 'without a type';
      const uuid = str(value['uuid']);
      const stamp = str(value['timestamp']);
      const at = stamp === undefined ? NaN : Date.parse(stamp);
      if (stamp !== undefined && Number.isFinite(at)) {
        if (firstAt === undefined || at < firstAt.at) firstAt = { at, raw: stamp };
        if (lastAt === undefined || at > lastAt.at) lastAt = { at, raw: stamp };
      }
      if (type === 'system' && value['subtype'] === 'compact_boundary') {
        compactBoundariesInFile++;
        const meta = value['compactMetadata'];
        const timestamp = str(value['timestamp']);
        compactions.push({
          preTokens: isRecord(meta) ? num(meta['preTokens']) : 0,
          trigger: (isRecord(meta) ? str(meta['trigger']) : undefined) ?? 'unknown',
          ...(timestamp !== undefined ? { timestamp } : {}),
        });
      }
      if (type === 'assistant' && isRecord(value['message'])) {
        const key = usageKeyOf(value, value['message']);
        const usage = usageOf(value['message']);
        const id = str(value['message']['model']);
        if (id !== undefined && id !== SYNTHETIC_MODEL && value['isSidechain'] !== true) model = id;
        if (usage && usage.context > peakRecorded) peakRecorded = usage.context;
        const known = key === undefined ? undefined : usageByKey.get(key);
        if (key !== undefined && usage && (!known || usage.total > known.total)) usageByKey.set(key, usage);
      }
      if (uuid === undefined) {
        skippedByType.set(type, (skippedByType.get(type) ?? 0) + 1);
        continue;
      }
      const node: Node = { value, uuid, type, record: record.index, line: record.line, order: order++ };
      const earlier = byUuid.get(uuid);
      if (earlier) duplicateUuids.push({ line: record.line, first: earlier.line, uuid });
      byUuid.set(uuid, node);
      nodes.push(node);
      if (value['isSidechain'] === true) {
        sidechainLines++;
        if (LEAF_TYPES.has(type)) sidechainLeaf = node;
      } else if (LEAF_TYPES.has(type)) leaf = node;
    }
  }
  for (const dup of duplicateUuids.slice(0, MAX_LISTED_ISSUES)) {
    issues.push({
      line: dup.line,
      severity: 'warning',
      reason: `uuid ${dup.uuid} was already used on line ${dup.first}; the later line is used (a resumed session rewrote it?)`,
    });
  }
  if (duplicateUuids.length > MAX_LISTED_ISSUES) {
    issues.push({ line: 0, severity: 'warning', reason: `${duplicateUuids.length - MAX_LISTED_ISSUES} more repeated uuids` });
  }

  // A subagent's own file (subagents/agent-*.jsonl) holds only sidechain lines: read its own chain.
  const subagent = leaf === undefined && sidechainLeaf !== undefined;
  if (subagent) {
    leaf = sidechainLeaf;
    notes.push('only sidechain lines: read as a subagent transcript (its own chain)');
    if (model === undefined) {
      for (const node of nodes) {
        const message = node.value['message'];
        const id = isRecord(message) ? str(message['model']) : undefined;
        if (node.type === 'assistant' && id !== undefined && id !== SYNTHETIC_MODEL) model = id;
      }
    }
  }

  // Pass 2: walk from the leaf to its root.
  const chain: Node[] = [];
  if (leaf) {
    const seen = new Set<string>();
    for (let node: Node | undefined = leaf; node; ) {
      if (seen.has(node.uuid)) {
        issues.push({ line: node.line, severity: 'error', reason: `parentUuid links form a cycle at uuid ${node.uuid}; the chain stops here` });
        break;
      }
      seen.add(node.uuid);
      chain.push(node);
      let parent = node.value['parentUuid'];
      if (typeof parent !== 'string' && options.wholeLife === true && node.value['subtype'] === 'compact_boundary') {
        // A compact boundary starts a new chain. The session before it ended at its logical parent,
        // which real files often do not hold: then at the last main-chain message before the boundary.
        const logical = node.value['logicalParentUuid'];
        const at = node.order;
        const before = typeof logical === 'string' && byUuid.has(logical) ? byUuid.get(logical) : nodes.findLast((n) => n.order < at && LEAF_TYPES.has(n.type) && n.value['isSidechain'] !== true);
        if (before === undefined) break;
        parent = before.uuid;
      }
      if (typeof parent !== 'string') break;
      const next = byUuid.get(parent);
      if (!next) {
        issues.push({
          line: node.line,
          severity: 'warning',
          reason: `parentUuid ${parent} is not in the file (dangling link): the active chain starts at this line`,
          hint: 'Claude Code --resume may show a truncated history for this session',
        });
        break;
      }
      node = next;
    }
    chain.reverse();
  } else {
    notes.push('no user or assistant line to start the active chain from');
  }

  // Everything before the last compact boundary on the chain is summarised away.
  let cut = 0;
  let boundary: Node | undefined;
  let boundariesOnChain = 0;
  let microcompactsAfter = 0;
  /** tool_use ids whose results Claude Code cleared from the request (microcompaction after the last compaction). */
  let clearedToolIds = new Set<string>();
  chain.forEach((node, i) => {
    if (node.type !== 'system') return;
    if (node.value['subtype'] === 'compact_boundary') {
      boundariesOnChain++;
      boundary = node;
      if (options.wholeLife !== true) cut = i + 1;
      microcompactsAfter = 0;
      clearedToolIds = new Set();
    } else if (node.value['subtype'] === 'microcompact_boundary') {
      microcompactsAfter++;
      const meta = node.value['microcompactMetadata'];
      const ids = isRecord(meta) ? meta['compactedToolIds'] : undefined;
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') clearedToolIds.add(id);
    }
  });
  if (boundary) {
    const meta = boundary.value['compactMetadata'];
    const pre = isRecord(meta) ? num(meta['preTokens']) : 0;
    notes.push(
      `${plural(compactBoundariesInFile, 'compact boundary', 'compact boundaries')}; counting after the last` +
        (pre > 0 ? ` (Claude Code counted ${pre.toLocaleString('en-US')} before it)` : ''),
    );
  } else if (compactBoundariesInFile > 0) {
    notes.push(`${plural(compactBoundariesInFile, 'compact boundary', 'compact boundaries')} in the file, none on the active chain`);
  }
  if (microcompactsAfter > 0) {
    notes.push(
      `${plural(microcompactsAfter, 'microcompact boundary', 'microcompact boundaries')} after the last compaction: ` +
        `the results of ${plural(clearedToolIds.size, 'tool call')} are cleared from the request (the file keeps them) and count 0`,
    );
  }
  const active = chain.slice(cut);
  const onChain = new Set(active.map((n) => n.uuid));

  // Pass 3: put back tool results that hang on side branches (2.1.x parallel calls).
  const callsOnChain = new Set<string>();
  const answered = new Set<string>();
  for (const node of active) {
    for (const block of contentBlocks(node.value)) {
      if (node.type === 'assistant' && block['type'] === 'tool_use' && typeof block['id'] === 'string') callsOnChain.add(block['id']);
      if (node.type === 'user' && block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string') answered.add(block['tool_use_id']);
    }
  }
  const reattached: Node[] = [];
  const firstActiveOrder = active[0]?.order ?? Number.POSITIVE_INFINITY;
  for (const node of nodes) {
    if (node.type !== 'user' || node.order < firstActiveOrder || onChain.has(node.uuid) || (node.value['isSidechain'] === true) !== subagent) continue;
    const ids = contentBlocks(node.value)
      .filter((b) => b['type'] === 'tool_result' && typeof b['tool_use_id'] === 'string')
      .map((b) => String(b['tool_use_id']));
    if (ids.length > 0 && ids.some((id) => callsOnChain.has(id) && !answered.has(id))) {
      for (const id of ids) answered.add(id);
      reattached.push(node);
      onChain.add(node.uuid);
    }
  }
  const context = reattached.length > 0 ? [...active, ...reattached].sort((a, b) => a.order - b.order) : active;
  if (reattached.length > 0) {
    notes.push(`${plural(reattached.length, 'tool result')} of parallel calls re-attached from side branches`);
  }

  // Pass 4: lines → turns (one assistant turn per API response).
  const builders: Builder[] = [];
  const byMessageId = new Map<string, Builder>();
  const skippedOnChain = new Map<string, number>();
  let synthetic = 0;
  let attachments = 0;
  for (const node of context) {
    const { value } = node;
    if (node.type === 'attachment') {
      const builder = newBuilder(node, 'user');
      const attachment = value['attachment'];
      builder.parts.push(
        isRecord(attachment) && typeof attachment['content'] === 'string' ? attachment['content'] : safeJson(attachment ?? null),
      );
      builder.blockTypes.add('text');
      builders.push(builder);
      attachments++;
      continue;
    }
    if (node.type !== 'user' && node.type !== 'assistant') {
      const key = node.type === 'system' ? `system/${str(value['subtype']) ?? '?'}` : node.type;
      skippedOnChain.set(key, (skippedOnChain.get(key) ?? 0) + 1);
      continue;
    }
    if (options.wholeLife === true && value['isCompactSummary'] === true) continue;
    const message = value['message'];
    if (!isRecord(message)) {
      issues.push({ line: node.line, severity: 'warning', reason: `${node.type} line without a message object; skipped` });
      continue;
    }
    if (node.type === 'assistant') {
      if (message['model'] === SYNTHETIC_MODEL) {
        synthetic++;
        continue;
      }
      const messageId = str(message['id']);
      const existing = messageId === undefined ? undefined : byMessageId.get(messageId);
      if (existing) {
        existing.records.push(node.record);
        addContent(existing, message['content'], state);
        continue;
      }
      const builder = newBuilder(node, 'assistant');
      builder.usageKey = usageKeyOf(value, message);
      if (messageId !== undefined) byMessageId.set(messageId, builder);
      addContent(builder, message['content'], state);
      builders.push(builder);
      continue;
    }
    const content = message['content'];
    const isResult = Array.isArray(content) && content.some((b) => isRecord(b) && b['type'] === 'tool_result');
    const builder = newBuilder(node, isResult ? 'tool' : 'user');
    addContent(builder, content, state);
    builders.push(builder);
  }

  // Pairing checks: a prune must never separate a call from its result.
  const calls = new Set(builders.flatMap((b) => b.toolUseIds));
  const results = new Set(builders.flatMap((b) => b.toolResultIds));
  const pairingIssues: ReadIssue[] = [];
  for (const b of builders) {
    for (const id of b.toolResultIds) {
      if (!calls.has(id)) {
        pairingIssues.push({ line: b.line, severity: 'warning', reason: `tool_result for ${id} has no tool_use on the active chain` });
      }
    }
  }
  const lastAssistant = [...builders].reverse().find((b) => b.role === 'assistant');
  for (const b of builders) {
    if (b === lastAssistant) continue; // a session can end while its last tools run
    for (const id of b.toolUseIds) {
      if (!results.has(id)) {
        pairingIssues.push({ line: b.line, severity: 'warning', reason: `tool_use ${id} has no tool_result on the active chain` });
      }
    }
  }
  issues.push(...pairingIssues.slice(0, MAX_LISTED_ISSUES));
  if (pairingIssues.length > MAX_LISTED_ISSUES) {
    issues.push({ line: 0, severity: 'warning', reason: `${pairingIssues.length - MAX_LISTED_ISSUES} more unpaired tool calls or results` });
  }

  const entries = builders.map((b) => {
    const entry = toEntry(b);
    const cleared = b.toolResultIds.length > 0 && b.toolResultIds.every((id) => clearedToolIds.has(id));
    return cleared ? { ...entry, notSent: 'tool result cleared from the request by Claude Code microcompaction' } : entry;
  });

  // Recorded usage: every real API call on the active chain that still describes it. A call made
  // before the last compact boundary is stale: the lines a prune keeps after its boundary carry
  // the usage of requests that held the turns it dropped.
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
  const recordedWindow = peakRecorded > CLAUDE_CODE_WINDOW ? CLAUDE_1M_WINDOW : undefined;

  // What was left out, in one line.
  const offChain = nodes.length - context.length - (subagent ? 0 : sidechainLines);
  const skipped: string[] = [];
  const add = (n: number, what: string): void => {
    if (n > 0) skipped.push(`${n.toLocaleString('en-US')} ${what}`);
  };
  for (const [type, n] of [...skippedByType].sort((a, b) => b[1] - a[1])) add(n, type);
  for (const [type, n] of [...skippedOnChain].sort((a, b) => b[1] - a[1])) add(n, `${type} on the chain`);
  if (!subagent) add(sidechainLines, 'sidechain');
  add(synthetic, '<synthetic> assistant');
  add(offChain, 'off the active chain (before the last compaction or on other branches)');
  if (skipped.length > 0) notes.push(`${plural(values, 'line')} read; not context: ${skipped.join(', ')}`);
  if (attachments > 0) notes.push(`${plural(attachments, 'attachment line')} read as user context (text approximated)`);
  if (state.repeatedBlocks > 0) notes.push(`${plural(state.repeatedBlocks, 'repeated content block')} of a response written twice counted once`);
  if (state.unknownBlocks > 0) notes.push(`${plural(state.unknownBlocks, 'content block')} of an unknown type: only their text is counted`);

  issues.sort((a, b) => a.line - b.line);
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
        ? { recordedWindow, recordedWindowHow: `a recorded context of ${peakRecorded.toLocaleString('en-US')} tokens (above 200k: 1M mode)` }
        : {}),
    },
    lifetime: { compactions, peakRecorded, ...(firstAt && lastAt ? { span: { first: firstAt.raw, last: lastAt.raw } } : {}) },
    ...carriedCalibration(boundary?.value),
    notes,
  };
}

/** The calibration a devs-ctx prune recorded on the compact boundary it wrote (`devsCtxCalibration`). */
function carriedCalibration(boundary: JsonObject | undefined): { carriedCalibration?: { overhead: number; scale: number } } {
  const carried = boundary?.['devsCtxCalibration'];
  if (!isRecord(carried)) return {};
  const { overhead, scale } = carried;
  if (typeof overhead !== 'number' || typeof scale !== 'number' || !Number.isFinite(overhead) || !(scale > 0)) return {};
  return { carriedCalibration: { overhead, scale } };
}

/** The content blocks of a line's message (empty for a string or missing content). */
export function contentBlocks(value: JsonObject): JsonObject[] {
  const message = value['message'];
  if (!isRecord(message) || !Array.isArray(message['content'])) return [];
  return message['content'].filter(isRecord);
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
};
