import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as z from 'zod/mini';
import '../core/zod-english.js';
import { DevsCtxError, InputError } from '../core/errors.js';
import type { ContextEntry } from '../core/prune/context-entry.js';
import { serializeDocument } from '../io/jsonl.js';
import { ArchiveCorruptError, ArchiveSchemaError, ArchiveWriteError, UnknownPruneEventError } from './errors.js';
import { ftsQueries } from './fts-query.js';
import {
  assertStartsWithOutput,
  computeLayout,
  rebuildOriginal,
  rebuildsOriginal,
  restoreBytes,
  RestoreLayoutSchema,
  sha256,
  startsWithOutput,
} from './layout.js';
import type { Fingerprint, PlannedLayout } from './layout.js';
import { BUSY_TIMEOUT_MS, prepareDatabase, SCHEMA_VERSION, schemaVersion } from './schema.js';
import { buildExcerpt } from './excerpt.js';
import { loadSqlite } from './sqlite.js';
import type { SqliteDatabase } from './sqlite.js';

export const EVENT_COLUMNS = `id, created_at, source_path, format, strategy, target_tokens, urgency, goal, tokens_before, tokens_after,
  removed_turn_count, masked_turn_count, tokens_saved, summary_text, original_sha256, original_bytes, output_sha256, output_bytes`;

import { ArchivedTurnRowSchema, PruneEventRowSchema, RecallRowSchema } from './records.js';
import type { ArchivedTurn, PruneEventInput, PruneEventSummary, RawPruneEvent, RecallHit, RecallOptions, RecordOptions } from './records.js';

const MemoryRowSchema = z.pipe(
  z.object({
    entry_id: z.string(),
    type: z.string(),
    content: z.string(),
    token_count: z.number(),
    timestamp: z.number(),
    metadata: z.nullable(z.string()),
  }),
  z.transform(
    (row): ContextEntry => ({
      id: row.entry_id,
      type: row.type,
      content: row.content,
      tokenCount: row.token_count,
      timestamp: row.timestamp,
      ...(row.metadata !== null ? { metadata: z.record(z.string(), z.unknown()).parse(JSON.parse(row.metadata)) } : {}),
    }),
  ),
);

const DEFAULT_RECALL_LIMIT = 20;
/** bm25 column weights for (content, turn_id, type): an id match is a strong signal, the type a weak one. */
const TURN_WEIGHTS = '1.0, 5.0, 0.5';

/** How a devs-ctx placeholder starts (a masked tool result's: `[devs-ctx: … tool output archived …]`). */
export const PLACEHOLDER_START = '[devs-ctx: ';
/** Prunes of one transcript followed back from a placeholder to its text, at most. */
export const MAX_PLACEHOLDER_HOPS = 100;
/** SQL: event `e` pruned the transcript `later` pruned again (the same file, or the output `later` read). Shared with the PostgreSQL store. */
export const SAME_TRANSCRIPT = '(e.source_path = later.source_path OR (e.output_sha256 = later.original_sha256 AND e.output_bytes = later.original_bytes))';

/**
 * The SQLite archive [SPEC §8]: every prune event with the bytes and turns it removed, so the
 * original can be restored byte for byte and removed turns recalled by full-text search.
 * Safe for several processes at once (WAL, a busy timeout, and write transactions that take the
 * write lock up front).
 */
export class ArchiveStore {
  private constructor(
    private readonly db: SqliteDatabase,
    /** The archive file. */
    readonly path: string,
    /** Opened without write access: searches index pending turns in a temporary table. */
    private readonly readOnly = false,
  ) {}

  /** Opens (creating it and its directory if needed) and migrates the archive at `path`. */
  static open(path: string): ArchiveStore {
    const Database = loadSqlite();
    if (path !== ':memory:' && !existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // The archive holds transcript text: create it private. SQLite gives its -wal and -shm files
      // the same permissions as the database file.
      closeSync(openSync(path, 'a', 0o600));
    }
    const db = new Database(path);
    try {
      prepareDatabase(db, path);
    } catch (error) {
      db.close();
      throw error;
    }
    return new ArchiveStore(db, path);
  }

  /**
   * Opens an existing archive without writing to it (no migration, no journal change), for a dry
   * run that only reads cached vectors; undefined when it is missing or of another schema version.
   */
  static openReadOnly(path: string): ArchiveStore | undefined {
    if (!existsSync(path)) return undefined;
    const Database = loadSqlite();
    const db = new Database(path, { readonly: true, fileMustExist: true });
    if (schemaVersion(db) !== SCHEMA_VERSION) {
      db.close();
      return undefined;
    }
    return new ArchiveStore(db, path);
  }

  /**
   * Opens an existing archive for restore and recall, which only read: read-only, so an archive
   * the user cannot write (mode 0400, another owner, a read-only folder or mount) still works. An
   * archive of an older schema is migrated if it can be written; one whose folder cannot hold
   * SQLite's shared-memory file, or another user's, is read from a copy (see snapshot).
   */
  static openForReading(path: string): ArchiveStore {
    // Another user's archive is read from a copy: opened in place, SQLite would leave -shm and -wal
    // files of this user's beside it, which its owner could then not write (their next prune: exit 3).
    if (ownedByAnother(path)) return ArchiveStore.snapshot(path);
    const Database = loadSqlite();
    let db: SqliteDatabase;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // The first read is what needs the -shm file of a WAL archive: make it fail here.
      const version = schemaVersion(db);
      if (version > SCHEMA_VERSION) {
        db.close();
        throw new ArchiveSchemaError(path, version, SCHEMA_VERSION);
      }
      if (version < SCHEMA_VERSION) {
        db.close();
        return ArchiveStore.open(path);
      }
      return new ArchiveStore(db, path, true);
    } catch (error) {
      if (!isCantOpen(error)) throw error;
    }
    return ArchiveStore.snapshot(path);
  }

  /**
   * A WAL archive in a folder this process cannot write has no -shm file to read it through; a
   * copy in memory (marked as a rollback-journal database) reads the same rows. Refused when a
   * -wal file holds writes not yet copied into the archive, which the copy would miss.
   */
  private static snapshot(path: string): ArchiveStore {
    const wal = `${path}-wal`;
    if (existsSync(wal) && statSync(wal).size > 0) return ArchiveStore.walSnapshot(path, wal);
    const bytes = readFileSync(path);
    // Bytes 18 and 19 of the header are the read and write format versions: 2 is WAL, 1 rollback.
    if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
      bytes[18] = 1;
      bytes[19] = 1;
    }
    const Database = loadSqlite();
    // A copy in memory: one of an older schema is brought up to date there (the archive itself is not written).
    const db = new Database(bytes);
    try {
      prepareDatabase(db, path);
    } catch (error) {
      db.close();
      throw error;
    }
    return new ArchiveStore(db, path, true);
  }

  /**
   * The same, when a -wal file holds writes not yet in the archive file (another user's recall or
   * prune left them): the archive and its -wal copied into a private temporary folder, where SQLite
   * can read the -wal, and read there; the folder is removed on close. The archive is never written.
   */
  private static walSnapshot(path: string, wal: string): ArchiveStore {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-archive-'));
    const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
    try {
      const copy = join(dir, 'archive.sqlite');
      copyFileSync(path, copy);
      copyFileSync(wal, `${copy}-wal`);
      const Database = loadSqlite();
      const db = new Database(copy);
      // A copy of an older schema is brought up to date there (the archive itself cannot be).
      prepareDatabase(db, path);
      const store = new ArchiveStore(db, path, true);
      store.onClose = cleanup;
      return store;
    } catch (error) {
      cleanup();
      if (error instanceof DevsCtxError) throw error;
      throw new InputError(
        `cannot read the archive at ${path}: ${error instanceof Error ? error.message : String(error)}`,
        `check that ${tmpdir()} (TMPDIR) has room for a copy`,
      );
    }
  }

  /** Run after close (a temporary copy's folder removed). */
  private onClose: (() => void) | undefined;

  close(): void {
    try {
      this.db.close();
    } finally {
      this.onClose?.();
    }
  }

  /** Cached vectors of these content hashes for `model` (an `EmbeddingCache`). */
  getEmbeddings(model: string, hashes: readonly string[]): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    const select = this.db.prepare('SELECT content_hash AS hash, vector FROM embedding_cache WHERE model = ? AND content_hash = ?');
    for (const hash of new Set(hashes)) {
      const row = select.get(model, hash) as { hash: string; vector: Buffer } | undefined;
      if (row) found.set(row.hash, new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)));
    }
    return found;
  }

  /** Stores vectors for `model` by content hash, in one transaction (an `EmbeddingCache`). */
  putEmbeddings(model: string, entries: readonly { readonly hash: string; readonly vector: ArrayLike<number> }[]): void {
    const insert = this.db.prepare('INSERT OR REPLACE INTO embedding_cache (model, content_hash, dims, vector, created_at) VALUES (?, ?, ?, ?, ?)');
    const now = new Date().toISOString();
    const write = this.db.transaction(() => {
      for (const { hash, vector } of entries) {
        if (vector.length === 0) continue;
        const floats = Float32Array.from(vector);
        insert.run(model, hash, floats.length, Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength), now);
      }
    });
    write.immediate();
  }

  /**
   * Archives a prune: the event, every input line the output does not reproduce byte for byte,
   * and the removed or masked turns, in one transaction, on disk when it returns (syncCommitted).
   * Call it before writing the transcript; when it throws, nothing of the event is stored, unless
   * the error's `stillListed` names it (see Archive.recordPrune, and `keepUnsynced` there). Checks
   * first that the archived bytes rebuild the input exactly, so no prune is ever archived in a form
   * restore could not undo.
   */
  recordPrune(event: PruneEventInput, options: RecordOptions = {}): void {
    try {
      const { row, archivedRecords } = planRecord(event);

      const insertEvent = this.db.prepare(`INSERT INTO prune_events (
          id, created_at, source_path, format, strategy, target_tokens, urgency, goal, tokens_before, tokens_after,
          removed_turn_count, masked_turn_count, tokens_saved, summary_text, original_sha256, original_bytes,
          output_sha256, output_bytes, bom, layout)
        VALUES (@id, @createdAt, @sourcePath, @format, @strategy, @targetTokens, @urgency, @goal, @tokensBefore, @tokensAfter,
          @removedTurnCount, @maskedTurnCount, @tokensSaved, @summaryText, @originalSha256, @originalBytes,
          @outputSha256, @outputBytes, @bom, @layout)`);
      const insertRecord = this.db.prepare('INSERT INTO archived_records (event_id, record_index, bytes) VALUES (?, ?, ?)');
      const insertTurn = this.db.prepare(`INSERT INTO archived_turns
          (event_id, entry_index, turn_id, role, type, action, tokens, content, timestamp, records)
        VALUES (@eventId, @entryIndex, @turnId, @role, @type, @action, @tokens, @content, @timestamp, @records)`);

      const write = this.db.transaction(() => {
        insertEvent.run({ ...row, bom: row.bom ? 1 : 0 });
        for (const [index, bytes] of archivedRecords) insertRecord.run(event.id, index, bytes);
        for (const turn of event.turns) {
          insertTurn.run({
            eventId: event.id,
            entryIndex: turn.entryIndex,
            turnId: turn.turnId,
            role: turn.role,
            type: turn.type,
            action: turn.action,
            tokens: turn.tokens,
            content: turn.content,
            timestamp: turn.timestamp ?? null,
            records: JSON.stringify(turn.records),
          });
        }
      });
      // IMMEDIATE: take the write lock at BEGIN, so a concurrent writer waits (busy_timeout)
      // instead of failing when a read lock would have to be upgraded.
      write.immediate();
    } catch (error) {
      throw new ArchiveWriteError(this.path, error);
    }
    try {
      this.syncCommitted();
    } catch (error) {
      // Kept, for what overwrites nothing (an agent hook's window): synced at the last close, as before.
      if (options.keepUnsynced === true) return;
      // Committed, but perhaps not on disk: the transcript must not be written, and the archive
      // must not list a prune that did not happen; when taking it out fails, the error says so.
      let forgotten = true;
      try {
        this.deletePrune(event.id);
      } catch {
        forgotten = false;
      }
      // Its removal is synced as the insert could not be, if at all: it stands all the same.
      try {
        if (forgotten) this.syncCommitted();
      } catch {
        // taken out; only its sync failed, as the insert's did
      }
      throw new ArchiveWriteError(this.path, error, forgotten ? undefined : event.id);
    }
  }

  /**
   * Puts what was just committed on disk, before the caller writes the pruned transcript (a power
   * cut after that write must not find the transcript pruned and the turns lost). In WAL mode
   * better-sqlite3's SQLite syncs nothing at a commit (`synchronous` is NORMAL), only at a
   * checkpoint: the commit is checkpointed into the archive file now (SQLite syncs the WAL, copies
   * it in and syncs the file), rather than when the archive is closed after the transcript was
   * written, so a copy of the archive file alone (a backup) holds the prune too. When another
   * connection keeps part of the WAL from being copied in (a reader of an older state, another
   * checkpoint), the WAL itself is synced: the commit is in it.
   */
  private syncCommitted(): void {
    if (this.path === ':memory:') return;
    const [done] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    // Not in WAL mode (log -1): synchronous is SQLite's FULL there, the commit was synced.
    if (done === undefined || (done.busy === 0 && done.checkpointed === done.log)) return;
    // The WAL beside the file SQLite opened: an archive path that is a symlink has its WAL beside the
    // target. This connection keeps it: missing, it cannot be synced (an error, not nothing to do).
    syncFile(`${this.databaseFile()}-wal`);
  }

  /** The database file as SQLite opened it (symlinks resolved). */
  private databaseFile(): string {
    const main = (this.db.pragma('database_list') as { name: string; file: string }[]).find((d) => d.name === 'main');
    return main?.file || this.path;
  }

  /** A prune event by id, or undefined. */
  getEvent(eventId: string): PruneEventSummary | undefined {
    const row = this.db.prepare(`SELECT ${EVENT_COLUMNS} FROM prune_events WHERE id = ?`).get(eventId);
    return row === undefined ? undefined : PruneEventRowSchema.parse(row);
  }

  /** Prune events, newest first. */
  listEvents(options: { readonly sourcePath?: string; readonly limit?: number } = {}): PruneEventSummary[] {
    const rows = this.db
      .prepare(`SELECT ${EVENT_COLUMNS} FROM prune_events WHERE (@sourcePath IS NULL OR source_path = @sourcePath) ORDER BY seq DESC LIMIT @limit`)
      .all({ sourcePath: options.sourcePath ?? null, limit: options.limit ?? -1 });
    return rows.map((row) => PruneEventRowSchema.parse(row));
  }

  /**
   * The prune that `currentBytes` can be restored from: the latest recorded event whose output
   * the file still starts with (turns appended since are fine). With `eventId`, that event if it
   * fits. Undefined when none does.
   */
  findRestorable(currentBytes: Buffer, options: { readonly eventId?: string } = {}): PruneEventSummary | undefined {
    if (options.eventId !== undefined) {
      const event = this.getEvent(options.eventId);
      return event && startsWithOutput(currentBytes, event.output) ? event : undefined;
    }
    const sizes = this.db
      .prepare(`SELECT DISTINCT output_bytes AS size FROM prune_events WHERE output_bytes <= ? AND strategy <> 'compaction' ORDER BY output_bytes`)
      .pluck()
      .all(currentBytes.length) as number[];
    // A `compaction` event (an agent's window archived before it compacted) changed no file: nothing to undo.
    const matching = this.db.prepare(
      `SELECT seq, id FROM prune_events WHERE output_bytes = ? AND output_sha256 = ? AND strategy <> 'compaction' ORDER BY seq DESC LIMIT 1`,
    );
    // One pass over the file whatever the number of candidate sizes: hash it incrementally and
    // take a copy of the digest at each size.
    const hash = createHash('sha256');
    let hashed = 0;
    let best: { seq: number; id: string } | undefined;
    for (const size of sizes) {
      hash.update(currentBytes.subarray(hashed, size));
      hashed = size;
      const row = matching.get(size, hash.copy().digest('hex')) as { seq: number; id: string } | undefined;
      if (row && (!best || row.seq > best.seq)) best = row;
    }
    return best ? this.getEvent(best.id) : undefined;
  }

  /**
   * The transcript as it was before prune `eventId`, with whatever was appended to the file since
   * the prune kept at the end. Throws TranscriptChangedError when `currentBytes` does not start
   * with the prune's output.
   */
  restore(eventId: string, currentBytes: Buffer): Buffer {
    const row = this.db.prepare('SELECT layout FROM prune_events WHERE id = ?').get(eventId) as { layout: string } | undefined;
    const event = this.getEvent(eventId);
    if (!row || !event) throw new UnknownPruneEventError(eventId);
    // Before reading the archived bytes: a file that changed cannot be restored whatever they are.
    assertStartsWithOutput(eventId, currentBytes, event.output);
    const parsed = RestoreLayoutSchema.safeParse(JSON.parse(row.layout));
    if (!parsed.success) throw new ArchiveCorruptError(eventId, 'its restore layout is not readable');
    const archived = new Map<number, Buffer>();
    const records = this.db.prepare('SELECT record_index, bytes FROM archived_records WHERE event_id = ?').all(eventId) as Array<{
      record_index: number;
      bytes: Buffer;
    }>;
    for (const record of records) archived.set(record.record_index, record.bytes);
    return restoreBytes({ eventId, layout: parsed.data, archived, current: currentBytes, output: event.output, original: event.original });
  }

  /**
   * Archived turns matching `query`, best first (bm25). Every term is searched as typed, never as
   * FTS5 syntax; a trailing `*` makes a term a prefix. Turns holding all the terms are preferred;
   * when none does, turns holding any of them are returned.
   */
  recall(query: string, options: RecallOptions = {}): RecallHit[] {
    const queries = ftsQueries(query);
    if (!queries) return [];
    const index = this.searchIndex();
    const [open, close] = options.highlight ?? ['«', '»'];
    // No FTS5 snippet(): it re-tokenizes the whole turn for every phrase and is quadratic on a
    // multi-megabyte turn. The excerpt is cut from a bounded window around the first match.
    const statement = this.db.prepare(`
      SELECT t.event_id, t.entry_index, t.turn_id, t.role, t.type, t.action, t.tokens, t.timestamp,
        e.created_at, e.source_path, e.strategy, t.content,
        bm25(${index}, ${TURN_WEIGHTS}) AS rank
      FROM ${index}
        JOIN archived_turns t ON t.id = ${index}.rowid
        JOIN prune_events e ON e.id = t.event_id
      WHERE ${index} MATCH @match
        AND (@eventId IS NULL OR t.event_id = @eventId)
        AND (@sourcePath IS NULL OR e.source_path = @sourcePath)
      ORDER BY rank, e.seq DESC, t.entry_index
      LIMIT @limit`);
    const run = (match: string): RecallHit[] =>
      statement
        .all({ match, eventId: options.eventId ?? null, sourcePath: options.sourcePath ?? null, limit: options.limit ?? DEFAULT_RECALL_LIMIT })
        .map((row) => {
          const { content, ...rest } = row as { content: string };
          return RecallRowSchema.parse({ ...rest, snippet: buildExcerpt(content, query, { open, close }) });
        });
    const hits = run(queries.allTerms);
    return hits.length > 0 || queries.anyTerm === queries.allTerms ? hits : run(queries.anyTerm);
  }

  /**
   * The full-text index a search reads: the archive's own, brought up to date; on a read-only
   * archive with turns not yet indexed, a temporary index of every archived turn (slower, but
   * nothing is written).
   */
  private searchIndex(): string {
    if (!this.readOnly) {
      try {
        withoutWaiting(this.db, () => this.indexPending());
        return 'archived_turns_fts';
      } catch (error) {
        // Another process is writing (a prune): this search indexes in memory rather than wait for it.
        if (!isBusy(error)) throw error;
      }
    }
    if (this.pendingCount() === 0) return 'archived_turns_fts';
    // Another connection may be able to write even though this one was opened read-only; never in
    // another user's archive (a failed try would leave this user's -shm and -wal files beside it).
    if (!ownedByAnother(this.path))
      try {
        const writer = ArchiveStore.open(this.path);
        try {
          withoutWaiting(writer.db, () => writer.indexPending());
        } finally {
          writer.close();
        }
        if (this.pendingCount() === 0) return 'archived_turns_fts';
      } catch {
        // cannot write: index in memory below
      }
    const exists = this.db.prepare("SELECT count(*) FROM temp.sqlite_master WHERE name = 'recall_fts'").pluck().get() as number;
    if (exists === 0) {
      this.db.exec("CREATE VIRTUAL TABLE temp.recall_fts USING fts5 (content, turn_id, type, tokenize = 'unicode61 remove_diacritics 2')");
      this.db.exec('INSERT INTO temp.recall_fts (rowid, content, turn_id, type) SELECT id, content, turn_id, type FROM archived_turns');
    }
    return 'recall_fts';
  }

  private pendingCount(): number {
    const last = this.db.prepare("SELECT last_indexed_id FROM fts_progress WHERE name = 'archived_turns'").pluck().get() as number;
    return this.db.prepare('SELECT count(*) FROM archived_turns WHERE id > ?').pluck().get(last) as number;
  }

  /**
   * Removes a prune event and everything archived with it, in one transaction: for a prune whose
   * transcript could not be written after it was archived, so `recall` never shows turns "dropped
   * by" a prune that did not happen. Returns whether the event was there.
   */
  forgetPrune(eventId: string): boolean {
    const removed = this.deletePrune(eventId);
    // On disk too: a power cut must not bring back a prune whose transcript was never written (the
    // insert was synced). When that fails, it throws: the caller says the archive may still list it.
    this.syncCommitted();
    return removed;
  }

  /** Takes a prune event and its rows out, in one transaction (not synced: see forgetPrune). */
  private deletePrune(eventId: string): boolean {
    const remove = this.db.transaction((): boolean => {
      this.db.prepare('DELETE FROM archived_turns WHERE event_id = ?').run(eventId);
      this.db.prepare('DELETE FROM archived_records WHERE event_id = ?').run(eventId);
      return this.db.prepare('DELETE FROM prune_events WHERE id = ?').run(eventId).changes > 0;
    });
    return remove.immediate();
  }

  /**
   * Adds archived turns not yet in the full-text index (prunes leave that to the first search, see
   * schema.ts). One write transaction, so concurrent searches index each turn once.
   */
  indexPending(): number {
    const run = this.db.transaction((): number => {
      const last = this.db.prepare("SELECT last_indexed_id FROM fts_progress WHERE name = 'archived_turns'").pluck().get() as number;
      const newest = this.db.prepare('SELECT coalesce(max(id), 0) FROM archived_turns').pluck().get() as number;
      if (newest <= last) return 0;
      const added = this.db
        .prepare(
          'INSERT INTO archived_turns_fts (rowid, content, turn_id, type) SELECT id, content, turn_id, type FROM archived_turns WHERE id > ? AND id <= ? ORDER BY id',
        )
        .run(last, newest).changes;
      this.db.prepare("UPDATE fts_progress SET last_indexed_id = ? WHERE name = 'archived_turns'").run(newest);
      return added;
    });
    return run.immediate();
  }

  /** One archived turn of an event, by its turn id or its entry index in the pruned input. */
  getTurn(eventId: string, turnIdOrEntryIndex: string | number): ArchivedTurn | undefined {
    const byIndex = typeof turnIdOrEntryIndex === 'number';
    const row = this.db
      .prepare(
        `SELECT event_id, entry_index, turn_id, role, type, action, tokens, content, timestamp, records FROM archived_turns
         WHERE event_id = ? AND ${byIndex ? 'entry_index' : 'turn_id'} = ? ORDER BY entry_index LIMIT 1`,
      )
      .get(eventId, turnIdOrEntryIndex);
    return row === undefined ? undefined : ArchivedTurnRowSchema.parse(row);
  }

  /**
   * An archived turn by id: in the given event, else from the latest event that archived it. When that
   * is a placeholder (a later prune dropped the turn an earlier one masked: `[devs-ctx: … tool output
   * archived …]`), the text comes from the earlier prune of the same transcript (the same file, or the
   * one whose output the later prune read), never from another transcript that has a turn of that id.
   */
  findTurn(turnId: string, options: { readonly eventId?: string } = {}): ArchivedTurn | undefined {
    if (options.eventId !== undefined) return this.getTurn(options.eventId, turnId);
    const columns = 't.event_id, t.entry_index, t.turn_id, t.role, t.type, t.action, t.tokens, t.content, t.timestamp, t.records';
    const latest = this.db.prepare(
      `SELECT ${columns} FROM archived_turns t JOIN prune_events e ON e.id = t.event_id WHERE t.turn_id = ? ORDER BY e.seq DESC, t.entry_index LIMIT 1`,
    );
    const earlier = this.db.prepare(
      `SELECT ${columns} FROM archived_turns t JOIN prune_events e ON e.id = t.event_id JOIN prune_events later ON later.id = ?
       WHERE t.turn_id = ? AND e.seq < later.seq AND ${SAME_TRANSCRIPT} ORDER BY e.seq DESC, t.entry_index LIMIT 1`,
    );
    let row = latest.get(turnId) as { event_id: string; content: string } | undefined;
    for (let hops = 0; row?.content.startsWith(PLACEHOLDER_START) && hops < MAX_PLACEHOLDER_HOPS; hops++) {
      const before = earlier.get(row.event_id, turnId) as { event_id: string; content: string } | undefined;
      if (before === undefined) break;
      row = before;
    }
    return row === undefined ? undefined : ArchivedTurnRowSchema.parse(row);
  }

  /** Every archived turn of an event, in entry order. */
  listTurns(eventId: string): ArchivedTurn[] {
    return this.db
      .prepare(
        'SELECT event_id, entry_index, turn_id, role, type, action, tokens, content, timestamp, records FROM archived_turns WHERE event_id = ? ORDER BY entry_index',
      )
      .all(eventId)
      .map((row) => ArchivedTurnRowSchema.parse(row));
  }

  /** Seed 002: stores context entries flushed from short-term memory (an entry flushed again is replaced). */
  saveMemoryEntries(scope: string, entries: readonly ContextEntry[], flushedAt: string): void {
    const upsert = this.db.prepare(`INSERT INTO memory_entries (scope, entry_id, type, content, token_count, timestamp, metadata, flushed_at)
      VALUES (@scope, @id, @type, @content, @tokenCount, @timestamp, @metadata, @flushedAt)
      ON CONFLICT (scope, entry_id) DO UPDATE SET type = excluded.type, content = excluded.content, token_count = excluded.token_count,
        timestamp = excluded.timestamp, metadata = excluded.metadata, flushed_at = excluded.flushed_at`);
    this.db
      .transaction(() => {
        for (const entry of entries) {
          upsert.run({
            scope,
            id: entry.id,
            type: entry.type,
            content: entry.content,
            tokenCount: entry.tokenCount,
            timestamp: entry.timestamp,
            metadata: entry.metadata === undefined ? null : JSON.stringify(entry.metadata),
            flushedAt,
          });
        }
      })
      .immediate();
  }

  /** Seed 002: medium-term entries matching `query`, best first (same query rules as `recall`). */
  searchMemory(scope: string, query: string, options: { readonly limit?: number } = {}): ContextEntry[] {
    const queries = ftsQueries(query);
    if (!queries) return [];
    const statement = this.db.prepare(`
      SELECT m.entry_id, m.type, m.content, m.token_count, m.timestamp, m.metadata
      FROM memory_entries_fts JOIN memory_entries m ON m.seq = memory_entries_fts.rowid
      WHERE memory_entries_fts MATCH @match AND m.scope = @scope
      ORDER BY bm25(memory_entries_fts), m.timestamp DESC
      LIMIT @limit`);
    const run = (match: string): ContextEntry[] =>
      statement.all({ match, scope, limit: options.limit ?? DEFAULT_RECALL_LIMIT }).map((row) => MemoryRowSchema.parse(row));
    const hits = run(queries.allTerms);
    return hits.length > 0 || queries.anyTerm === queries.allTerms ? hits : run(queries.anyTerm);
  }

  /** Seed 002: medium-term entries by id, in the order asked (unknown ids are skipped). */
  loadMemory(scope: string, ids: readonly string[]): ContextEntry[] {
    const statement = this.db.prepare('SELECT entry_id, type, content, token_count, timestamp, metadata FROM memory_entries WHERE scope = ? AND entry_id = ?');
    const entries: ContextEntry[] = [];
    for (const id of ids) {
      const row = statement.get(scope, id);
      if (row !== undefined) entries.push(MemoryRowSchema.parse(row));
    }
    return entries;
  }

  /** Every prune event id, oldest first (`archive copy`). */
  eventIds(): string[] {
    return this.db.prepare('SELECT id FROM prune_events ORDER BY seq').pluck().all() as string[];
  }

  /** One event's stored rows, or undefined (`archive copy`). */
  exportEvent(eventId: string): RawPruneEvent | undefined {
    const row = this.db.prepare(`SELECT ${EVENT_COLUMNS}, bom, layout FROM prune_events WHERE id = ?`).get(eventId) as
      | (Record<string, string | number | null> & { bom: number; layout: string })
      | undefined;
    if (!row) return undefined;
    const records = this.db.prepare('SELECT record_index, bytes FROM archived_records WHERE event_id = ? ORDER BY record_index').all(eventId) as RawRecordRow[];
    const turns = this.db
      .prepare(
        'SELECT entry_index, turn_id, role, type, action, tokens, content, timestamp, records FROM archived_turns WHERE event_id = ? ORDER BY entry_index',
      )
      .all(eventId) as RawTurnRow[];
    return { event: rawEventFromRow(row), records: records.map(rawRecordFromRow), turns: turns.map(rawTurnFromRow) };
  }

  /** Stores an exported event in one transaction; false when its id is already archived (nothing written). */
  importEvent(raw: RawPruneEvent): boolean {
    const e = raw.event;
    return this.db
      .transaction((): boolean => {
        const inserted = this.db
          .prepare(`INSERT INTO prune_events (
            id, created_at, source_path, format, strategy, target_tokens, urgency, goal, tokens_before, tokens_after,
            removed_turn_count, masked_turn_count, tokens_saved, summary_text, original_sha256, original_bytes,
            output_sha256, output_bytes, bom, layout)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
          .run(
            e.id,
            e.createdAt,
            e.sourcePath,
            e.format,
            e.strategy,
            e.targetTokens,
            e.urgency,
            e.goal,
            e.tokensBefore,
            e.tokensAfter,
            e.removedTurnCount,
            e.maskedTurnCount,
            e.tokensSaved,
            e.summaryText,
            e.originalSha256,
            e.originalBytes,
            e.outputSha256,
            e.outputBytes,
            e.bom ? 1 : 0,
            e.layout,
          ).changes;
        if (inserted === 0) return false;
        const insertRecord = this.db.prepare('INSERT INTO archived_records (event_id, record_index, bytes) VALUES (?, ?, ?)');
        for (const record of raw.records) insertRecord.run(e.id, record.index, record.bytes);
        const insertTurn = this.db.prepare(`INSERT INTO archived_turns (event_id, entry_index, turn_id, role, type, action, tokens, content, timestamp, records)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
        for (const t of raw.turns) insertTurn.run(e.id, t.entryIndex, t.turnId, t.role, t.type, t.action, t.tokens, t.content, t.timestamp, t.records);
        return true;
      })
      .immediate();
  }

  /** How many events, archived lines and archived turns are stored. */
  counts(): { events: number; records: number; turns: number } {
    const count = (table: string): number => this.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    return { events: count('prune_events'), records: count('archived_records'), turns: count('archived_turns') };
  }
}

/** An archived_records row, as both stores name its columns. */
export interface RawRecordRow {
  readonly record_index: number;
  readonly bytes: Buffer;
}

export function rawRecordFromRow(row: RawRecordRow): RawPruneEvent['records'][number] {
  return { index: row.record_index, bytes: row.bytes };
}

/** An archived_turns row, as both stores name its columns. */
export interface RawTurnRow {
  readonly entry_index: number;
  readonly turn_id: string;
  readonly role: string;
  readonly type: string;
  readonly action: 'dropped' | 'masked';
  readonly tokens: number;
  readonly content: string;
  readonly timestamp: string | null;
  readonly records: string;
}

export function rawTurnFromRow(t: RawTurnRow): RawPruneEvent['turns'][number] {
  return {
    entryIndex: t.entry_index,
    turnId: t.turn_id,
    role: t.role,
    type: t.type,
    action: t.action,
    tokens: t.tokens,
    content: t.content,
    timestamp: t.timestamp,
    records: t.records,
  };
}

/** An event row (snake_case columns, as both stores name them) as the RawPruneEvent every store exports. */
export function rawEventFromRow(row: Record<string, unknown>): RawPruneEvent['event'] {
  const text = (key: string): string => z.string().parse(row[key]);
  const maybe = (key: string): string | null => z.nullable(z.string()).parse(row[key]);
  const int = (key: string): number => z.coerce.number().check(z.int()).parse(row[key]);
  return {
    id: text('id'),
    createdAt: text('created_at'),
    sourcePath: text('source_path'),
    format: text('format'),
    strategy: text('strategy'),
    targetTokens: int('target_tokens'),
    urgency: text('urgency'),
    goal: maybe('goal'),
    tokensBefore: int('tokens_before'),
    tokensAfter: int('tokens_after'),
    removedTurnCount: int('removed_turn_count'),
    maskedTurnCount: int('masked_turn_count'),
    tokensSaved: int('tokens_saved'),
    summaryText: maybe('summary_text'),
    originalSha256: text('original_sha256'),
    originalBytes: int('original_bytes'),
    outputSha256: text('output_sha256'),
    outputBytes: int('output_bytes'),
    bom: int('bom') === 1,
    layout: text('layout'),
  };
}

/**
 * What a store writes for a prune: fingerprints, the restore layout and the input lines to keep.
 * Checks first that those bytes rebuild the input exactly, so no prune is ever archived in a form
 * restore could not undo. Every store calls it before its transaction.
 */
export function planRecord(event: PruneEventInput): { readonly row: RawPruneEvent['event']; readonly archivedRecords: PlannedLayout['archivedRecords'] } {
  const original = event.inputBytes ?? serializeDocument(event.input);
  const originalPrint: Fingerprint = { sha256: sha256(original), length: original.length };
  const outputPrint: Fingerprint = { sha256: sha256(event.output.bytes), length: event.output.bytes.length };
  const { layout, archivedRecords } = computeLayout(event.input, event.output);
  // What restore will do, checked now against the original's bytes themselves (not their hash again).
  if (!rebuildsOriginal(event.id, layout, archivedRecords, event.output.bytes, event.output.bytes.length, original)) {
    const rebuilt = rebuildOriginal(event.id, layout, archivedRecords, event.output.bytes, event.output.bytes.length);
    throw new ArchiveCorruptError(event.id, `the transcript rebuilt from the archive (${rebuilt.length} bytes) is not the original (${original.length} bytes)`);
  }
  const row: RawPruneEvent['event'] = {
    id: event.id,
    createdAt: event.createdAt,
    sourcePath: event.sourcePath,
    format: event.format,
    strategy: event.strategy,
    targetTokens: event.targetTokens,
    urgency: event.urgency,
    goal: event.goal ?? null,
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    removedTurnCount: event.removedTurnCount,
    maskedTurnCount: event.maskedTurnCount,
    tokensSaved: event.tokensSaved,
    summaryText: event.summaryText ?? null,
    originalSha256: originalPrint.sha256,
    originalBytes: originalPrint.length,
    outputSha256: outputPrint.sha256,
    outputBytes: outputPrint.length,
    bom: event.input.bom,
    layout: JSON.stringify(layout),
  };
  return { row, archivedRecords };
}

/**
 * Runs `work` on `db` without waiting for another process's write lock (SQLITE_BUSY at once): an
 * index a search could do without, not worth the 10 s a prune may hold the lock (a recall through
 * the MCP server held every other tool that long).
 */
function withoutWaiting<T>(db: SqliteDatabase, work: () => T): T {
  db.pragma('busy_timeout = 0');
  try {
    return work();
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

function isBusy(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * fsync of the file at `path` (opened for writing, as Windows needs to flush it; never a database
 * file, whose locks a close would drop: SQLite locks no WAL file).
 */
function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether the file at `path` belongs to another user than this process's (false where uids are unknown, or it is missing). */
function ownedByAnother(path: string): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return false;
  try {
    return statSync(path).uid !== uid;
  } catch {
    return false;
  }
}

/**
 * SQLite could not open the archive read-only where it is: no -shm file can be made there (a folder
 * this process cannot write: CANTOPEN as root under chattr, READONLY_DIRECTORY or another READONLY
 * code for a user), or one is another user's and read-only.
 */
function isCantOpen(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY'));
}
