import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ExitCode, InputError, InterruptedError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { ContextRefresher, formatRefresh } from '../../core/refresh/context-refresher.js';
import { pendingToolCall, planRefresh } from '../../core/refresh/decision.js';
import type { RefreshDecision } from '../../core/refresh/decision.js';
import type { Settings } from '../../core/config.js';
import { buildRefreshReport } from '../../core/reports/refresh.js';
import type { InjectedRefresh, RefreshReport } from '../../core/reports/refresh.js';
import type { Transcript } from '../../core/transcript.js';
import type { ConversationTurn } from '../../core/turn.js';
import { appendRefresh } from '../../formats/write.js';
import { replaceKeepingAppends } from '../../io/atomic.js';
import type { FileLock } from '../../io/atomic.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { assertReadableKind, STDIN } from '../../io/input.js';
import { serializeDocument } from '../../io/jsonl.js';
import { FileSummaryCache } from '../../providers/summary-cache.js';
import { CondensingSummaryProvider, MemorySummaryCache, StaticSummaryProvider } from '../../providers/summary-providers.js';
import { pinnedDocuments } from '../../core/refresh/project-documents.js';
import type { ProjectDocuments } from '../../core/refresh/project-documents.js';
import { checkTranscriptDestination, lockInPlace, realTarget, STDOUT, writeOutput } from '../transcript-output.js';
import { checkOutputIsNotArchive, resolveArchivePath } from '../archive.js';
import type { CliContext, InterruptTrap } from '../context.js';
import { refreshCondenser } from '../choose-providers.js';
import { reportError } from '../errors.js';
import { renderRefreshReport } from '../render/refresh-text.js';
import type { RefreshOptions } from '../flags/refresh.js';
import { CachedCounter, loadTranscriptInput, settingsFor } from '../shared.js';

/** The default size of a whole refresh (both sections): enough for a TAS and PRD outline, small next to any window. */
export const DEFAULT_REFRESH_TOKENS = 2000;

/**
 * `devs-ctx refresh [file|-]` [SPEC §6 Refresh]: decide from the transcript itself whether a
 * `[CONTEXT REFRESH]` is due in the current node; with --check say so (exit 12), otherwise write it
 * in the transcript's own format (validated, atomically, locked with --in-place).
 */
export async function runRefresh(path: string | undefined, options: RefreshOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  let lock: FileLock | undefined;
  let trap: InterruptTrap | undefined;
  try {
    const input = path ?? (ctx.stdin.isTTY ? undefined : STDIN);
    if (input === undefined) throw new UsageError('no transcript given', 'pass a path, or - to read standard input');
    // -o naming the input through a symlinked folder or a hard link is --in-place (locked).
    const { inPlace } = checkTranscriptDestination(input, options, json, { flag: '--check', given: options.check === true }, ctx.cwd);
    if (options.check && options.force) throw new UsageError('--check asks whether a refresh is due; --force would make the answer always yes');
    const { settings, file } = settingsFor(options, ctx);
    // Refresh archives nothing, but -o must not replace the archive prunes go to either.
    if (options.output !== undefined && options.output !== STDOUT)
      checkOutputIsNotArchive(options.output, await resolveArchivePath(undefined, ctx, file), ctx.cwd);

    const target = inPlace ? realTarget(resolve(ctx.cwd, input)) : '';
    trap = ctx.trapInterrupt?.();
    if (inPlace) lock = lockInPlace(target, trap);
    const { doc, transcript, display } = await loadTranscriptInput(input, { format: options.format, strict: options.strict === true, ctx, keepRaw: true });
    const turns = transcript.entries.map((e) => e.turn);
    const decision = decideRefresh(transcript, options, { settings, file, ctx });
    const lastRefreshId = decision.lastRefreshIndex !== undefined ? turns[decision.lastRefreshIndex]?.id : undefined;
    const outputName = options.check ? null : inPlace ? display : (options.output ?? STDOUT);
    const base = { file: display, format: transcript.format, decision, lastRefreshId, issues: [...doc.issues, ...transcript.issues] };

    if (options.check || !decision.due) {
      // Nothing to write: the output is the input's exact bytes (like a prune with nothing to do).
      if (!options.check && !inPlace && outputName !== null) await writeOutput(outputName, serializeDocument(doc), ctx, trap?.signal);
      const report = buildRefreshReport({ ...base, output: inPlace ? null : outputName });
      finish(report, ctx, json);
      return options.check && decision.due ? ExitCode.refreshDue : ExitCode.ok;
    }

    if (transcript.format === 'openhands') {
      throw new UsageError(
        `${display}: an OpenHands evaluation output is a finished run: there is no agent to refresh`,
        'refresh the live transcript of the agent instead',
      );
    }
    const cacheDir = options.cache === false ? undefined : defaultCacheDir(ctx.env);
    const counter = new CachedCounter(settings.encoding, cacheDir);
    const documents = readDocuments(options, turns, ctx);
    const cache = cacheDir ? new FileSummaryCache(cacheDir) : new MemorySummaryCache();
    const budgetTokens = options.refreshTokens ?? file?.config.refreshTokens ?? DEFAULT_REFRESH_TOKENS;
    const condensing = await refreshCondenser(options, ctx, file, counter, trap?.signal);
    const provider = new CondensingSummaryProvider(new StaticSummaryProvider(documents.texts, display), {
      budgetTokens,
      counter,
      cache,
      ...(condensing.condenser ? { condenser: condensing.condenser } : {}),
    });
    // The transcript already counted the turns; the library's refresher turns the summaries into the text.
    if (trap?.signal.aborted) throw new InterruptedError();
    const refreshed = await new ContextRefresher({ threshold: 1, summaryProvider: provider }).onTurn(decision.turnsSinceRefresh);
    if (trap?.signal.aborted) throw new InterruptedError();
    const text = refreshed.injectedSummary ?? '';
    // A document condensed offline after Gemini failed is not kept under Gemini's name.
    if (cache instanceof FileSummaryCache && condensing.fallbacks.length === 0) cache.save();
    for (const fallback of condensing.fallbacks) {
      if (!json) ctx.stderr.write(`devs-ctx: ${fallback.reason}\n  → used the offline outline instead (--fallback extractive)\n`);
    }

    const written = appendRefresh(doc, transcript, { text, node: decision.node, now: new Date().toISOString(), newId: randomUUID });
    const injected: InjectedRefresh = {
      turnId: written.turnId,
      placement: written.placement,
      tokens: counter.count(text),
      sources: documents.sources,
      condensed: text !== formatRefresh(...bothTexts(documents.texts, display)),
      budgetTokens,
      text,
      ...(provider.condensations > 0 ? { condenser: condensing.report() } : {}),
    };
    counter.save();
    const originalBytes = serializeDocument(doc);
    if (inPlace) replaceKeepingAppends(target, originalBytes, written.bytes);
    else if (outputName !== null) await writeOutput(outputName, written.bytes, ctx, trap?.signal);
    finish(buildRefreshReport({ ...base, injected, output: outputName }), ctx, json);
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  } finally {
    trap?.release();
    lock?.release();
  }
}

/** Whether a refresh is due in the current node; with --check, one that cannot be written is not. */
function decideRefresh(
  transcript: Transcript,
  options: RefreshOptions,
  run: { settings: Settings; file: ReturnType<typeof settingsFor>['file']; ctx: CliContext },
): RefreshDecision {
  const { settings, file, ctx } = run;
  const turns = transcript.entries.map((e) => e.turn);
  let decision = planRefresh(turns, {
    ...((options.threshold ?? file?.config.refreshThreshold) !== undefined ? { threshold: options.threshold ?? file?.config.refreshThreshold } : {}),
    force: options.force === true,
    pinnedTypes: settings.pinnedTypes,
    pendingToolCall: pendingToolCall(transcript.entries),
  });
  if (options.check && decision.due) {
    // --check answers whether `refresh` would inject: a refresh it cannot write is not due.
    const cannot =
      transcript.format === 'openhands'
        ? 'an OpenHands evaluation output is a finished run: there is no agent to refresh'
        : (() => {
            const { texts } = readDocuments(options, turns, ctx);
            return texts.tas === undefined && texts.prd === undefined
              ? 'there is no TAS or PRD to refresh with (none in the transcript; pass --tas/--prd)'
              : undefined;
          })();
    if (cannot) decision = { ...decision, status: 'unavailable', due: false, reason: `a refresh would be due, but ${cannot}` };
  }
  return decision;
}

/** TAS and PRD texts and where each came from: a file given with --tas/--prd, else the transcript's pinned turns. */
export function readDocuments(
  options: { readonly tas?: string | undefined; readonly prd?: string | undefined },
  turns: readonly ConversationTurn[],
  ctx: CliContext,
): { texts: ProjectDocuments; sources: InjectedRefresh['sources'] } {
  const pinned = pinnedDocuments(turns);
  const fromTurns = (type: 'tas' | 'prd'): string | null => {
    const ids = turns.filter((t) => t.type === type && t.content.trim()).map((t) => t.id);
    return ids.length > 0 ? `turn${ids.length > 1 ? 's' : ''} ${ids.join(', ')}` : null;
  };
  const read = (file: string | undefined): string | undefined => {
    if (file === undefined) return undefined;
    const path = resolve(ctx.cwd, file);
    try {
      // /dev/zero or a socket would be read for ever: refused before reading.
      assertReadableKind(file, statSync(path));
    } catch (error) {
      if (error instanceof InputError) throw new InputError(error.message, 'check the path given to --tas / --prd');
      // cannot stat: reading says why, below
    }
    try {
      return readFileSync(path, 'utf8').trim();
    } catch (error) {
      throw new InputError(
        `${file}: cannot read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message)}`,
        'check the path given to --tas / --prd',
      );
    }
  };
  const tas = read(options.tas) ?? pinned.tas;
  const prd = read(options.prd) ?? pinned.prd;
  return {
    texts: { tas, prd },
    sources: {
      tas: options.tas !== undefined ? `file ${options.tas}` : fromTurns('tas'),
      prd: options.prd !== undefined ? `file ${options.prd}` : fromTurns('prd'),
    },
  };
}

function bothTexts(texts: ProjectDocuments, where: string): [string, string] {
  return [texts.tas ?? `(no TAS in ${where})`, texts.prd ?? `(no PRD in ${where})`];
}

/** The report: JSON on stdout, or text on stdout unless the transcript is there (then stderr). */
function finish(report: RefreshReport, ctx: CliContext, json: boolean): void {
  if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else (report.output === STDOUT ? ctx.stderr : ctx.stdout).write(renderRefreshReport(report, ctx));
}
