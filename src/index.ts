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
// loadCounter uses the package's prebuilt binary rank tables (dist/ranks/) when they are there.
import { installPrebuiltRankTables } from './io/rank-tables.js';
installPrebuiltRankTables();
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
export { analyzeContext, sessionLimits, withSessionLimits, forecastAgentCompaction } from './core/session-context.js';
export type { SessionContext, SessionLimits, LimitSource, AgentCompaction, SessionLife } from './core/session-context.js';
export { contextSize, calibrate, fitUsage, toModelTokens, toEstimateTokens } from './core/context-size.js';
export type { ContextSize, ContextFit, ContextBasis, Calibration } from './core/context-size.js';
export { modelWindow, catalogWindow } from './core/models.js';
export type { ModelWindow } from './core/models.js';
export { inferGoal, isSubstantiveRequest } from './core/goal.js';
export type { InferredGoal } from './core/goal.js';
export type { AnalyzeReport } from './core/report.js';
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
} from './core/errors.js';

// Pruning [SPEC §6, seeds 000, 002, 003]
export { ContextPruner, pruneToBudget } from './core/prune/context-pruner.js';
export type { PruneResult, ContextPrunedEvent, ContextPrunerOptions } from './core/prune/context-pruner.js';
export { DRIFT_GUARD_PINNED_TYPES } from './core/prune/context-entry.js';
export type { ContextEntry, BudgetPruner } from './core/prune/context-entry.js';
export { planPrune, defaultTargetTokens, PRUNE_STRATEGIES, summaryRule, summaryBudgetFor, DEFAULT_SUMMARY_SHARE } from './core/prune/plan.js';
export type { PrunePlan, PrunePolicy, PlanEntry, PruneAction, PruneStrategy, SummaryBudgetRule } from './core/prune/plan.js';
export { applyEdit, planToEdit } from './core/prune/apply.js';
export { SUMMARY_PREFIX } from './core/prune/edit.js';
export type { TranscriptEdit, SummaryInsert } from './core/prune/edit.js';
export { buildUnits } from './core/prune/units.js';
export type { PruneUnit } from './core/prune/units.js';
export { preparePrune, summaryReserveFor, maskPlaceholder } from './core/prune/engine.js';
export type { PruneRequest, PreparedPrune } from './core/prune/engine.js';
export { cosineSimilarity, scoreRelevance, findActiveTask } from './core/prune/relevance.js';
export { SlidingRelevanceWindow, ContextCompressor } from './core/prune/sliding-window.js';
export type { RelevanceWindowOptions, ContextCompressorOptions } from './core/prune/sliding-window.js';
export { buildPruneReport, PRUNE_SCHEMA_VERSION } from './core/prune/report.js';
export type { PruneReport } from './core/prune/report.js';
export { pruneDocument } from './prune/document.js';
export type { DocumentPrune } from './prune/document.js';

// Refresh and the orchestrator loop [SPEC §6 Refresh, §9; seeds 000, 004]
export {
  ContextRefresher,
  OrchestratorContextInjector,
  OrchestratorLoop,
  formatRefresh,
  prependRefresh,
  refreshTurn,
  planRefresh,
  pendingToolCall,
  isRefreshTurn,
  countsTowardRefresh,
  taskContext,
  REFRESH_PREFIX,
  DEFAULT_REFRESH_THRESHOLD,
  StaticSummaryProvider,
  PinnedTurnsSummaryProvider,
  FileSummaryProvider,
  CondensingSummaryProvider,
  OutlineCondenser,
  MemorySummaryCache,
  FileSummaryCache,
  summarizerCondenser,
  pinnedDocuments,
  condensationKey,
} from './orchestrator/index.js';
export type {
  SummaryProvider,
  RefreshResult,
  ContextRefresherOptions,
  RefreshTurnFields,
  RefreshDecision,
  RefreshDecisionOptions,
  RefreshStatus,
  Condenser,
  CondensingOptions,
  ProjectDocuments,
  SummaryCache,
  ActiveTask,
  AgentStep,
  ContextRefreshedEvent,
  LoopIteration,
  OrchestratorLogEvent,
  OrchestratorLoopOptions,
  StepFunction,
  StepInput,
  WindowPruner,
} from './orchestrator/index.js';
export { buildRefreshReport, REFRESH_SCHEMA_VERSION } from './core/refresh/report.js';
export type { RefreshReport, InjectedRefresh, RefreshPlacement } from './core/refresh/report.js';

// Writing transcripts back
export { WRITERS, writerFor } from './formats/index.js';
export { writeTranscript, renderOutput, InvalidOutputError } from './formats/write.js';
export type { FormatWriter, OutputRecord, RefreshAppend } from './formats/types.js';

// Providers [SPEC §7]: interfaces and the offline defaults
export type { Embedder, Embedding, Summarizer, SummaryRequest } from './core/providers.js';
export { LocalEmbedder } from './providers/local-embedder.js';
export { ExtractiveSummarizer } from './providers/extractive-summarizer.js';
export { createDefaultContextPruner, DEFAULT_FLASH_CONFIG } from './providers/factory.js';
export type { DefaultPrunerOptions } from './providers/factory.js';

// Gemini [SPEC §7, issue 4]: @google/genai is imported only when a request is made
export type {
  LLMClient,
  EmbeddingClient,
  GenerateRequest,
  GenerateResult,
  ProviderUsage,
  FallbackEvent,
} from './core/providers.js';
export { GeminiClient, GEMINI_DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT_MS, EMBED_BATCH_SIZE } from './providers/gemini/client.js';
export type { GeminiClientOptions } from './providers/gemini/client.js';
export { DEFAULT_RETRY_POLICY } from './providers/gemini/retry.js';
export type { RetryPolicy } from './providers/gemini/retry.js';
export { FlashSummarizer, DEFAULT_CHUNK_TOKENS } from './providers/gemini/flash-summarizer.js';
export type { FlashSummarizerConfig } from './providers/gemini/flash-summarizer.js';
export { GeminiEmbedder } from './providers/gemini/embedder.js';
export type { EmbeddingCache } from './providers/gemini/embedder.js';
export { DEFAULT_SUMMARY_MODEL, DEFAULT_EMBEDDING_MODEL, PRICES_PER_MILLION, estimateCost } from './providers/gemini/pricing.js';
export { FallbackSummarizer, FallbackEmbedder } from './providers/fallback.js';
export { redactSecrets } from './core/redact.js';
export type { RedactionResult } from './core/redact.js';

// The archive [SPEC §8] (better-sqlite3 is loaded only when an archive is opened)
export { ArchiveStore, defaultArchivePath } from './archive/store.js';
export type { PruneEventInput, PruneEventSummary, ArchivedTurn, RecallHit } from './archive/records.js';
export { TieredMemoryManager, MemoryRefresher } from './archive/tiered-memory.js';
// One archive interface, two stores: a SQLite file or PostgreSQL (pg is loaded only for a postgres:// URL)
export type { Archive, RawPruneEvent } from './archive/archive.js';
export { isPostgresUrl, redactUrl } from './archive/archive.js';
export { openArchiveAt } from './archive/open.js';
export { SqliteArchive } from './archive/sqlite-archive.js';
export { PostgresArchive } from './archive/postgres.js';
export { copyArchive } from './archive/copy.js';
export type { CopyResult } from './archive/copy.js';
