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

/** Exit 4: nothing parseable, an unrecognised format, or any bad line under --strict. */
export class InvalidTranscriptError extends DevsCtxError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.invalidTranscript, 'invalid_transcript', hint);
  }
}
