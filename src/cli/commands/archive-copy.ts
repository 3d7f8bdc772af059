import type { Archive } from '../../archive/archive.js';
import { ExitCode, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import type { ArchiveCopyOptions } from '../flags/archive.js';
import { archiveDisplay, archiveLocation, damagedArchiveError, openArchive } from '../archive.js';
import { reportError } from '../errors.js';

const ARCHIVE_COPY_SCHEMA_VERSION = 1;

/**
 * `devs-ctx archive copy --from A --to B`: every prune event of A that B lacks, copied and then
 * verified by counts and content hashes. Idempotent; deletes nothing in either archive.
 */
export async function runArchiveCopy(options: ArchiveCopyOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  let from: Archive | undefined;
  let to: Archive | undefined;
  try {
    const at = (location: string): string => archiveLocation(ctx.cwd, location);
    const source = at(options.from);
    const target = at(options.to);
    if (source === target) throw new UsageError('--from and --to are the same archive');
    // Read only: copying never changes the archive copied from (no migration of an older one's schema).
    from = await openArchive(source, { mustExist: true, named: true, readOnly: true, flag: '--from' });
    to = await openArchive(target, { mustExist: false, named: true, flag: '--to' });
    const { copyArchive } = await import('../../archive/copy.js');
    const result = await copyArchive(sayingDamage(from, source), sayingDamage(to, target));
    const report = { schemaVersion: ARCHIVE_COPY_SCHEMA_VERSION, from: archiveDisplay(source), to: archiveDisplay(target), ...result };
    if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      ctx.stdout.write(
        `copied ${result.copied} prune event(s) from ${report.from} to ${report.to} (${result.alreadyThere} already there); ` +
          `verified ${result.verified.events} event(s), ${result.verified.records} archived line(s), ${result.verified.turns} turn(s) by content hash\n`,
      );
    }
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  } finally {
    await from?.close().catch(() => {});
    await to?.close().catch(() => {});
  }
}

/**
 * The archive, its failures from damage (a SQLite page that does not read) said as the damage of
 * that archive, which the copy alone could not tell apart (exit 3 with the integrity check to run,
 * not an internal error).
 */
function sayingDamage(archive: Archive, path: string): Archive {
  return new Proxy(archive, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          throw damagedArchiveError(path, error) ?? error;
        }
      };
    },
  });
}
