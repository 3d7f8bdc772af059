/**
 * [SPEC §3] Exit codes are a public contract: changing one is a breaking change.
 * This table, the README's and SPEC.md's must agree.
 */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  input: 3,
  invalidTranscript: 4,
  provider: 5,
  budgetImpossible: 6,
  locked: 7,
  softLimit: 10,
  hardLimit: 11,
  refreshDue: 12,
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the user can act on: it carries its exit code, a stable code name and a hint. */
export class DevsCtxError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly code: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Exit 2: a bad flag, value, environment variable or config entry. */
export class UsageError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.usage, 'usage', hint);
  }
}

/** Exit 3: input missing or unreadable, output not writable. */
export class InputError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.input, 'input', hint);
  }
}

/**
 * Exit 3 (`replaced_then_failed`): a file was replaced (the rename: a prune's commit point) and what
 * followed failed (copying the lines an agent appended in the last instant, syncing or closing the
 * new file). Unlike every other exit 3 of a write, something was changed: the new version is in
 * place, a prune stands, and its archived event is kept (restore undoes it).
 */
export class ReplacedThenFailedError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.input, 'replaced_then_failed', hint);
  }
}

/** Exit 4: nothing parseable, an unrecognised format, or any bad line under --strict. */
export class InvalidTranscriptError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.invalidTranscript, 'invalid_transcript', hint);
  }
}

/**
 * Exit 4, as any invalid transcript: the input is JSON, but in no format devs-ctx knows (another
 * tool's file). A batch leaves such a file out when a walk or a glob found it (src/cli/batch).
 */
export class UnknownFormatError extends InvalidTranscriptError {}

/** Exit 5: the summarizer or embedding provider failed or gave an unusable answer; input untouched. */
export class ProviderError extends DevsCtxError {
  constructor(
    message: string,
    readonly provider: string,
    hint?: string,
  ) {
    super(message, ExitCode.provider, 'provider_failed', hint);
  }
}

/** Exit 6: pinned and protected turns alone exceed the limit; nothing written. */
export class BudgetImpossibleError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.budgetImpossible, 'budget_impossible', hint);
  }
}

/** Exit 7: another devs-ctx holds the lock on this file. */
export class LockedError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.locked, 'locked', hint);
  }
}

/** Exit 130: interrupted (Ctrl-C, cancelled prompt); nothing written. */
export class InterruptedError extends DevsCtxError {
  constructor(message = 'interrupted; nothing was written') {
    super(message, ExitCode.interrupted, 'interrupted');
  }
}
