import { resolve } from 'node:path';
import { ExitCode, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import type { RecallOptions } from '../flags/recall.js';
import { reportError } from '../errors.js';
import { damagedArchiveError } from '../archive.js';
import { openArchiveFor } from './restore.js';
import { thousands } from '../../core/numbers.js';

const RECALL_SCHEMA_VERSION = 1;

/** `devs-ctx recall QUERY`: ranked full-text search over archived turns; `--turn ID` prints one. */
export async function runRecall(words: readonly string[], options: RecallOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const query = words.join(' ').trim();
    if (!query && options.turn === undefined) throw new UsageError('nothing to look for', 'give words to search for, or --turn ID');
    const { path: archivePath, store } = await openArchiveFor(options.archive, ctx);
    try {
      if (options.turn !== undefined) {
        const turn = await store.findTurn(options.turn, options.event !== undefined ? { eventId: options.event } : {});
        if (!turn) {
          // Like a search that finds nothing: not an input error, exit 0 with nothing printed on stdout.
          if (json) ctx.stdout.write(`${JSON.stringify({ schemaVersion: RECALL_SCHEMA_VERSION, archive: archivePath, turn: null }, null, 2)}\n`);
          ctx.stderr.write(
            `no archived turn ${options.turn}${options.event !== undefined ? ` in prune ${options.event}` : ''} in ${archivePath}; search with devs-ctx recall WORDS to find turn ids\n`,
          );
          return ExitCode.ok;
        }
        if (json) ctx.stdout.write(`${JSON.stringify({ schemaVersion: RECALL_SCHEMA_VERSION, archive: archivePath, turn }, null, 2)}\n`);
        else ctx.stdout.write(turn.content.endsWith('\n') ? turn.content : `${turn.content}\n`);
        return ExitCode.ok;
      }
      const hits = await store.recall(query, {
        limit: options.limit ?? 10,
        ...(options.event !== undefined ? { eventId: options.event } : {}),
        ...(options.file !== undefined ? { sourcePath: resolve(ctx.cwd, options.file) } : {}),
        highlight: json ? ['', ''] : ['«', '»'],
      });
      if (json) {
        ctx.stdout.write(`${JSON.stringify({ schemaVersion: RECALL_SCHEMA_VERSION, archive: archivePath, query, hits }, null, 2)}\n`);
      } else if (hits.length === 0) {
        ctx.stderr.write(`no archived turn matches "${query}" in ${archivePath}\n`);
      } else {
        for (const hit of hits) {
          ctx.stdout.write(
            `${hit.turnId}  ${hit.type}  ${thousands(hit.tokens)} tokens  ${hit.strategy === 'compaction' ? `archived before a compaction (event ${hit.eventId.slice(0, 8)}, no prune)` : `${hit.action} by prune ${hit.eventId.slice(0, 8)}`} of ${hit.sourcePath} (${hit.prunedAt})\n`,
          );
          ctx.stdout.write(`  ${hit.snippet.replace(/\s+/g, ' ').trim()}\n`);
        }
        ctx.stderr.write(`${hits.length} match(es); full text: devs-ctx recall --turn ID\n`);
      }
      return ExitCode.ok;
    } catch (error) {
      throw damagedArchiveError(archivePath, error) ?? error;
    } finally {
      await store.close();
    }
  } catch (error) {
    return reportError(ctx, error, json);
  }
}
