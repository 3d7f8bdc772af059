// The library's public surface: explicit named exports; never imports src/cli.
// The seed documents' names (SPEC §9) and what README documents; everything else is internal.

// Turns and windows [SPEC §4]
export { TurnSchema, SaopEnvelopeSchema } from './core/turn.js';
export type { ConversationTurn, ContextWindow, TurnRole, TurnType, SaopEnvelope } from './core/turn.js';

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
export { annotateWithTokenEstimates, toContextWindow } from './core/accounting.js';
export type { TextTokenCounter } from './core/accounting.js';
export { loadCounter, ENCODING_NAMES } from './core/tokens/encodings.js';
// loadCounter uses the package's prebuilt binary rank tables (dist/ranks/) when they are there.
import { installPrebuiltRankTables } from './io/rank-tables.js';
installPrebuiltRankTables();
export type { EncodingName } from './core/tokens/encodings.js';

// Configuration
export { resolveSettings } from './core/config.js';
export type { Settings, ConfigFile } from './core/config.js';
export { loadConfig } from './io/config.js';

// Reading transcripts
export { readDocument, parseDocument, serializeDocument } from './io/jsonl.js';
export type { ParsedDocument, RawRecord } from './io/jsonl.js';
export { ADAPTERS, FORMAT_NAMES, adapterFor, detectFormat, readTranscript } from './formats/index.js';
export type { FormatAdapter, FormatName, Transcript, TranscriptEntry } from './formats/index.js';
export type { ReadIssue } from './core/issues.js';

// What the commands print with --json, and the analyze report [SPEC §2]
export { buildAnalyzeReport, ANALYZE_SCHEMA_VERSION } from './core/reports/analyze.js';
export type { AnalyzeReport } from './core/reports/analyze.js';
export { PRUNE_SCHEMA_VERSION } from './core/reports/prune.js';
export type { PruneReport } from './core/reports/prune.js';
export { REFRESH_SCHEMA_VERSION } from './core/reports/refresh.js';
export type { RefreshReport } from './core/reports/refresh.js';

// Errors and exit codes [SPEC §3]
export {
  ExitCode,
  DevsCtxError,
  UsageError,
  InputError,
  InvalidTranscriptError,
  ProviderError,
  BudgetImpossibleError,
  LockedError,
  InterruptedError,
  ReplacedThenFailedError,
} from './core/errors.js';

// Pruning [SPEC §6, seeds 000, 002, 003]: ContextPruner (pruneWindow / pruneToBudget), the relevance window,
// and, lower level, the plan the CLI runs (planPrune → planToEdit → applyEdit, or preparePrune / pruneDocument).
export { ContextPruner } from './core/prune/context-pruner.js';
export type { PruneResult, ContextPrunedEvent, ContextPrunerOptions } from './core/prune/context-pruner.js';
export { DRIFT_GUARD_PINNED_TYPES } from './core/prune/context-entry.js';
export type { ContextEntry, BudgetPruner } from './core/prune/context-entry.js';
export { SlidingRelevanceWindow, ContextCompressor } from './core/prune/sliding-window.js';
export type { RelevanceWindowOptions, ContextCompressorOptions } from './core/prune/sliding-window.js';
export { planPrune, PRUNE_STRATEGIES, summaryRule, summaryBudgetFor } from './core/prune/plan.js';
export type { PrunePlan, PrunePolicy, PlanEntry, PruneAction, PruneStrategy, SummaryBudgetRule } from './core/prune/plan.js';
export { applyEdit, planToEdit } from './core/prune/apply.js';
export { SUMMARY_PREFIX } from './core/prune/edit.js';
export type { TranscriptEdit, SummaryInsert } from './core/prune/edit.js';
export { preparePrune } from './core/prune/engine.js';
export type { PruneRequest, PreparedPrune } from './core/prune/engine.js';
export { pruneDocument } from './prune/document.js';
export type { DocumentPrune } from './prune/document.js';

// Refresh and the orchestrator loop [SPEC §6 Refresh, §9; seeds 000, 004]
export { ContextRefresher, formatRefresh, REFRESH_PREFIX, DEFAULT_REFRESH_THRESHOLD } from './core/refresh/context-refresher.js';
export type { SummaryProvider, RefreshResult, ContextRefresherOptions } from './core/refresh/context-refresher.js';
export { OrchestratorContextInjector } from './core/refresh/orchestrator-context-injector.js';
export { planRefresh, isRefreshTurn } from './core/refresh/decision.js';
export type { RefreshDecision, RefreshDecisionOptions, RefreshStatus } from './core/refresh/decision.js';
export {
  StaticSummaryProvider,
  PinnedTurnsSummaryProvider,
  CondensingSummaryProvider,
  OutlineCondenser,
  MemorySummaryCache,
  summarizerCondenser,
} from './providers/summary-providers.js';
export type { Condenser, CondensingOptions, ProjectDocuments, SummaryCache } from './providers/summary-providers.js';
export { FileSummaryCache } from './providers/summary-cache.js';
export { FileSummaryProvider } from './io/file-summary-provider.js';
export { OrchestratorLoop } from './orchestrator/orchestrator-loop.js';
export type {
  ActiveTask,
  AgentStep,
  ContextRefreshedEvent,
  LoopIteration,
  OrchestratorLogEvent,
  OrchestratorLoopOptions,
  StepFunction,
  StepInput,
  WindowPruner,
} from './orchestrator/orchestrator-loop.js';

// Writing transcripts back
export { writerFor } from './formats/index.js';
export { writeTranscript, InvalidOutputError } from './formats/write.js';
export type { FormatWriter, OutputRecord, RefreshAppend } from './formats/types.js';

// Providers [SPEC §7]: interfaces and the offline defaults
export type { Embedder, Embedding, Summarizer, SummaryRequest } from './core/provider-contracts.js';
export { LocalEmbedder } from './providers/local-embedder.js';
export { ExtractiveSummarizer } from './providers/extractive-summarizer.js';
export { createDefaultContextPruner, DEFAULT_FLASH_CONFIG } from './providers/factory.js';
export type { DefaultPrunerOptions } from './providers/factory.js';
export { FallbackSummarizer, FallbackEmbedder } from './providers/fallback.js';
export { redactSecrets } from './core/redact.js';
export type { RedactionResult } from './core/redact.js';

// Gemini [SPEC §7, issue 4]: @google/genai is imported only when a request is made
export type { LLMClient, EmbeddingClient, GenerateRequest, GenerateResult, ProviderUsage, FallbackEvent } from './core/provider-contracts.js';
export { GeminiClient } from './providers/gemini/client.js';
export type { GeminiClientOptions } from './providers/gemini/client.js';
export { DEFAULT_RETRY_POLICY } from './providers/gemini/retry.js';
export type { RetryPolicy } from './providers/gemini/retry.js';
export { FlashSummarizer } from './providers/gemini/flash-summarizer.js';
export type { FlashSummarizerConfig } from './providers/gemini/flash-summarizer.js';
export { GeminiEmbedder } from './providers/gemini/embedder.js';
export type { EmbeddingCache } from './providers/gemini/embedder.js';
export { DEFAULT_SUMMARY_MODEL, DEFAULT_EMBEDDING_MODEL } from './providers/gemini/pricing.js';

// The archive [SPEC §8] (better-sqlite3 is loaded only when an archive is opened)
export { ArchiveStore } from './archive/store.js';
export type { PruneEventInput, PruneEventSummary, ArchivedTurn, RecallHit, RecordOptions } from './archive/records.js';
export { ArchiveWriteError } from './archive/errors.js';
export { TieredMemoryManager, MemoryRefresher } from './archive/tiered-memory.js';
// One archive interface, two stores: a SQLite file or PostgreSQL (pg is loaded only for a postgres:// URL)
export type { Archive, RawPruneEvent } from './archive/archive.js';
export { openArchiveAt } from './archive/open.js';
export { SqliteArchive } from './archive/sqlite-archive.js';
export { PostgresArchive } from './archive/postgres.js';
export { copyArchive } from './archive/copy.js';
export type { CopyResult } from './archive/copy.js';
