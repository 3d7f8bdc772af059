import type { Archive } from './archive.js';
import { isPostgresUrl } from './archive.js';

/**
 * Opens the archive at `location`: a postgres:// URL (PostgreSQL, migrated on first use) or a
 * SQLite file path (created with its folder if missing). Each store is loaded only when used.
 */
export async function openArchiveAt(location: string, options: { readonly mustExist?: boolean } = {}): Promise<Archive> {
  if (isPostgresUrl(location)) {
    const { PostgresArchive } = await import('./postgres.js');
    return PostgresArchive.open(location, options);
  }
  const { SqliteArchive } = await import('./sqlite-archive.js');
  return SqliteArchive.open(location);
}
