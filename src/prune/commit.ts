import type { Archive } from '../archive/archive.js';
import type { PruneEventInput } from '../archive/records.js';
import { ReplacedThenFailedError } from '../core/errors.js';

/**
 * The archive step and the commit point of a prune: the event is archived first, then the pruned
 * transcript is written; when the write fails, the event is taken back out of the archive (it must
 * not list a prune that did not happen) and the write's error is thrown; so it is when archiving
 * fails (the commit may have reached a server whose answer was lost). `onForgetFailed` is told
 * when even taking it out fails.
 */
export async function archiveThenWrite(
  archive: { readonly store: Archive; readonly event: PruneEventInput } | undefined,
  write: () => Promise<void>,
  onForgetFailed: (eventId: string, error: Error) => void,
): Promise<void> {
  const forget = async (): Promise<void> => {
    if (!archive) return;
    try {
      await archive.store.forgetPrune(archive.event.id);
    } catch (forgetError) {
      onForgetFailed(archive.event.id, forgetError as Error);
    }
  };
  if (archive) {
    try {
      await archive.store.recordPrune(archive.event);
    } catch (error) {
      // A connection lost after the commit reached a server leaves the event there, unknown to us:
      // it is taken out again (nothing to take out when it did roll back). A SQLite write that
      // failed rolled back, here, for certain, or (committed, then not synced to disk) was taken
      // out again by the store, whose error says when it could not be: nothing to take out here
      // (the same lock or fault would only fail the attempt too).
      if (archive.store.kind !== 'sqlite') await forget();
      throw error;
    }
  }
  try {
    await write();
  } catch (error) {
    // Replaced, then something failed: the prune happened, and its event stays for restore.
    if (error instanceof ReplacedThenFailedError) {
      throw archive
        ? new ReplacedThenFailedError(`${error.message}; the prune is archived`, `${error.hint ?? 'check the disk'}; devs-ctx restore undoes the prune`)
        : error;
    }
    await forget();
    throw error;
  }
}
