import { createHash } from 'node:crypto';
import type { Archive, RawPruneEvent } from './archive.js';
import { rawEventHash } from './archive.js';
import { DevsCtxError, ExitCode } from '../core/errors.js';

export interface CopyResult {
  /** Events written to the destination by this run. */
  readonly copied: number;
  /** Events the destination already had (and whose content matched). */
  readonly alreadyThere: number;
  /** Events, archived lines and turns in the source, all found identical in the destination. */
  readonly verified: { readonly events: number; readonly records: number; readonly turns: number };
}

/** The destination holds an event with the source's id but other content, or lacks what was copied (exit 3). */
class ArchiveCopyMismatchError extends DevsCtxError {
  constructor(message: string, copied = false) {
    super(
      message,
      ExitCode.input,
      'archive_copy_mismatch',
      copied
        ? 'the event was written to the destination and reads back otherwise; nothing was deleted; compare the two with devs-ctx recall --event ID --archive …'
        : 'nothing in either archive was changed or deleted; compare the two events with devs-ctx recall --event ID --archive …',
    );
  }
}

/**
 * Whether two exports are the same event: the same content hash. An agent's compaction event is
 * named by the session file's path and bytes, so two with one id archived the same window: they
 * may differ only in when, and on which trigger, each was archived.
 */
function sameEvent(a: RawPruneEvent, b: RawPruneEvent): boolean {
  const hashOf = (raw: RawPruneEvent): string =>
    rawEventHash(raw.event.strategy === 'compaction' ? { ...raw, event: { ...raw.event, createdAt: '', urgency: '' } } : raw, sha256);
  return hashOf(a) === hashOf(b);
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Copies every prune event of `from` that `to` lacks, each in one transaction, oldest first; then
 * checks every source event against the destination by a content hash of its rows (event, lines,
 * turns). Idempotent: a second run copies nothing and verifies the same. Never deletes anything.
 */
export async function copyArchive(from: Archive, to: Archive): Promise<CopyResult> {
  let copied = 0;
  let alreadyThere = 0;
  let records = 0;
  let turns = 0;
  const ids = await from.eventIds();
  for (const id of ids) {
    const raw = await from.exportEvent(id);
    if (!raw) throw new ArchiveCopyMismatchError(`event ${id} vanished from ${from.location} during the copy`);
    const written = await to.importEvent(raw);
    if (written) copied++;
    else alreadyThere++;
    const landed = await to.exportEvent(id);
    if (!landed || !sameEvent(landed, raw)) {
      throw new ArchiveCopyMismatchError(
        written
          ? `event ${id} was copied into ${to.location} but reads back other content than in ${from.location}`
          : `event ${id} in ${to.location} differs from the one in ${from.location} (same id, other content)`,
        written,
      );
    }
    records += raw.records.length;
    turns += raw.turns.length;
  }
  const counts = await to.counts();
  if (counts.events < ids.length || counts.records < records || counts.turns < turns) {
    throw new ArchiveCopyMismatchError(`${to.location} holds fewer rows than were copied into it`);
  }
  return { copied, alreadyThere, verified: { events: ids.length, records, turns } };
}
