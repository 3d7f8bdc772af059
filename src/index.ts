// The library's public surface: explicit named exports; never imports src/cli.

// Turns and windows [SPEC §4]
export { TurnSchema, TurnRoleSchema, TurnTypeSchema, SaopEnvelopeSchema } from './core/turn.js';
export type { ConversationTurn, ContextWindow, TurnRole, TurnType, SaopEnvelope } from './core/turn.js';
export type { ReadIssue } from './core/issues.js';

// Policy (seed 001) [SPEC §6]
export {
  shouldTriggerSoftPrune,
  shouldTriggerHardPrune,
  classifyPruneUrgency,
  selectTurnsForSummarization,
  partitionTurns,
  isPinnedTurn,
  PINNED_TURN_TYPES,
  DEFAULT_PRUNER_CONFIG,
  DEFAULT_SOFT_LIMIT_TOKENS,
  DEFAULT_HARD_LIMIT_TOKENS,
  DEFAULT_PINNED_PREFIX_TURNS,
  DEFAULT_PROTECTED_TAIL_TURNS,
  MIN_SUMMARIZATION_CANDIDATES,
} from './core/policy.js';
export type { PruneUrgency, PrunerConfig, TurnPartition } from './core/policy.js';

// Token accounting [SPEC §5]
export { annotateWithTokenEstimates, countEntries, toContextWindow } from './core/accounting.js';
export type { EntryTokens, TextTokenCounter } from './core/accounting.js';
export { loadCounter, ENCODING_NAMES } from './core/tokens/encodings.js';
export type { EncodingName } from './core/tokens/encodings.js';
export { estimateBlobTokens } from './core/tokens/blobs.js';

// Configuration
export { resolveSettings, limitsFromWindow, parseConfigFile, ConfigFileSchema, CONFIG_FILE_NAME } from './core/config.js';
export type { Settings, ConfigFile, SettingFlags } from './core/config.js';
export { findConfigFile, loadConfig } from './io/config.js';

// Reading transcripts
export { readDocument, parseDocument, serializeDocument } from './io/jsonl.js';
export type { ParsedDocument, RawRecord } from './io/jsonl.js';
export { ADAPTERS, FORMAT_NAMES, adapterFor, detectFormat, readTranscript, isFormatName } from './formats/index.js';
export type {
  FormatAdapter,
  FormatName,
  OpaqueBlob,
  RecordedUsage,
  SourceRef,
  Transcript,
  TranscriptEntry,
} from './formats/index.js';

// Reports and errors
export { buildAnalyzeReport, worstUrgency, ANALYZE_SCHEMA_VERSION } from './core/report.js';
export type { AnalyzeReport } from './core/report.js';
export { ExitCode, DevsCtxError, UsageError, InputError, InvalidTranscriptError } from './core/errors.js';
