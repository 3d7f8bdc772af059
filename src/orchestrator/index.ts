// The refresh and orchestrator part of the library's surface (seeds 000 and 004), re-exported by
// src/index.ts. Never imports src/cli.

export { ContextRefresher, formatRefresh, REFRESH_PREFIX, DEFAULT_REFRESH_THRESHOLD } from '../core/refresh/context-refresher.js';
export type { SummaryProvider, RefreshResult, ContextRefresherOptions } from '../core/refresh/context-refresher.js';
export { OrchestratorContextInjector, prependRefresh, refreshTurn } from '../core/refresh/orchestrator-context-injector.js';
export type { RefreshTurnFields } from '../core/refresh/orchestrator-context-injector.js';
export { planRefresh, pendingToolCall, isRefreshTurn, countsTowardRefresh } from '../core/refresh/decision.js';
export type { RefreshDecision, RefreshDecisionOptions, RefreshStatus } from '../core/refresh/decision.js';
export {
  StaticSummaryProvider,
  PinnedTurnsSummaryProvider,
  CondensingSummaryProvider,
  OutlineCondenser,
  MemorySummaryCache,
  summarizerCondenser,
  pinnedDocuments,
  condensationKey,
} from '../providers/summary-providers.js';
export type { Condenser, CondensingOptions, ProjectDocuments, SummaryCache } from '../providers/summary-providers.js';
export { FileSummaryCache } from '../providers/summary-cache.js';
export { FileSummaryProvider } from '../io/file-summary-provider.js';
export { OrchestratorLoop, taskContext } from './orchestrator-loop.js';
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
} from './orchestrator-loop.js';
