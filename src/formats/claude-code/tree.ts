import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import { isRecord, str, type JsonObject } from '../shared/json.js';

/**
 * The session tree of a Claude Code file, walked the way Claude Code resumes it (see
 * docs/formats/claude-code.md): the reader turns its context into turns, the writer re-links it.
 */

/** Line types a session can be resumed from ("the last suitable line"). */
const LEAF_TYPES: ReadonlySet<string> = new Set(['user', 'assistant', 'attachment']);
const MAX_LISTED_ISSUES = 20;

/** One parsed value with a `uuid`: one node of the session tree. */
export interface SessionLine {
  readonly value: JsonObject;
  readonly uuid: string;
  readonly type: string;
  /** Index of its record, and that record's line number. */
  readonly record: number;
  readonly line: number;
  /** Which value of its record (a glued line holds several). */
  readonly slot: number;
  /** Position among all lines with a uuid, in file order. */
  readonly order: number;
}

export interface SessionTree {
  readonly lines: readonly SessionLine[];
  /** The last line with each uuid (a resumed session can write a line twice). */
  readonly byUuid: ReadonlyMap<string, SessionLine>;
  /** Only sidechain lines: a subagent's own file, read along its own chain. */
  readonly subagent: boolean;
  /** The last line a session can be resumed from (undefined: none). */
  readonly leaf: SessionLine | undefined;
  /** The whole walk from the root to the leaf, compact boundaries included. */
  readonly walk: readonly SessionLine[];
  /** The active chain: the walk after its last compact boundary (all of it for a whole-life read). */
  readonly chain: readonly SessionLine[];
  /** Parallel tool results on side branches that answer calls on the chain (2.1.x). */
  readonly reattached: ReadonlySet<SessionLine>;
  /** Chain and re-attached results: the lines turns are read from. */
  readonly context: readonly SessionLine[];
  /** Repeated uuids, cycles and dangling parents met on the way. */
  readonly issues: readonly ReadIssue[];
}

export interface TreeOptions {
  /** Walk through the agent's own compactions (each boundary's logical parent), for `replay`. */
  readonly wholeLife?: boolean;
  /** A file of sidechain lines only is read along its own chain (the reader does; the writer does not). */
  readonly subagents?: boolean;
}

/** A line's message content when it is a list of blocks (undefined for a string or none). */
function messageContent(value: JsonObject): readonly unknown[] | undefined {
  const message = value['message'];
  if (!isRecord(message)) return undefined;
  const content = message['content'];
  return Array.isArray(content) ? content : undefined;
}

/** The content blocks of a line's message (empty for a string or missing content). */
function contentBlocks(value: JsonObject): JsonObject[] {
  return messageContent(value)?.filter(isRecord) ?? [];
}

/** The `tool_use_id`s a line's tool_result blocks answer. */
function toolResultIds(value: JsonObject): string[] {
  return contentBlocks(value)
    .filter((b) => b['type'] === 'tool_result' && typeof b['tool_use_id'] === 'string')
    .map((b) => String(b['tool_use_id']));
}

/** Passes 1–3 of reading a session: index the lines, walk from the leaf to the root, put back side-branch results. */
export function readSessionTree(doc: ParsedDocument, options: TreeOptions = {}): SessionTree {
  const issues: ReadIssue[] = [];
  const { lines, byUuid, leaf: mainLeaf, sidechainLeaf } = indexLines(doc, issues);
  // A subagent's own file (subagents/agent-*.jsonl) holds only sidechain lines: read its own chain.
  const subagent = options.subagents === true && mainLeaf === undefined && sidechainLeaf !== undefined;
  const leaf = subagent ? sidechainLeaf : mainLeaf;
  const walk = leaf ? walkToRoot(leaf, lines, byUuid, options.wholeLife === true, issues) : [];
  let cut = 0;
  if (options.wholeLife !== true) {
    walk.forEach((line, i) => {
      if (line.type === 'system' && line.value['subtype'] === 'compact_boundary') cut = i + 1;
    });
  }
  const chain = walk.slice(cut);
  const reattached = reattach(chain, lines, subagent);
  const context = reattached.size > 0 ? [...chain, ...reattached].sort((a, b) => a.order - b.order) : chain;
  return { lines, byUuid, subagent, leaf, walk, chain, reattached, context, issues };
}

/** Pass 1: every line with a uuid, the last of each uuid, and the last main-chain and sidechain leaves. */
function indexLines(doc: ParsedDocument, issues: ReadIssue[]) {
  const lines: SessionLine[] = [];
  const byUuid = new Map<string, SessionLine>();
  const duplicates: { line: number; first: number; uuid: string }[] = [];
  let leaf: SessionLine | undefined;
  let sidechainLeaf: SessionLine | undefined;
  for (const record of doc.records) {
    record.values.forEach((value, slot) => {
      if (!isRecord(value)) return;
      const uuid = str(value['uuid']);
      if (uuid === undefined) return;
      const type = str(value['type']) ?? 'without a type';
      const line: SessionLine = { value, uuid, type, record: record.index, line: record.line, slot, order: lines.length };
      const earlier = byUuid.get(uuid);
      if (earlier) duplicates.push({ line: record.line, first: earlier.line, uuid });
      lines.push(line);
      byUuid.set(uuid, line);
      if (!LEAF_TYPES.has(type)) return;
      if (value['isSidechain'] === true) sidechainLeaf = line;
      else leaf = line;
    });
  }
  for (const dup of duplicates.slice(0, MAX_LISTED_ISSUES)) {
    issues.push({
      line: dup.line,
      severity: 'warning',
      reason: `uuid ${dup.uuid} was already used on line ${dup.first}; the later line is used (a resumed session rewrote it?)`,
    });
  }
  if (duplicates.length > MAX_LISTED_ISSUES) {
    issues.push({ line: 0, severity: 'warning', reason: `${duplicates.length - MAX_LISTED_ISSUES} more repeated uuids` });
  }
  return { lines, byUuid, leaf, sidechainLeaf };
}

/** Pass 2: from the leaf up its `parentUuid` links to the root; the result is root first. */
function walkToRoot(
  leaf: SessionLine,
  lines: readonly SessionLine[],
  byUuid: ReadonlyMap<string, SessionLine>,
  wholeLife: boolean,
  issues: ReadIssue[],
): SessionLine[] {
  const walk: SessionLine[] = [];
  const seen = new Set<string>();
  for (let line: SessionLine | undefined = leaf; line; ) {
    if (seen.has(line.uuid)) {
      issues.push({ line: line.line, severity: 'error', reason: `parentUuid links form a cycle at uuid ${line.uuid}; the chain stops here` });
      break;
    }
    seen.add(line.uuid);
    walk.push(line);
    let parent = line.value['parentUuid'];
    if (typeof parent !== 'string' && wholeLife && line.value['subtype'] === 'compact_boundary') {
      // A compact boundary starts a new chain. The session before it ended at its logical parent,
      // which real files often do not hold: then at the last main-chain message before the boundary.
      const logical = line.value['logicalParentUuid'];
      const at = line.order;
      const before =
        typeof logical === 'string' && byUuid.has(logical)
          ? byUuid.get(logical)
          : lines.findLast((l) => l.order < at && LEAF_TYPES.has(l.type) && l.value['isSidechain'] !== true);
      if (before === undefined) break;
      parent = before.uuid;
    }
    if (typeof parent !== 'string') break;
    const next = byUuid.get(parent);
    if (!next) {
      issues.push({
        line: line.line,
        severity: 'warning',
        reason: `parentUuid ${parent} is not in the file (dangling link): the active chain starts at this line`,
        hint: 'Claude Code --resume may show a truncated history for this session',
      });
      break;
    }
    line = next;
  }
  return walk.reverse();
}

/** Pass 3: tool results on side branches (2.1.x parallel calls) that answer a call on the chain, in file order. */
function reattach(chain: readonly SessionLine[], lines: readonly SessionLine[], subagent: boolean): Set<SessionLine> {
  const reattached = new Set<SessionLine>();
  const firstOrder = chain[0]?.order ?? Number.POSITIVE_INFINITY;
  // Most sessions have no user line off the chain after its start: then there is nothing to put
  // back, and the chain's blocks are not read. A line's order is its place in `lines`, so the chain
  // is marked by order here; a line off it by order may still share a chain line's uuid, which the
  // full pass below leaves out.
  const chainOrders = new Uint8Array(lines.length);
  for (const line of chain) chainOrders[line.order] = 1;
  let sideLines = false;
  for (let order = Math.max(0, firstOrder); order < lines.length && !sideLines; order++) {
    const line = lines[order] as SessionLine;
    sideLines = line.type === 'user' && chainOrders[order] === 0 && (line.value['isSidechain'] === true) === subagent;
  }
  if (!sideLines) return reattached;
  const onChain = new Set(chain.map((l) => l.uuid));
  // The calls on the chain, and those it answers: its assistant and user lines' blocks, read in place.
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const line of chain) {
    const assistant = line.type === 'assistant';
    if (!assistant && line.type !== 'user') continue;
    const content = messageContent(line.value);
    if (content === undefined) continue;
    for (const block of content) {
      if (!isRecord(block)) continue;
      if (assistant) {
        if (block['type'] === 'tool_use' && typeof block['id'] === 'string') calls.add(block['id']);
      } else if (block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string') answered.add(block['tool_use_id']);
    }
  }
  for (let order = firstOrder; order < lines.length; order++) {
    const line = lines[order] as SessionLine;
    if (chainOrders[order] === 1 || line.type !== 'user' || onChain.has(line.uuid) || (line.value['isSidechain'] === true) !== subagent) continue;
    const ids = toolResultIds(line.value);
    if (ids.length > 0 && ids.some((id) => calls.has(id) && !answered.has(id))) {
      for (const id of ids) answered.add(id);
      reattached.add(line);
      onChain.add(line.uuid);
    }
  }
  return reattached;
}
