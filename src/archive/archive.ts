import type { ArchivedTurn, PruneEventInput, PruneEventSummary, RawPruneEvent, RecallHit, RecallOptions, RecordOptions } from './records.js';

export type { RawPruneEvent } from './records.js';

/**
 * The archive as every command sees it [SPEC §8], whatever stores it: a SQLite file (the embedded
 * default) or a PostgreSQL database shared by a team. Async because a server is; the SQLite store
 * answers at once. No SQL crosses this interface.
 */
export interface Archive {
  /** Where it is, safe to print: a file path, or a postgres:// URL without its password. */
  readonly location: string;
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Archives a prune in one transaction, on disk when it returns, before the transcript is written.
   * When it throws (ArchiveWriteError), nothing of the event is stored, unless the error's
   * `stillListed` names it: committed, not synced, and not taken out again. An event id already
   * archived is refused (ArchiveWriteError). `keepUnsynced`: a commit that cannot be synced stays
   * (for what is archived before nothing is overwritten: an agent hook's window, synced when the
   * archive's last connection closes) instead of being taken out and refused.
   */
  recordPrune(event: PruneEventInput, options?: RecordOptions): Promise<void>;
  /**
   * Removes a prune event and everything archived with it, in one transaction, for a prune whose
   * transcript could not be written after it was archived. Returns whether the event was there.
   * It throws when the removal cannot be put on disk, though it has taken effect (the archive may
   * list the event again after a power cut).
   */
  forgetPrune(eventId: string): Promise<boolean>;
  getEvent(eventId: string): Promise<PruneEventSummary | undefined>;
  /** Prune events, newest first. */
  listEvents(options?: { readonly sourcePath?: string; readonly limit?: number }): Promise<PruneEventSummary[]>;
  /** The latest event whose output `currentBytes` still starts with (or the named one, if it does). */
  findRestorable(currentBytes: Buffer, options?: { readonly eventId?: string }): Promise<PruneEventSummary | undefined>;
  /** The transcript as it was before prune `eventId`, with what was appended since kept at the end. */
  restore(eventId: string, currentBytes: Buffer): Promise<Buffer>;
  /** Archived turns matching `query` (the same query rules in every store), best first. */
  recall(query: string, options?: RecallOptions): Promise<RecallHit[]>;
  getTurn(eventId: string, turnIdOrEntryIndex: string | number): Promise<ArchivedTurn | undefined>;
  findTurn(turnId: string, options?: { readonly eventId?: string }): Promise<ArchivedTurn | undefined>;
  listTurns(eventId: string): Promise<ArchivedTurn[]>;
  /** Every event id, oldest first (for `archive copy`). */
  eventIds(): Promise<string[]>;
  /** One event's rows, or undefined (for `archive copy`). */
  exportEvent(eventId: string): Promise<RawPruneEvent | undefined>;
  /** Stores an exported event in one transaction; false (and nothing written) when its id is already there. */
  importEvent(raw: RawPruneEvent): Promise<boolean>;
  /** Cached embedding vectors of these content hashes for `model` (the embedder's cache key), by hash. */
  getEmbeddings(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>>;
  /** Caches vectors for `model` by content hash, in one transaction; an empty vector is skipped. */
  putEmbeddings(model: string, entries: readonly { readonly hash: string; readonly vector: ArrayLike<number> }[]): Promise<void>;
  /** Counts of what is stored (for `archive copy`'s check). */
  counts(): Promise<{ readonly events: number; readonly records: number; readonly turns: number }>;
  close(): Promise<void>;
}

/** A postgres:// or postgresql:// connection string (anything else is a SQLite file path). */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(?:ql)?:\/\//iu.test(location.trim());
}

/**
 * The URL with its password replaced by `***`, safe for messages, `--json` and logs. Read as text,
 * not parsed: a password written without percent-encoding (`u:pa/ss@h`, `u:p@ss@h`) is split
 * elsewhere by a URL parser, and part of it would show. Everything between the first `:` after the
 * user name and the last `@` is hidden, and so are password-like parameters.
 */
export function redactUrl(location: string): string {
  let out = location;
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/iu.exec(location);
  if (scheme) {
    const rest = location.slice(scheme[0].length);
    const at = rest.lastIndexOf('@');
    const colon = rest.indexOf(':');
    if (at >= 0 && colon >= 0 && colon < at) out = `${scheme[0]}${rest.slice(0, colon)}:***${rest.slice(at)}`;
  }
  return out.replace(/([?&](?:password|sslpassword|sslkey)=)[^&#]*/giu, '$1***');
}

/**
 * Text as every store keeps it: a PostgreSQL text column cannot hold U+0000 (which JSON allows in a
 * string), so it is kept as U+FFFD there. Only the turns' searchable text and the event's fields are
 * text; the archived bytes restore uses are exact in both stores.
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * A content hash of an exported event, the same whichever store it came from (`archive copy` compares
 * them): its text fields as every store keeps them (storableText), its bytes exactly.
 */
export function rawEventHash(raw: RawPruneEvent, hash: (data: string | Buffer) => string): string {
  // Keys sorted: the hash depends on the values only, not on the order a store built them in.
  const canonical = (row: object): string =>
    JSON.stringify(row, (key, value: unknown) => {
      if (typeof value === 'string') return storableText(value);
      if (key !== '' || typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    });
  const parts: (string | Buffer)[] = [canonical(raw.event)];
  for (const record of raw.records) parts.push(`\nrecord ${record.index} ${record.bytes.length}\n`, record.bytes);
  for (const turn of raw.turns) parts.push(`\nturn ${canonical(turn)}`);
  return hash(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))));
}
