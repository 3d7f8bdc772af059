import type { SqliteDatabase } from './sqlite.js';
import { ArchiveSchemaError } from './errors.js';
import { InputError } from '../core/errors.js';

/**
 * The archive's schema, as ordered migrations: migration i takes the database from version i to
 * i + 1 (PRAGMA user_version). Never edit a released migration; append a new one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: prune events, the bytes and turns they removed, full-text search, seed 002's medium-term memory.
  `
  CREATE TABLE prune_events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    source_path TEXT NOT NULL,
    format TEXT NOT NULL,
    strategy TEXT NOT NULL,
    target_tokens INTEGER NOT NULL,
    urgency TEXT NOT NULL,
    goal TEXT,
    tokens_before INTEGER NOT NULL,
    tokens_after INTEGER NOT NULL,
    removed_turn_count INTEGER NOT NULL,
    masked_turn_count INTEGER NOT NULL,
    tokens_saved INTEGER NOT NULL,
    summary_text TEXT,
    original_sha256 TEXT NOT NULL,
    original_bytes INTEGER NOT NULL,
    output_sha256 TEXT NOT NULL,
    output_bytes INTEGER NOT NULL,
    bom INTEGER NOT NULL CHECK (bom IN (0, 1)),
    layout TEXT NOT NULL CHECK (json_valid(layout))
  );
  CREATE INDEX prune_events_by_source ON prune_events (source_path, created_at);
  CREATE INDEX prune_events_by_output ON prune_events (output_bytes);

  -- Input lines the output does not reproduce byte for byte: their exact bytes, terminator included.
  CREATE TABLE archived_records (
    event_id TEXT NOT NULL REFERENCES prune_events (id) ON DELETE CASCADE,
    record_index INTEGER NOT NULL CHECK (record_index >= 0),
    bytes BLOB NOT NULL,
    PRIMARY KEY (event_id, record_index)
  );

  CREATE TABLE archived_turns (
    id INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES prune_events (id) ON DELETE CASCADE,
    entry_index INTEGER NOT NULL CHECK (entry_index >= 0),
    turn_id TEXT NOT NULL,
    role TEXT NOT NULL,
    type TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('dropped', 'masked')),
    tokens INTEGER NOT NULL,
    content TEXT NOT NULL,
    timestamp TEXT,
    records TEXT NOT NULL CHECK (json_valid(records)),
    UNIQUE (event_id, entry_index)
  );
  CREATE INDEX archived_turns_by_turn_id ON archived_turns (turn_id);

  -- External-content FTS5 index over archived_turns. Rows are indexed lazily, by the first recall
  -- after they are archived (ArchiveStore.indexPending): indexing is most of an archive write's
  -- cost, and a prune run from a git hook should not pay it. fts_progress says how far it got;
  -- the delete/update triggers only touch rows already indexed.
  CREATE VIRTUAL TABLE archived_turns_fts USING fts5 (
    content, turn_id, type,
    content = 'archived_turns', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE TABLE fts_progress (
    name TEXT PRIMARY KEY,
    last_indexed_id INTEGER NOT NULL
  );
  INSERT INTO fts_progress (name, last_indexed_id) VALUES ('archived_turns', 0);
  CREATE TRIGGER archived_turns_ad AFTER DELETE ON archived_turns
    WHEN old.id <= (SELECT last_indexed_id FROM fts_progress WHERE name = 'archived_turns') BEGIN
    INSERT INTO archived_turns_fts (archived_turns_fts, rowid, content, turn_id, type) VALUES ('delete', old.id, old.content, old.turn_id, old.type);
  END;
  CREATE TRIGGER archived_turns_au AFTER UPDATE ON archived_turns
    WHEN old.id <= (SELECT last_indexed_id FROM fts_progress WHERE name = 'archived_turns') BEGIN
    INSERT INTO archived_turns_fts (archived_turns_fts, rowid, content, turn_id, type) VALUES ('delete', old.id, old.content, old.turn_id, old.type);
    INSERT INTO archived_turns_fts (rowid, content, turn_id, type) VALUES (new.id, new.content, new.turn_id, new.type);
  END;

  -- Seed 002: context entries the tiered memory manager flushed out of its short-term buffer.
  CREATE TABLE memory_entries (
    seq INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    type TEXT NOT NULL,
    content TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    timestamp INTEGER NOT NULL,
    metadata TEXT CHECK (metadata IS NULL OR json_valid(metadata)),
    flushed_at TEXT NOT NULL,
    UNIQUE (scope, entry_id)
  );
  CREATE VIRTUAL TABLE memory_entries_fts USING fts5 (
    content, type,
    content = 'memory_entries', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER memory_entries_ai AFTER INSERT ON memory_entries BEGIN
    INSERT INTO memory_entries_fts (rowid, content, type) VALUES (new.seq, new.content, new.type);
  END;
  CREATE TRIGGER memory_entries_ad AFTER DELETE ON memory_entries BEGIN
    INSERT INTO memory_entries_fts (memory_entries_fts, rowid, content, type) VALUES ('delete', old.seq, old.content, old.type);
  END;
  CREATE TRIGGER memory_entries_au AFTER UPDATE ON memory_entries BEGIN
    INSERT INTO memory_entries_fts (memory_entries_fts, rowid, content, type) VALUES ('delete', old.seq, old.content, old.type);
    INSERT INTO memory_entries_fts (rowid, content, type) VALUES (new.seq, new.content, new.type);
  END;
  `,
  // 2: Gemini embeddings cached by model and content hash, so an unchanged turn is embedded once.
  `
  CREATE TABLE embedding_cache (
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dims INTEGER NOT NULL CHECK (dims > 0),
    vector BLOB NOT NULL CHECK (length(vector) = dims * 4),
    created_at TEXT NOT NULL,
    PRIMARY KEY (model, content_hash)
  ) WITHOUT ROWID;
  `,
];

/** The schema version this code writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The page size of an archive this code creates (SQLite's default is 4 KiB). */
export const NEW_ARCHIVE_PAGE_SIZE = 16_384;

/** Busy wait before SQLITE_BUSY: long enough for another devs-ctx's prune to finish writing. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Switches the database to WAL, again after a short sleep each time SQLite says it is busy, within
 * BUSY_TIMEOUT_MS in all: each try may wait on SQLite's own busy timeout, so that is set to the time
 * left before it (and back after).
 */
function switchToWal(db: SqliteDatabase): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  let pause: Int32Array | undefined;
  try {
    for (;;) {
      try {
        db.pragma('journal_mode = WAL');
        return;
      } catch (error) {
        const left = deadline - Date.now();
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || left <= 0) throw error;
        pause ??= new Int32Array(new SharedArrayBuffer(4));
        Atomics.wait(pause, 0, 0, Math.min(left, 5 + Math.random() * 20));
        db.pragma(`busy_timeout = ${Math.max(1, Math.round(deadline - Date.now()))}`);
      }
    }
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

export function schemaVersion(db: SqliteDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Sets the connection up and brings the schema to SCHEMA_VERSION, all pending migrations in one
 * transaction. Refuses a database from a newer devs-ctx rather than writing rows it might misread.
 */
export function prepareDatabase(db: SqliteDatabase, path: string, migrations: readonly string[] = MIGRATIONS): void {
  // busy_timeout first: switching to WAL takes a lock another process may hold.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Another application's database (tables of its own, no devs-ctx schema): not made an archive, not
  // even switched to WAL; `--archive` named the wrong file. Both read in one transaction: a devs-ctx
  // creating this archive at the same moment commits its tables and its version together, and read
  // apart, the version before its commit and the tables after made the archive look foreign.
  const foreign = db.transaction(
    () => schemaVersion(db) === 0 && (db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number) > 0,
  );
  if (foreign()) {
    throw new InputError(
      `${path} is a SQLite database of another application, not a devs-ctx archive; devs-ctx changed nothing in it`,
      'name another file for the archive (--archive PATH, or DEVS_CTX_ARCHIVE)',
    );
  }
  // A new archive gets large pages, before anything is written (an existing one keeps its own). A
  // prune writes megabytes of turns in one commit: each page is a WAL frame, then a copy into the
  // database at the checkpoint, and at SQLite's 4 KiB a prune of 7 MB crossed the auto-checkpoint
  // in its commit: 48 ms to write and close, 39 ms with 16 KiB pages. Larger pages save more there
  // (32 ms at 32 KiB) but cost small prunes: 96 prunes of 200 short turns took 136–149 ms to write
  // at 32 KiB, 123–134 at 16 KiB, 112–130 at 4 KiB; and a new archive is larger (750 KB at 32 KiB).
  if (db.pragma('page_count', { simple: true }) === 0) db.pragma(`page_size = ${NEW_ARCHIVE_PAGE_SIZE}`);
  // Switching to WAL takes the database's exclusive lock; while another process switches or first
  // writes the same new archive, SQLite may say it is busy without waiting (the busy timeout does
  // not cover a lock it could deadlock on): try again until the timeout.
  switchToWal(db);
  db.pragma('foreign_keys = ON');
  const known = migrations.length;
  // Fast path without a write lock: most opens find the schema up to date.
  const seen = schemaVersion(db);
  if (seen > known) throw new ArchiveSchemaError(path, seen, known);
  if (seen === known) return;
  const migrate = db.transaction(() => {
    // Read again under the write lock: another process may have migrated since.
    const current = schemaVersion(db);
    if (current > known) throw new ArchiveSchemaError(path, current, known);
    for (let version = current; version < known; version++) db.exec(migrations[version] ?? '');
    db.pragma(`user_version = ${known}`);
  });
  migrate.immediate();
}
