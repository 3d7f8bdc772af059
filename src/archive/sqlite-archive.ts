import type { Archive, RawPruneEvent } from './archive.js';
import { ArchiveStore } from './store.js';
import type { ArchivedTurn, PruneEventInput, PruneEventSummary, RecallHit, RecallOptions, RecordOptions } from './records.js';

/** The SQLite archive (ArchiveStore, synchronous) behind the async Archive interface. */
export class SqliteArchive implements Archive {
  readonly kind = 'sqlite' as const;
  readonly location: string;

  constructor(readonly store: ArchiveStore) {
    this.location = store.path;
  }

  static open(path: string): SqliteArchive {
    return new SqliteArchive(ArchiveStore.open(path));
  }

  /** For restore and recall, which only read (see ArchiveStore.openForReading). */
  static openForReading(path: string): SqliteArchive {
    return new SqliteArchive(ArchiveStore.openForReading(path));
  }

  async recordPrune(event: PruneEventInput, options?: RecordOptions): Promise<void> {
    this.store.recordPrune(event, options);
  }
  async forgetPrune(eventId: string): Promise<boolean> {
    return this.store.forgetPrune(eventId);
  }
  async getEvent(eventId: string): Promise<PruneEventSummary | undefined> {
    return this.store.getEvent(eventId);
  }
  async listEvents(options?: { readonly sourcePath?: string; readonly limit?: number }): Promise<PruneEventSummary[]> {
    return this.store.listEvents(options);
  }
  async findRestorable(currentBytes: Buffer, options?: { readonly eventId?: string }): Promise<PruneEventSummary | undefined> {
    return this.store.findRestorable(currentBytes, options);
  }
  async restore(eventId: string, currentBytes: Buffer): Promise<Buffer> {
    return this.store.restore(eventId, currentBytes);
  }
  async recall(query: string, options?: RecallOptions): Promise<RecallHit[]> {
    return this.store.recall(query, options);
  }
  async getTurn(eventId: string, turnIdOrEntryIndex: string | number): Promise<ArchivedTurn | undefined> {
    return this.store.getTurn(eventId, turnIdOrEntryIndex);
  }
  async findTurn(turnId: string, options?: { readonly eventId?: string }): Promise<ArchivedTurn | undefined> {
    return this.store.findTurn(turnId, options);
  }
  async listTurns(eventId: string): Promise<ArchivedTurn[]> {
    return this.store.listTurns(eventId);
  }
  async eventIds(): Promise<string[]> {
    return this.store.eventIds();
  }
  async exportEvent(eventId: string): Promise<RawPruneEvent | undefined> {
    return this.store.exportEvent(eventId);
  }
  async getEmbeddings(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>> {
    return this.store.getEmbeddings(model, hashes);
  }
  async putEmbeddings(model: string, entries: readonly { readonly hash: string; readonly vector: ArrayLike<number> }[]): Promise<void> {
    this.store.putEmbeddings(model, entries);
  }
  async importEvent(raw: RawPruneEvent): Promise<boolean> {
    return this.store.importEvent(raw);
  }
  async counts(): Promise<{ events: number; records: number; turns: number }> {
    return this.store.counts();
  }
  async close(): Promise<void> {
    this.store.close();
  }
}
