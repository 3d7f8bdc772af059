import type { Archive } from '../archive/archive.js';
import type { PruneEventInput } from '../archive/records.js';

/**
 * The archive step and the commit point of a prune: the event is archived first, then the pruned
 * transcript is written; when the write fails, the event is taken back out of the archive (it must
 * not list a prune that did not happen) and the write's error is thrown. `onForgetFailed` is told
 * when even taking it out fails.
 */
export async function archiveThenWrite(
  archive: { readonly store: Archive; readonly event: PruneEventInput } | undefined,
  write: () => Promise<void>,
  onForgetFailed: (eventId: string, error: Error) => void,
): Promise<void> {
  if (archive) await archive.store.recordPrune(archive.event);
  try {
    await write();
  } catch (error) {
    if (archive) {
      try {
        await archive.store.forgetPrune(archive.event.id);
      } catch (forgetError) {
        onForgetFailed(archive.event.id, forgetError as Error);
      }
    }
    throw error;
  }
}
