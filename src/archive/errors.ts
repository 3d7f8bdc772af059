import { DevsCtxError, ExitCode } from '../core/errors.js';

/** The hint every archive failure shares: the prune itself can still run without the archive. */
const NO_ARCHIVE_HINT = 'pass --no-archive to prune without archiving (removed turns then cannot be restored or recalled)';

/** better-sqlite3's native module could not be loaded, so there is no archive to write to (exit 3). */
export class ArchiveUnavailableError extends DevsCtxError {
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    super(
      `the SQLite archive is unavailable: better-sqlite3's native build is missing or does not load (${reason}); run \`npm rebuild better-sqlite3\`, or use --no-archive`,
      ExitCode.input,
      'archive_unavailable',
      `run \`npm rebuild better-sqlite3\` in devs-ctx's install directory, or ${NO_ARCHIVE_HINT}`,
    );
    this.cause = cause;
  }
}

/** The archive was created by a newer devs-ctx: its schema is one this code does not know (exit 3). */
export class ArchiveSchemaError extends DevsCtxError {
  constructor(path: string, found: number, known: number) {
    super(
      `the archive at ${path} has schema version ${found}, newer than this devs-ctx knows (${known}); it was written by a newer devs-ctx`,
      ExitCode.input,
      'archive_schema',
      'upgrade devs-ctx, or point DEVS_CTX_ARCHIVE at another file',
    );
  }
}

/** Writing a prune event failed; nothing of it was stored, unless `stillListed` names it (exit 3). */
export class ArchiveWriteError extends DevsCtxError {
  /** `stillListed`: the prune was committed and could not be taken out again (the archive lists a prune that did not happen). */
  constructor(
    path: string,
    cause: unknown,
    readonly stillListed?: string,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const what =
      stillListed === undefined
        ? 'nothing was archived, the transcript was not written'
        : `the transcript was not written, but the archive may still list prune ${stillListed}, which did not happen; ignore it in recall`;
    super(`could not archive the prune in ${path} (${what}): ${reason}`, ExitCode.input, 'archive_write', NO_ARCHIVE_HINT);
    this.cause = cause;
  }
}

/** No prune event with this id (exit 2: a bad value on the command line). */
export class UnknownPruneEventError extends DevsCtxError {
  constructor(eventId: string) {
    super(
      `no prune event ${eventId} in the archive`,
      ExitCode.usage,
      'archive_event_not_found',
      'check the event id; without one, restore picks the latest prune whose output the file still starts with',
    );
  }
}

/**
 * The transcript on disk no longer starts with what the prune wrote: something other than appending
 * changed it, so the original cannot be rebuilt from it (exit 3).
 */
export class TranscriptChangedError extends DevsCtxError {
  constructor(eventId: string, detail: string) {
    super(
      `the transcript changed since prune ${eventId} in a way restore cannot undo (only turns appended after the prune can be kept): ${detail}`,
      ExitCode.input,
      'transcript_changed',
      'restore works on the pruned file as written, plus anything appended to it; an older copy of the original may still be in a backup',
    );
  }
}

/** The archive's bytes do not rebuild the original (a damaged archive or a bug): nothing is returned (exit 3). */
export class ArchiveCorruptError extends DevsCtxError {
  constructor(
    readonly eventId: string,
    readonly detail: string,
    store: 'sqlite' | 'postgres' = 'sqlite',
  ) {
    super(
      `the archive cannot rebuild the transcript of prune ${eventId}: ${detail}`,
      ExitCode.input,
      'archive_corrupt',
      store === 'postgres'
        ? 'the PostgreSQL archive may be damaged; check the database with `pg_amcheck` and restore it from a backup if it reports errors'
        : 'the archive may be damaged; check it with `sqlite3 ARCHIVE "PRAGMA integrity_check"`',
    );
  }
}

/**
 * The PostgreSQL archive could not be reached or opened (refused, timed out, TLS refused, bad
 * credentials): exit 3, naming the server without its password.
 */
export class ArchiveConnectError extends DevsCtxError {
  constructor(location: string, reason: string) {
    super(
      `cannot open the PostgreSQL archive at ${location}: ${reason}`,
      ExitCode.input,
      'archive_connect',
      `check that the server is up and reachable, the user, password and database, and sslmode; connect_timeout=SECONDS in the URL sets how long to wait (default 10); or ${NO_ARCHIVE_HINT}`,
    );
  }
}

/** A query of the PostgreSQL archive failed once it was open (the server went away, say): exit 3, with the reason. */
export class ArchiveQueryError extends DevsCtxError {
  constructor(
    location: string,
    readonly reason: string,
  ) {
    super(
      `the PostgreSQL archive at ${location} failed: ${reason}`,
      ExitCode.input,
      'archive_query',
      'check that the server is up and reachable, then run the command again',
    );
  }
}
