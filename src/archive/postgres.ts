import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Pool, PoolClient, QueryResult } from 'pg';
import type { Archive, RawPruneEvent } from './archive.js';
import { redactUrl, storableText } from './archive.js';
import { DevsCtxError, InputError } from '../core/errors.js';
import { ArchiveConnectError, ArchiveCorruptError, ArchiveQueryError, ArchiveSchemaError, ArchiveWriteError, UnknownPruneEventError } from './errors.js';
import { snippetOf, tsQueries } from './fts-query.js';
import { assertStartsWithOutput, restoreBytes, RestoreLayoutSchema, startsWithOutput } from './layout.js';
import { ArchivedTurnRowSchema, PruneEventRowSchema, RecallRowSchema } from './records.js';
import type { ArchivedTurn, PruneEventInput, PruneEventSummary, RecallHit, RecallOptions } from './records.js';
import {
  EVENT_COLUMNS,
  planRecord,
  rawEventFromRow,
  rawRecordFromRow,
  rawTurnFromRow,
  MAX_PLACEHOLDER_HOPS,
  PLACEHOLDER_START,
  SAME_TRANSCRIPT,
} from './store.js';
import type { RawRecordRow, RawTurnRow } from './store.js';

/**
 * The archive's PostgreSQL schema, as forward-only migrations: migration i takes the database from
 * version i to i + 1, recorded in devs_ctx_schema_migrations. Never edit a released one; append.
 *
 * Full-text search: a stored tsvector over the turn id (weight A), the content (B) and the type
 * (D), with a GIN index. The text is split into runs of letters and digits before to_tsvector
 * (`simple`, no stemming), the way SQLite's unicode61 tokenizer and tsQueries split it, so a path
 * like src/archive/store.ts is found by "store"; accents are taken off (NFD, combining marks
 * U+0300–U+036F removed) the way unicode61's remove_diacritics does, so "cafe" finds "café".
 * normalize() needs a UTF8 database. Only the first 300,000 characters of a turn are
 * indexed (a tsvector is at most 1 MB); the whole text is kept.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE prune_events (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    created_at text NOT NULL,
    source_path text NOT NULL,
    format text NOT NULL,
    strategy text NOT NULL,
    target_tokens integer NOT NULL,
    urgency text NOT NULL,
    goal text,
    tokens_before integer NOT NULL,
    tokens_after integer NOT NULL,
    removed_turn_count integer NOT NULL,
    masked_turn_count integer NOT NULL,
    tokens_saved integer NOT NULL,
    summary_text text,
    original_sha256 text NOT NULL,
    original_bytes bigint NOT NULL,
    output_sha256 text NOT NULL,
    output_bytes bigint NOT NULL,
    bom smallint NOT NULL CHECK (bom IN (0, 1)),
    layout text NOT NULL
  );
  CREATE INDEX prune_events_by_source ON prune_events (source_path, created_at);
  CREATE INDEX prune_events_by_output ON prune_events (output_bytes, output_sha256);

  CREATE TABLE archived_records (
    event_id text NOT NULL REFERENCES prune_events (id) ON DELETE CASCADE,
    record_index integer NOT NULL CHECK (record_index >= 0),
    bytes bytea NOT NULL,
    PRIMARY KEY (event_id, record_index)
  );

  CREATE TABLE archived_turns (
    id bigserial PRIMARY KEY,
    event_id text NOT NULL REFERENCES prune_events (id) ON DELETE CASCADE,
    entry_index integer NOT NULL CHECK (entry_index >= 0),
    turn_id text NOT NULL,
    role text NOT NULL,
    type text NOT NULL,
    action text NOT NULL CHECK (action IN ('dropped', 'masked')),
    tokens integer NOT NULL,
    content text NOT NULL,
    timestamp text,
    records text NOT NULL,
    search tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('simple'::regconfig, regexp_replace(regexp_replace(normalize(turn_id, NFD), '[\u0300-\u036f]+', '', 'g'), '[^[:alnum:]]+', ' ', 'g')), 'A')
      || setweight(to_tsvector('simple'::regconfig, regexp_replace(regexp_replace(normalize(left(content, 300000), NFD), '[\u0300-\u036f]+', '', 'g'), '[^[:alnum:]]+', ' ', 'g')), 'B')
      || setweight(to_tsvector('simple'::regconfig, regexp_replace(regexp_replace(normalize(type, NFD), '[\u0300-\u036f]+', '', 'g'), '[^[:alnum:]]+', ' ', 'g')), 'D')
    ) STORED,
    UNIQUE (event_id, entry_index)
  );
  CREATE INDEX archived_turns_by_turn_id ON archived_turns (turn_id);
  CREATE INDEX archived_turns_search ON archived_turns USING gin (search);
  `,
  // 2: Gemini embeddings cached by model (with endpoint) and content hash, so an unchanged turn is
  // embedded once. Stored as in SQLite's embedding_cache: little-endian float32 bytes, dims of them.
  `
  CREATE TABLE embedding_cache (
    model text NOT NULL,
    content_hash text NOT NULL,
    dims integer NOT NULL CHECK (dims > 0),
    vector bytea NOT NULL CHECK (octet_length(vector) = dims * 4),
    created_at text NOT NULL,
    PRIMARY KEY (model, content_hash)
  );
  `,
];
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** Advisory lock key that serialises migrations across every machine using the database. */
const MIGRATION_LOCK = 0x64657673_6374; // "devsct"
const DEFAULT_CONNECT_TIMEOUT_S = 10;
const DEFAULT_RECALL_LIMIT = 20;
/** ts_rank weights {D, C, B, A}: type 0.1, content 0.2, turn id 1.0 (the SQLite store's 0.5 : 1 : 5). */
const RANK_WEIGHTS = '{0.1, 0, 0.2, 1.0}';
/** Characters of a turn read for its excerpt (bounded work per hit), and the excerpt's words. */
const HEADLINE_CHARS = 20_000;
const SNIPPET_WORDS = 16;

type PgModule = typeof import('pg');

function loadPg(): PgModule {
  return createRequire(import.meta.url)('pg') as PgModule;
}

/** `connect_timeout` (seconds, as libpq reads it) from the URL, else 10. */
export function connectTimeoutMs(url: string): number {
  try {
    const raw = new URL(url).searchParams.get('connect_timeout');
    const seconds = raw === null ? NaN : Number(raw);
    return (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_CONNECT_TIMEOUT_S) * 1000;
  } catch {
    return DEFAULT_CONNECT_TIMEOUT_S * 1000;
  }
}

/**
 * The URL for node-postgres with `sslmode` read as libpq reads it (and as the README says): `prefer`
 * and `require` encrypt without checking the certificate (`require` with `sslrootcert` checks the
 * chain), `verify-ca` checks the chain but not the host name. node-postgres 8 reads all three as
 * `verify-full` unless told `uselibpqcompat=true` (and warns on stderr); `no-verify`, which libpq
 * lacks, is left to it as it is.
 */
function withLibpqSslModes(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  if (params.has('uselibpqcompat') || !['prefer', 'require', 'verify-ca'].includes(params.get('sslmode') ?? '')) return url;
  return `${url}&uselibpqcompat=true`;
}

/** An error's message with the URL's password taken out, wherever a driver put it. */
function scrub(error: unknown, url: string): string {
  // A failed query's reason, without the "archive failed" around it (the caller says what failed).
  let message = error instanceof ArchiveQueryError ? error.reason : error instanceof Error ? error.message : String(error);
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) message = message.replaceAll(password, '***');
  } catch {
    // not a URL: nothing to take out
  }
  return message.replaceAll(url, redactUrl(url)).split('\n')[0] ?? message;
}

const TURN_COLUMNS = 'event_id, entry_index, turn_id, role, type, action, tokens, content, timestamp, records';

/**
 * The PostgreSQL archive [SPEC §8], for a team or for agents in throwaway containers: the same
 * events, bytes and turns as the SQLite store, written by many machines at once. Each write is one
 * transaction; migrations run on first use under an advisory lock.
 */
export class PostgresArchive implements Archive {
  readonly kind = 'postgres' as const;
  readonly location: string;

  private constructor(
    private readonly pool: Pool,
    private readonly url: string,
  ) {
    this.location = redactUrl(url);
  }

  /**
   * Connects (giving up after connect_timeout) and brings the schema up to date. With
   * `mustExist`, a database devs-ctx never wrote to is refused instead of set up.
   */
  static async open(url: string, options: { readonly mustExist?: boolean } = {}): Promise<PostgresArchive> {
    const archive = PostgresArchive.connect(url);
    try {
      await archive.migrate(options.mustExist === true);
    } catch (error) {
      throw await archive.failed(error);
    }
    return archive;
  }

  /**
   * Connects without writing anything, not even a migration: the archive when its schema is this
   * devs-ctx's, undefined when devs-ctx never set the database up or an older one did (nothing
   * could be read from it). A newer schema is refused (ArchiveSchemaError).
   */
  static async openIfCurrent(url: string): Promise<PostgresArchive | undefined> {
    const archive = PostgresArchive.connect(url);
    let seen: number | undefined;
    try {
      seen = await archive.schemaVersion();
      if (seen !== undefined && seen > PG_SCHEMA_VERSION) throw new ArchiveSchemaError(archive.location, seen, PG_SCHEMA_VERSION);
    } catch (error) {
      throw await archive.failed(error);
    }
    if (seen === PG_SCHEMA_VERSION) return archive;
    await archive.close().catch(() => {});
    return undefined;
  }

  /** Closes the pool and turns a failure to open into the error to report. */
  private async failed(error: unknown): Promise<Error> {
    await this.pool.end().catch(() => {});
    if (error instanceof ArchiveSchemaError || error instanceof ArchiveConnectError) return error;
    return new ArchiveConnectError(this.location, scrub(error, this.url));
  }

  private static connect(url: string): PostgresArchive {
    const pg = loadPg();
    const parseInt8 = (value: string): number => Number(value);
    const pool = new pg.Pool({
      connectionString: withLibpqSslModes(url),
      connectionTimeoutMillis: connectTimeoutMs(url),
      max: 4,
      application_name: 'devs-ctx',
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text'))) as never,
      },
    });
    // An idle connection the server drops emits 'error' on the pool: without a listener it would crash the process.
    pool.on('error', () => {});
    return new PostgresArchive(pool, url);
  }

  private async migrate(mustExist: boolean): Promise<void> {
    const known = PG_MIGRATIONS.length;
    const seen = await this.schemaVersion();
    if (seen === undefined && mustExist) {
      throw new ArchiveConnectError(this.location, 'no devs-ctx archive in this database yet (nothing was pruned into it)');
    }
    if (seen !== undefined && seen > known) throw new ArchiveSchemaError(this.location, seen, known);
    // Fast path without a lock or DDL: most opens find the schema up to date (and a role without CREATE can use it).
    if (seen === known) return;
    await this.transaction(async (client) => {
      // Two machines starting at once: the second waits here, then finds the work done.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(`CREATE TABLE IF NOT EXISTS devs_ctx_schema_migrations (
        version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const current = Number((await client.query('SELECT coalesce(max(version), 0) AS v FROM devs_ctx_schema_migrations')).rows[0]?.v ?? 0);
      if (current > known) throw new ArchiveSchemaError(this.location, current, known);
      for (let version = current; version < known; version++) {
        await client.query(PG_MIGRATIONS[version] ?? '');
        await client.query('INSERT INTO devs_ctx_schema_migrations (version) VALUES ($1)', [version + 1]);
      }
    });
  }

  /** The schema version recorded in the database, undefined when devs-ctx never migrated it. */
  async schemaVersion(): Promise<number | undefined> {
    const exists = await this.query("SELECT to_regclass('devs_ctx_schema_migrations') IS NOT NULL AS present");
    if (exists.rows[0]?.present !== true) return undefined;
    return Number((await this.query('SELECT coalesce(max(version), 0) AS v FROM devs_ctx_schema_migrations')).rows[0]?.v ?? 0);
  }

  /**
   * A query on a connection of the pool. A failure that is not ours (the server gone, a connection
   * cut) is the archive's failure, with its reason (exit 3), not a bug of devs-ctx.
   */
  private async query(text: string, values?: unknown[]): Promise<QueryResult> {
    try {
      return await this.pool.query(text, values);
    } catch (error) {
      throw this.queryError(error);
    }
  }

  private queryError(error: unknown): Error {
    return error instanceof DevsCtxError ? error : new ArchiveQueryError(this.location, scrub(error, this.url));
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.queryError(error);
    }
    // A connection that drops while checked out emits 'error' on its client: with no listener the
    // process would crash. The query under way fails too, and that failure is the one reported.
    const ignore = (): void => {};
    client.on('error', ignore);
    let failure: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => {});
      throw this.queryError(error);
    } finally {
      client.off('error', ignore);
      // A connection that failed is not given back to the pool for another query: it is closed.
      client.release(failure);
    }
  }

  async recordPrune(event: PruneEventInput): Promise<void> {
    try {
      const { row, archivedRecords } = planRecord(event);
      await this.transaction(async (client) => {
        await this.insertEvent(client, row);
        await this.insertRows(
          client,
          event.id,
          [...archivedRecords].map(([index, bytes]) => ({ index, bytes })),
          event.turns.map((t) => ({ ...t, timestamp: t.timestamp ?? null, records: JSON.stringify(t.records) })),
        );
      });
    } catch (error) {
      throw new ArchiveWriteError(this.location, new Error(scrub(error, this.url)));
    }
  }

  /** Inserts the event row; false when its id is there already and `skipExisting`. */
  private async insertEvent(client: PoolClient, e: RawPruneEvent['event'], skipExisting = false): Promise<boolean> {
    const result = await client.query(
      `INSERT INTO prune_events (
        id, created_at, source_path, format, strategy, target_tokens, urgency, goal, tokens_before, tokens_after,
        removed_turn_count, masked_turn_count, tokens_saved, summary_text, original_sha256, original_bytes,
        output_sha256, output_bytes, bom, layout)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
      ${skipExisting ? 'ON CONFLICT (id) DO NOTHING' : ''}`,
      [
        e.id,
        e.createdAt,
        storableText(e.sourcePath),
        e.format,
        e.strategy,
        e.targetTokens,
        storableText(e.urgency),
        e.goal === null ? null : storableText(e.goal),
        e.tokensBefore,
        e.tokensAfter,
        e.removedTurnCount,
        e.maskedTurnCount,
        e.tokensSaved,
        e.summaryText === null ? null : storableText(e.summaryText),
        e.originalSha256,
        e.originalBytes,
        e.outputSha256,
        e.outputBytes,
        e.bom ? 1 : 0,
        e.layout,
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /** An event's archived lines and turns, each table in one statement. */
  private async insertRows(client: PoolClient, eventId: string, records: RawPruneEvent['records'], turns: RawPruneEvent['turns']): Promise<void> {
    if (records.length > 0) {
      await client.query('INSERT INTO archived_records (event_id, record_index, bytes) SELECT $1, * FROM unnest($2::integer[], $3::bytea[])', [
        eventId,
        records.map((r) => r.index),
        records.map((r) => r.bytes),
      ]);
    }
    if (turns.length > 0) {
      await client.query(
        `INSERT INTO archived_turns (${TURN_COLUMNS})
         SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[], $9::text[], $10::text[])`,
        [
          eventId,
          turns.map((t) => t.entryIndex),
          turns.map((t) => storableText(t.turnId)),
          turns.map((t) => storableText(t.role)),
          turns.map((t) => storableText(t.type)),
          turns.map((t) => t.action),
          turns.map((t) => t.tokens),
          turns.map((t) => storableText(t.content)),
          turns.map((t) => (t.timestamp === null ? null : storableText(t.timestamp))),
          turns.map((t) => t.records),
        ],
      );
    }
  }

  async forgetPrune(eventId: string): Promise<boolean> {
    return this.transaction(async (client) => {
      await client.query('DELETE FROM archived_turns WHERE event_id = $1', [eventId]);
      await client.query('DELETE FROM archived_records WHERE event_id = $1', [eventId]);
      return ((await client.query('DELETE FROM prune_events WHERE id = $1', [eventId])).rowCount ?? 0) > 0;
    });
  }

  async getEvent(eventId: string): Promise<PruneEventSummary | undefined> {
    const { rows } = await this.query(`SELECT ${EVENT_COLUMNS} FROM prune_events WHERE id = $1`, [eventId]);
    return rows[0] === undefined ? undefined : PruneEventRowSchema.parse(rows[0]);
  }

  async listEvents(options: { readonly sourcePath?: string; readonly limit?: number } = {}): Promise<PruneEventSummary[]> {
    const { rows } = await this.query(`SELECT ${EVENT_COLUMNS} FROM prune_events WHERE ($1::text IS NULL OR source_path = $1) ORDER BY seq DESC LIMIT $2`, [
      options.sourcePath ?? null,
      options.limit ?? null,
    ]);
    return rows.map((row) => PruneEventRowSchema.parse(row));
  }

  async findRestorable(currentBytes: Buffer, options: { readonly eventId?: string } = {}): Promise<PruneEventSummary | undefined> {
    if (options.eventId !== undefined) {
      const event = await this.getEvent(options.eventId);
      return event && startsWithOutput(currentBytes, event.output) ? event : undefined;
    }
    const sizes =
      // A `compaction` event (an agent's window archived before it compacted) changed no file: nothing to undo.
      (
        await this.query(`SELECT DISTINCT output_bytes AS size FROM prune_events WHERE output_bytes <= $1 AND strategy <> 'compaction' ORDER BY output_bytes`, [
          currentBytes.length,
        ])
      ).rows.map((row: { size: number }) => row.size);
    if (sizes.length === 0) return undefined;
    // One pass over the file: hash it incrementally, a copy of the digest at each candidate size.
    const hash = createHash('sha256');
    let hashed = 0;
    const digests: string[] = [];
    for (const size of sizes) {
      hash.update(currentBytes.subarray(hashed, size));
      hashed = size;
      digests.push(hash.copy().digest('hex'));
    }
    const { rows } = await this.query(
      `SELECT e.id FROM prune_events e JOIN unnest($1::bigint[], $2::text[]) AS p (size, sha) ON e.output_bytes = p.size AND e.output_sha256 = p.sha
       WHERE e.strategy <> 'compaction' ORDER BY e.seq DESC LIMIT 1`,
      [sizes, digests],
    );
    const id = (rows[0] as { id: string } | undefined)?.id;
    return id === undefined ? undefined : this.getEvent(id);
  }

  async restore(eventId: string, currentBytes: Buffer): Promise<Buffer> {
    const { rows } = await this.query('SELECT layout FROM prune_events WHERE id = $1', [eventId]);
    const event = await this.getEvent(eventId);
    const row = rows[0] as { layout: string } | undefined;
    if (!row || !event) throw new UnknownPruneEventError(eventId);
    assertStartsWithOutput(eventId, currentBytes, event.output);
    let layout: unknown;
    try {
      layout = JSON.parse(row.layout);
    } catch {
      layout = undefined;
    }
    const parsed = RestoreLayoutSchema.safeParse(layout);
    if (!parsed.success) throw new ArchiveCorruptError(eventId, 'its restore layout is not readable', 'postgres');
    const archived = new Map<number, Buffer>();
    const records = await this.query('SELECT record_index, bytes FROM archived_records WHERE event_id = $1', [eventId]);
    for (const record of records.rows as Array<{ record_index: number; bytes: Buffer }>) archived.set(record.record_index, record.bytes);
    try {
      return restoreBytes({ eventId, layout: parsed.data, archived, current: currentBytes, output: event.output, original: event.original });
    } catch (error) {
      // The layout check is shared with SQLite; its hint must name this store's tools, not sqlite3.
      if (error instanceof ArchiveCorruptError) throw new ArchiveCorruptError(error.eventId, error.detail, 'postgres');
      throw error;
    }
  }

  async recall(query: string, options: RecallOptions = {}): Promise<RecallHit[]> {
    const queries = tsQueries(query);
    if (!queries) return [];
    const [open, close] = options.highlight ?? ['«', '»'];
    const run = async (tsquery: string): Promise<RecallHit[]> => {
      const { rows } = await this.query(
        `SELECT hit.event_id, hit.entry_index, hit.turn_id, hit.role, hit.type, hit.action, hit.tokens, hit.timestamp,
           hit.created_at, hit.source_path, hit.strategy, -hit.score AS rank,
           left(hit.content, ${HEADLINE_CHARS}) AS excerpt
         FROM (
           SELECT t.event_id, t.entry_index, t.turn_id, t.role, t.type, t.action, t.tokens, t.timestamp, t.content,
             e.created_at, e.source_path, e.strategy, e.seq, ts_rank('${RANK_WEIGHTS}', t.search, q) AS score
           FROM archived_turns t JOIN prune_events e ON e.id = t.event_id, to_tsquery('simple', $1) AS q
           WHERE t.search @@ q AND ($2::text IS NULL OR t.event_id = $2) AND ($3::text IS NULL OR e.source_path = $3)
           ORDER BY score DESC, e.seq DESC, t.entry_index
           LIMIT $4
         ) hit
         ORDER BY hit.score DESC, hit.seq DESC, hit.entry_index`,
        [tsquery, options.eventId ?? null, options.sourcePath ?? null, options.limit ?? DEFAULT_RECALL_LIMIT],
      );
      return rows.map((row: Record<string, unknown>) =>
        RecallRowSchema.parse({ ...row, snippet: snippetOf(String(row['excerpt']), query, open, close, SNIPPET_WORDS, HEADLINE_CHARS) }),
      );
    };
    const hits = await run(queries.allTerms);
    return hits.length > 0 || queries.anyTerm === queries.allTerms ? hits : run(queries.anyTerm);
  }

  async getTurn(eventId: string, turnIdOrEntryIndex: string | number): Promise<ArchivedTurn | undefined> {
    const byIndex = typeof turnIdOrEntryIndex === 'number';
    const { rows } = await this.query(
      `SELECT ${TURN_COLUMNS} FROM archived_turns WHERE event_id = $1 AND ${byIndex ? 'entry_index = $2::integer' : 'turn_id = $2::text'} ORDER BY entry_index LIMIT 1`,
      [eventId, turnIdOrEntryIndex],
    );
    return rows[0] === undefined ? undefined : ArchivedTurnRowSchema.parse(rows[0]);
  }

  async findTurn(turnId: string, options: { readonly eventId?: string } = {}): Promise<ArchivedTurn | undefined> {
    if (options.eventId !== undefined) return this.getTurn(options.eventId, turnId);
    // As the SQLite store finds it (see ArchiveStore.findTurn): the latest, then back along the transcript's prunes past placeholders.
    const columns = TURN_COLUMNS.split(', ')
      .map((c) => `t.${c}`)
      .join(', ');
    let row = (
      await this.query(
        `SELECT ${columns} FROM archived_turns t JOIN prune_events e ON e.id = t.event_id WHERE t.turn_id = $1 ORDER BY e.seq DESC, t.entry_index LIMIT 1`,
        [turnId],
      )
    ).rows[0] as { event_id: string; content: string } | undefined;
    for (let hops = 0; row?.content.startsWith(PLACEHOLDER_START) && hops < MAX_PLACEHOLDER_HOPS; hops++) {
      const before = (
        await this.query(
          `SELECT ${columns} FROM archived_turns t JOIN prune_events e ON e.id = t.event_id JOIN prune_events later ON later.id = $1
           WHERE t.turn_id = $2 AND e.seq < later.seq AND ${SAME_TRANSCRIPT} ORDER BY e.seq DESC, t.entry_index LIMIT 1`,
          [row.event_id, turnId],
        )
      ).rows[0] as { event_id: string; content: string } | undefined;
      if (before === undefined) break;
      row = before;
    }
    return row === undefined ? undefined : ArchivedTurnRowSchema.parse(row);
  }

  async listTurns(eventId: string): Promise<ArchivedTurn[]> {
    const { rows } = await this.query(`SELECT ${TURN_COLUMNS} FROM archived_turns WHERE event_id = $1 ORDER BY entry_index`, [eventId]);
    return rows.map((row) => ArchivedTurnRowSchema.parse(row));
  }

  async eventIds(): Promise<string[]> {
    const { rows } = await this.query('SELECT id FROM prune_events ORDER BY seq');
    return rows.map((row: { id: string }) => row.id);
  }

  async exportEvent(eventId: string): Promise<RawPruneEvent | undefined> {
    const { rows } = await this.query(`SELECT ${EVENT_COLUMNS}, bom, layout FROM prune_events WHERE id = $1`, [eventId]);
    if (rows[0] === undefined) return undefined;
    const records = await this.query('SELECT record_index, bytes FROM archived_records WHERE event_id = $1 ORDER BY record_index', [eventId]);
    const turns = await this.query(`SELECT ${TURN_COLUMNS} FROM archived_turns WHERE event_id = $1 ORDER BY entry_index`, [eventId]);
    return {
      event: rawEventFromRow(rows[0]),
      records: (records.rows as RawRecordRow[]).map(rawRecordFromRow),
      turns: (turns.rows as RawTurnRow[]).map(rawTurnFromRow),
    };
  }

  async importEvent(raw: RawPruneEvent): Promise<boolean> {
    return this.transaction(async (client) => {
      if (!(await this.insertEvent(client, raw.event, true))) return false;
      await this.insertRows(client, raw.event.id, raw.records, raw.turns);
      return true;
    });
  }

  async counts(): Promise<{ events: number; records: number; turns: number }> {
    const { rows } = await this.query(
      'SELECT (SELECT count(*) FROM prune_events) AS events, (SELECT count(*) FROM archived_records) AS records, (SELECT count(*) FROM archived_turns) AS turns',
    );
    const row = rows[0] as { events: number; records: number; turns: number };
    return { events: row.events, records: row.records, turns: row.turns };
  }

  async getEmbeddings(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    const unique = [...new Set(hashes)];
    if (unique.length === 0) return found;
    const { rows } = await this.query('SELECT content_hash, vector FROM embedding_cache WHERE model = $1 AND content_hash = ANY($2::text[])', [model, unique]);
    for (const row of rows as Array<{ content_hash: string; vector: Buffer }>) found.set(row.content_hash, vectorFromBytes(row.vector));
    return found;
  }

  async putEmbeddings(model: string, entries: readonly { readonly hash: string; readonly vector: ArrayLike<number> }[]): Promise<void> {
    const hashes: string[] = [];
    const dims: number[] = [];
    const vectors: Buffer[] = [];
    for (const { hash, vector } of entries) {
      if (vector.length === 0) continue;
      hashes.push(hash);
      dims.push(vector.length);
      vectors.push(vectorToBytes(vector));
    }
    if (hashes.length === 0) return;
    // One statement, so one transaction. A vector another machine cached meanwhile is kept: same
    // model, endpoint and text, same vector; and so the role needs no UPDATE (README's grants).
    await this.query(
      `INSERT INTO embedding_cache (model, content_hash, dims, vector, created_at)
       SELECT $1, h, d, v, $5 FROM unnest($2::text[], $3::integer[], $4::bytea[]) AS e(h, d, v)
       ON CONFLICT (model, content_hash) DO NOTHING`,
      [model, hashes, dims, vectors, new Date().toISOString()],
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** A vector as the archive stores it, in either store: its float32 values, little-endian. */
export function vectorToBytes(vector: ArrayLike<number>): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes;
}

export function vectorFromBytes(bytes: Buffer): Float32Array {
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

/**
 * The PostgreSQL archive as the embedder's vector cache, shaped like the CLI's SQLite one: each
 * lookup or store connects, answers and disconnects, so nothing is left open whatever the prune
 * does next, and a prune that never embeds never connects. `readOnly` (a dry run) never writes:
 * it reads only from a database devs-ctx already set up and stores nothing.
 */
export function postgresEmbeddingCache(
  url: string,
  options: { readonly readOnly: boolean },
): { readonly cache: { getEmbeddings: PostgresArchive['getEmbeddings']; putEmbeddings: PostgresArchive['putEmbeddings'] }; opened(): undefined } {
  const withArchive = async <R>(work: (archive: PostgresArchive) => Promise<R>, none: R): Promise<R> => {
    let archive: PostgresArchive;
    if (options.readOnly) {
      const opened = await PostgresArchive.openIfCurrent(url);
      if (!opened) return none;
      archive = opened;
    } else {
      archive = await PostgresArchive.open(url);
    }
    try {
      return await work(archive);
    } catch (error) {
      throw new InputError(
        `the PostgreSQL archive at ${archive.location} could not use its cache of Gemini vectors: ${scrub(error, url)}`,
        'the role needs SELECT, INSERT on embedding_cache (see "Least privileges" in the README), or use --embedder local',
      );
    } finally {
      await archive.close().catch(() => {});
    }
  };
  return {
    cache: {
      getEmbeddings: (model, hashes) => withArchive((a) => a.getEmbeddings(model, hashes), new Map<string, Float32Array>()),
      putEmbeddings: async (model, entries) => {
        if (!options.readOnly) await withArchive((a) => a.putEmbeddings(model, entries), undefined);
      },
    },
    opened: () => undefined,
  };
}
