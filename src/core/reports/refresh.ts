import type { FallbackEvent } from '../provider-contracts.js';
import type { FormatName } from '../transcript.js';
import type { ReadIssue } from '../issues.js';
import type { RefreshDecision, RefreshStatus } from '../refresh/decision.js';

export const REFRESH_SCHEMA_VERSION = 1;

/** How the refresh went into the transcript. */
type RefreshPlacement = 'appended' | 'envelope-rewritten';

export interface InjectedRefresh {
  /** The refresh turn's id as the transcript reads back (the envelope's own id when one was rewritten). */
  readonly turnId: string;
  readonly placement: RefreshPlacement;
  readonly tokens: number;
  /** Where the TAS and PRD came from, e.g. `file docs/tas.md`, `turn t3`, or null when there was none. */
  readonly sources: { readonly tas: string | null; readonly prd: string | null };
  /** True when a document was over its share of `--refresh-tokens` and was condensed. */
  readonly condensed: boolean;
  readonly budgetTokens: number;
  readonly text: string;
  /** Who condensed (`outline`, or `gemini:<model>`), with Gemini's usage when it was asked. */
  readonly condenser?: {
    readonly name: string;
    readonly requests: number;
    readonly tokensSent: number;
    readonly tokensReceived: number;
    readonly fallback: readonly FallbackEvent[];
  };
}

/** `devs-ctx refresh --json` (schemaVersion 1). */
export interface RefreshReport {
  readonly schemaVersion: typeof REFRESH_SCHEMA_VERSION;
  readonly file: string;
  readonly format: FormatName;
  /** `refreshed` when one was written; otherwise the decision (`due` only with --check). */
  readonly outcome: 'refreshed' | RefreshStatus;
  readonly due: boolean;
  readonly reason: string;
  readonly node: string | null;
  readonly threshold: number;
  readonly turnsSinceRefresh: number;
  readonly lastRefresh: { readonly turnId: string } | null;
  readonly injected: InjectedRefresh | null;
  /** Where the transcript went: a path, `-` (stdout), or null (--check, or --in-place with nothing to do). */
  readonly output: string | null;
  /** [SPEC §4] Lines the transcript's reader skipped or found odd, as `analyze` reports them (additive). */
  readonly issues: readonly ReadIssue[];
}

export function buildRefreshReport(input: {
  readonly file: string;
  readonly format: FormatName;
  readonly decision: RefreshDecision;
  readonly lastRefreshId: string | undefined;
  readonly injected?: InjectedRefresh;
  readonly output: string | null;
  readonly issues?: readonly ReadIssue[];
}): RefreshReport {
  const { decision } = input;
  return {
    schemaVersion: REFRESH_SCHEMA_VERSION,
    file: input.file,
    format: input.format,
    outcome: input.injected ? 'refreshed' : decision.status,
    due: decision.due,
    reason: decision.reason,
    node: decision.node,
    threshold: decision.threshold,
    turnsSinceRefresh: decision.turnsSinceRefresh,
    lastRefresh: input.lastRefreshId !== undefined ? { turnId: input.lastRefreshId } : null,
    injected: input.injected ?? null,
    output: input.output,
    issues: input.issues ?? [],
  };
}
