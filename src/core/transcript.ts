import type { ConversationTurn } from './turn.js';
import type { ReadIssue } from './issues.js';

/**
 * A transcript as the core sees it: canonical turns in context order, each linked to the records
 * it came from. The adapters in src/formats produce it; accounting, policy and reports consume it.
 */

export const FORMAT_NAMES = ['devs', 'claude-code', 'codex', 'gemini', 'openai-chat', 'openhands'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** Where a turn came from in the input, so a writer can reproduce or replace exactly those bytes. */
export interface SourceRef {
  /** Indexes into `ParsedDocument.records` (several when one turn spans lines, e.g. a Claude Code response). */
  readonly records: readonly number[];
  /**
   * The records in the order the turn's text joins them, when that is not their order in the file (a
   * Claude Code response whose lines its chain reads out of file order). A batch that reads a grown
   * file on keeps a turn's count by its lines in this order.
   */
  readonly joined?: readonly number[];
  /** Position inside the record's JSON, e.g. `messages[3]` or `payload.replacement_history[2]`. */
  readonly path?: string;
}

/**
 * Content that is not text to tokenize (images, PDFs, encrypted reasoning): estimated by the
 * provider's rule instead.
 */
export interface OpaqueBlob {
  readonly kind: 'image' | 'document' | 'encrypted';
  /** Whose rule applies. */
  readonly provider: 'anthropic' | 'openai' | 'gemini';
  /** Length of the base64 payload in characters (0 when only a URL is known). */
  readonly base64Length: number;
  readonly mediaType?: string;
  /** Pixel size when the image header could be read. */
  readonly width?: number;
  readonly height?: number;
  /** The file's own count for this blob, when it records one (e.g. Codex reasoning tokens). */
  readonly recordedTokens?: number;
}

/** One turn as a format adapter read it, with where it came from in the file (what prune plans and writers work on). */
export interface TranscriptEntry {
  /** The canonical turn (SPEC §4). `content` is exactly the text the model sees, for counting. */
  readonly turn: ConversationTurn;
  readonly source: SourceRef;
  readonly blobs: readonly OpaqueBlob[];
  /**
   * Set when the entry stays in the history but the provider leaves it out of the request
   * (e.g. Codex reasoning from an earlier turn): it is counted as 0 tokens, and this says why.
   */
  readonly notSent?: string;
  /** Tool call / result ids, when the entry makes or answers tool calls. */
  readonly links?: ToolLinks;
  /** `false` for a tool result whose body cannot be replaced by a placeholder (e.g. Codex tool definitions). */
  readonly maskable?: false;
}

/** What the file itself says about the size of the context (real usage from the provider). */
export interface RecordedUsage {
  /** Tokens in the context window at the last recorded call. */
  readonly contextTokens: number;
  /** Where the number came from, in words, e.g. "last assistant usage (input + cache)". */
  readonly source: string;
  /** The model's context window, when the file records it (Codex `model_context_window`). */
  readonly contextWindow?: number;
  /** Index into `entries` of the turn at which the usage was recorded, when known. */
  readonly atEntry?: number;
}

/**
 * One recorded API call: what the provider counted for a request made of `entries[0, entriesBefore)`
 * plus whatever the file does not hold (system prompt, tool definitions).
 */
export interface UsagePoint {
  readonly entriesBefore: number;
  readonly contextTokens: number;
}

/** What the file says about the model and its window. */
export interface ModelRecord {
  /** The model id the agent used last, e.g. `claude-opus-4-5-20251101`. */
  readonly id?: string;
  /** Where the id came from when the file did not name it: `--agent-model`, or the config key. */
  readonly idFrom?: string;
  /** The window the agent's own records show (Codex `model_context_window`, a Claude Code 1M-mode session). */
  readonly recordedWindow?: number;
  /** How the recorded window was seen, in words. */
  readonly recordedWindowHow?: string;
  /** The agent itself (for its defaults): Claude Code runs Claude models with a 200k window unless recorded otherwise. */
  readonly agent?: 'claude-code' | 'codex' | 'gemini-cli' | 'openhands';
}

/** An automatic or manual compaction the agent recorded, with the size it measured before it. */
export interface CompactionRecord {
  readonly preTokens: number;
  readonly trigger: string;
  readonly timestamp?: string;
}

export interface Transcript {
  readonly format: FormatName;
  /** The active context, in order: what would be sent to the model next. */
  readonly entries: readonly TranscriptEntry[];
  /** Adapter-level findings (dangling parent links, unknown record shapes that were skipped…). */
  readonly issues: readonly ReadIssue[];
  readonly recorded?: RecordedUsage;
  /** Every fresh recorded API call on the active context, in order (stale ones, from before a prune, left out). */
  readonly usage?: readonly UsagePoint[];
  readonly model?: ModelRecord;
  /** The session's whole life: compactions (each with the size before it) and the largest recorded context. */
  readonly lifetime?: {
    readonly compactions: readonly CompactionRecord[];
    readonly peakRecorded: number;
    /** The earliest and latest timestamps of any line in the file (before compactions too). */
    readonly span?: { readonly first: string; readonly last: string };
  };
  /**
   * The calibration (model tokens = overhead + scale × estimate) a devs-ctx prune recorded on the
   * boundary it wrote: the session's fit before the prune, which still maps what is left. Calls the
   * agent makes after the prune win over it.
   */
  readonly carriedCalibration?: { readonly overhead: number; readonly scale: number };
  /** Short facts about how the file was read, e.g. "2 compact boundaries: counting after the last". */
  readonly notes: readonly string[];
}

/**
 * How an entry takes part in tool use, so a call and its result(s) are never separated.
 * `calls`: ids of the tool calls this entry makes; `answers`: ids of the calls it answers.
 * Ids are the format's own (`tool_use.id`, `call_id`, …) or, where the format has none, ids the
 * adapter makes up consistently (e.g. Gemini `msgId#i`).
 */
export interface ToolLinks {
  readonly calls?: readonly string[];
  readonly answers?: readonly string[];
}
