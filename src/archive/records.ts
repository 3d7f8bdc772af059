import type { Buffer } from 'node:buffer';
import * as z from 'zod/mini';
import '../core/zod-english.js';
import type { OutputRecord } from '../formats/types.js';
import type { ParsedDocument } from '../io/jsonl.js';
import type { Fingerprint } from './layout.js';

// The records an archive stores and answers with, whatever stores it (SQLite or PostgreSQL).

/** A turn a prune removed from the active context, or whose tool output it masked. */
export interface ArchivedTurnInput {
  /** Index into the input transcript's entries. */
  readonly entryIndex: number;
  readonly turnId: string;
  readonly role: string;
  readonly type: string;
  readonly action: 'dropped' | 'masked';
  readonly tokens: number;
  /** The turn's full text as it was before the prune (for a masked turn, the tool output it hid). */
  readonly content: string;
  readonly timestamp?: string;
  /** Input record indexes the turn came from. */
  readonly records: readonly number[];
}

/** Everything a prune changed, archived before the pruned transcript is written [SPEC §8]. */
export interface PruneEventInput {
  readonly id: string;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly sourcePath: string;
  readonly format: string;
  readonly strategy: string;
  readonly targetTokens: number;
  readonly urgency: string;
  readonly goal?: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly removedTurnCount: number;
  readonly maskedTurnCount: number;
  readonly tokensSaved: number;
  readonly summaryText?: string;
  /** The input, read with `keepRaw: true`. */
  readonly input: ParsedDocument;
  /** `serializeDocument(input)`, when the caller has it already (checked against what the archive rebuilds). */
  readonly inputBytes?: Buffer;
  /** What the writer produced, exactly as it will be written. */
  readonly output: { readonly records: readonly OutputRecord[]; readonly bytes: Buffer };
  readonly turns: readonly ArchivedTurnInput[];
}

export const PruneEventRowSchema = z.pipe(
  z.object({
    id: z.string(),
    created_at: z.string(),
    source_path: z.string(),
    format: z.string(),
    strategy: z.string(),
    target_tokens: z.number(),
    urgency: z.string(),
    goal: z.nullable(z.string()),
    tokens_before: z.number(),
    tokens_after: z.number(),
    removed_turn_count: z.number(),
    masked_turn_count: z.number(),
    tokens_saved: z.number(),
    summary_text: z.nullable(z.string()),
    original_sha256: z.string(),
    original_bytes: z.number(),
    output_sha256: z.string(),
    output_bytes: z.number(),
  }),
  z.transform((row) => ({
    id: row.id,
    createdAt: row.created_at,
    sourcePath: row.source_path,
    format: row.format,
    strategy: row.strategy,
    targetTokens: row.target_tokens,
    urgency: row.urgency,
    ...(row.goal !== null ? { goal: row.goal } : {}),
    tokensBefore: row.tokens_before,
    tokensAfter: row.tokens_after,
    removedTurnCount: row.removed_turn_count,
    maskedTurnCount: row.masked_turn_count,
    tokensSaved: row.tokens_saved,
    ...(row.summary_text !== null ? { summaryText: row.summary_text } : {}),
    original: { sha256: row.original_sha256, length: row.original_bytes } satisfies Fingerprint,
    output: { sha256: row.output_sha256, length: row.output_bytes } satisfies Fingerprint,
  })),
);
/** A prune event as the archive lists it (without the bytes it archived). */
export type PruneEventSummary = z.output<typeof PruneEventRowSchema>;

/** Columns of an archived turn that every query returning turns reads. */
const turnColumns = {
  event_id: z.string(),
  entry_index: z.number(),
  turn_id: z.string(),
  role: z.string(),
  type: z.string(),
  action: z.enum(['dropped', 'masked']),
  tokens: z.number(),
  timestamp: z.nullable(z.string()),
};

export const ArchivedTurnRowSchema = z.pipe(
  z.object({
    ...turnColumns,
    content: z.string(),
    records: z.pipe(
      z.string(),
      z.transform((text) => z.array(z.number().check(z.int(), z.nonnegative())).parse(JSON.parse(text))),
    ),
  }),
  z.transform((row) => ({
    eventId: row.event_id,
    entryIndex: row.entry_index,
    turnId: row.turn_id,
    role: row.role,
    type: row.type,
    action: row.action,
    tokens: row.tokens,
    content: row.content,
    ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}),
    records: row.records,
  })),
);
/** An archived turn, with its full text. */
export type ArchivedTurn = z.output<typeof ArchivedTurnRowSchema>;

export const RecallRowSchema = z.pipe(
  z.object({
    ...turnColumns,
    created_at: z.string(),
    source_path: z.string(),
    strategy: z.optional(z.string()),
    snippet: z.string(),
    rank: z.number(),
  }),
  z.transform((row) => ({
    eventId: row.event_id,
    entryIndex: row.entry_index,
    turnId: row.turn_id,
    role: row.role,
    type: row.type,
    action: row.action,
    tokens: row.tokens,
    ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}),
    prunedAt: row.created_at,
    sourcePath: row.source_path,
    /** How the turn was archived: a prune's strategy, or `compaction` (the window archived before the agent compacted; no prune). */
    ...(row.strategy !== undefined ? { strategy: row.strategy } : {}),
    /** A short excerpt around the match, matched terms between the highlight marks. */
    snippet: row.snippet,
    /** Relevance, higher is better (negated bm25). */
    score: -row.rank,
  })),
);
export type RecallHit = z.output<typeof RecallRowSchema>;

export interface RecallOptions {
  /** Most hits returned (default 20). */
  readonly limit?: number;
  readonly eventId?: string;
  readonly sourcePath?: string;
  /** Marks put around matched terms in the snippet (default « »). */
  readonly highlight?: readonly [open: string, close: string];
}

/**
 * One prune event exactly as an archive stores it (the event row, the input lines it keeps and the
 * turns it removed), the unit `archive copy` moves between stores. Rows, not objects: copying it
 * never re-derives anything, so what arrives is what left.
 */
export interface RawPruneEvent {
  /** The event's own fields as a prune gives them (absent text stored as null), then what the store derived. */
  readonly event: Omit<PruneEventInput, 'goal' | 'summaryText' | 'input' | 'output' | 'turns'> & {
    readonly goal: string | null;
    readonly summaryText: string | null;
    readonly originalSha256: string;
    readonly originalBytes: number;
    readonly outputSha256: string;
    readonly outputBytes: number;
    readonly bom: boolean;
    /** The restore layout, as the JSON text stored. */
    readonly layout: string;
  };
  /** Archived input lines by record index, ascending. */
  readonly records: readonly { readonly index: number; readonly bytes: Buffer }[];
  /** Archived turns, by entry index ascending. */
  readonly turns: readonly {
    readonly entryIndex: number;
    readonly turnId: string;
    readonly role: string;
    readonly type: string;
    readonly action: 'dropped' | 'masked';
    readonly tokens: number;
    readonly content: string;
    readonly timestamp: string | null;
    /** JSON array of input record indexes, as stored. */
    readonly records: string;
  }[];
}

/** How recordPrune treats a commit it cannot sync (see Archive.recordPrune). */
export interface RecordOptions {
  readonly keepUnsynced?: boolean;
}
