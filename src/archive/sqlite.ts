import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { ArchiveUnavailableError } from './errors.js';

/** An open SQLite connection (better-sqlite3). */
export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteConstructor = typeof BetterSqlite3;

const MODULE_ID = 'better-sqlite3';
let loaded: SqliteConstructor | undefined;

/**
 * Loads better-sqlite3 on first use, so commands that never archive do not pay for the native
 * module. Throws ArchiveUnavailableError when the module or its native build cannot be loaded.
 * `moduleId` is a parameter only so a test can name a module that does not exist.
 */
export function loadSqlite(moduleId: string = MODULE_ID): SqliteConstructor {
  if (moduleId === MODULE_ID && loaded) return loaded;
  let Database: SqliteConstructor;
  try {
    Database = createRequire(import.meta.url)(moduleId) as SqliteConstructor;
    // better-sqlite3 loads its .node addon on the first construction, not on require: probe it here
    // so a missing native build is reported as such, not as a failure to open the archive file.
    new Database(':memory:').close();
  } catch (error) {
    throw new ArchiveUnavailableError(error);
  }
  if (moduleId === MODULE_ID) loaded = Database;
  return Database;
}
