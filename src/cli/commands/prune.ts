import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import { countEntries } from '../../core/accounting.js';
import { BudgetImpossibleError, ExitCode, InterruptedError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { summaryReserveFor } from '../../core/prune/engine.js';
import { defaultTargetTokens, PRUNE_STRATEGIES } from '../../core/prune/plan.js';
import { analyzeContext, plannerLimits } from '../../core/session-context.js';
import { toEstimateTokens, toModelTokens } from '../../core/context-size.js';
import { buildPruneReport } from '../../core/prune/report.js';
import { pacedMap, Pacer } from '../../core/pace.js';
import type { PruneReport } from '../../core/prune/report.js';
import type { FormatName } from '../../formats/index.js';
import { assertNoOtherWriters, assertUnchangedOrAppended, checkOutputPath, replaceKeepingAppends } from '../../io/atomic.js';
import type { FileLock } from '../../io/atomic.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { STDIN } from '../../io/input.js';
import { serializeDocument } from '../../io/jsonl.js';
import { pruneDocument } from '../../io/prune-document.js';
import type { Archive } from '../../archive/archive.js';
import { EmbedderSwitched } from '../../providers/fallback.js';
import { checkTranscriptDestination, lockInPlace, realTarget, writeOutput } from '../transcript-output.js';
import { testPause } from '../context.js';
import type { CliContext, InterruptTrap } from '../context.js';
import { archiveDisplay, lazyEmbeddingCache, openArchive, resolveArchivePath } from '../archive.js';
import { buildProviders, chooseProviders, providersReport } from '../providers.js';
import { reportError } from '../errors.js';
import { renderPruneReport } from '../render/prune-text.js';
import { startProgress } from '../render/progress.js';
import { CachedCounter, checkTarget, loadTranscriptInput, readingOptionsShape, settingsFor, tokenOption } from '../shared.js';

const PruneOptionsSchema = z.object({
  ...readingOptionsShape,
  target: tokenOption('--target'),
  summaryShare: z
    .string()
    .trim()
    .regex(/^\d+(?:\.\d+)?%?$/, '--summary-share takes a percentage of the removed tokens, e.g. 3 or 3%')
    .transform((v) => Number(v.replace('%', '')))
    .refine((v) => v > 0 && v <= 50, '--summary-share must be more than 0 and at most 50 (%)')
    .optional(),
  output: z.string().optional(),
  inPlace: z.boolean().optional(),
  dryRun: z.boolean().optional(),
  force: z.boolean().optional(),
  strategy: z.enum(PRUNE_STRATEGIES).optional(),
  goal: z.string().optional(),
  archive: z.union([z.string(), z.boolean()]).optional(),
  summarizer: z.enum(['extractive', 'gemini']).optional(),
  embedder: z.enum(['local', 'gemini']).optional(),
  model: z.string().trim().min(1, '--model needs a model id').optional(),
  embeddingModel: z.string().trim().min(1, '--embedding-model needs a model id').optional(),
  timeout: z.coerce
    .number({ error: '--timeout takes a number of seconds' })
    .positive('--timeout must be more than 0 seconds')
    .max(3600, '--timeout is at most 3600 seconds')
    .optional(),
  fallback: z.enum(['extractive']).optional(),
  redact: z.boolean().optional(),
  interactive: z.boolean().optional(),
  yes: z.boolean().optional(),
});

/** `devs-ctx prune [file|-]`: plan → summarize → write (validated) → archive → replace, or print the plan. */
export async function runPrune(path: string | undefined, rawOptions: Record<string, unknown>, ctx: CliContext): Promise<ExitCodeValue> {
  const json = rawOptions['json'] === true;
  let lock: FileLock | undefined;
  let store: Archive | undefined;
  let vectors: Awaited<ReturnType<typeof lazyEmbeddingCache>> | undefined;
  let trap: InterruptTrap | undefined;
  try {
    const parsed = PruneOptionsSchema.safeParse(rawOptions);
    if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid option', 'see devs-ctx prune --help');
    const options = parsed.data;
    const input = path ?? (ctx.stdin.isTTY ? undefined : STDIN);
    if (input === undefined) throw new UsageError('no transcript given', 'pass a path, or - to read standard input');
    // -o naming the input through a symlinked folder or a hard link is --in-place (locked).
    const { inPlace } = checkTranscriptDestination(input, options, json, { flag: '--dry-run', given: options.dryRun === true }, ctx.cwd);
    // --interactive needs a terminal: checked before anything is read. The review itself runs
    // between ranking and summarizing, below.
    const review = options.interactive ? await import('../interactive/prune-review.js') : undefined;
    const transcriptOnStdout = !inPlace && (options.output === undefined || options.output === STDIN);
    const setup = review?.interactiveSetup(ctx, {
      fromStdin: input === STDIN,
      dryRun: options.dryRun === true,
      yes: options.yes === true,
      screen: json || transcriptOnStdout ? 'stderr' : 'stdout',
    });

    const { settings: givenSettings, file } = settingsFor(options, ctx);
    const givenTarget = options.target ?? file?.config.target;
    // Explicit limits are known before the transcript is read: a bad --target fails first.
    if (givenSettings.limitSource !== 'default') checkTarget(givenTarget ?? defaultTargetTokens(givenSettings), givenSettings.hardLimitTokens);
    const strategy = options.strategy ?? file?.config.strategy ?? 'relevance';
    const summaryPercent = options.summaryShare ?? file?.config.summaryShare;
    const summaryShare = summaryPercent === undefined ? undefined : summaryPercent / 100;
    const choice = await chooseProviders(options, ctx, file);
    const rankRemotely = choice.embedder === 'gemini' && strategy === 'relevance';
    const archivePath = options.dryRun ? undefined : await resolveArchivePath(options.archive, ctx, file);
    // A dry run writes nothing, the archive included; it only reads Gemini vectors cached there.
    const cachePath = options.dryRun && rankRemotely && options.archive !== false ? await resolveArchivePath(options.archive, ctx, file) : archivePath;

    // --in-place works on the real file: replacing a symlink would leave the agent's file unpruned.
    const target = inPlace ? realTarget(resolve(ctx.cwd, input)) : '';
    // Ctrl-C from here on stops at the next safe point with exit 130 and nothing written; a
    // second one ends the process at once, removing the lock first.
    trap = ctx.trapInterrupt?.();
    const pacer = new Pacer(trap?.signal);
    if (inPlace) lock = lockInPlace(target, trap);
    const format = options.format as FormatName | undefined;
    const { doc, transcript, display } = await loadTranscriptInput(input, { format, strict: options.strict === true, ctx, keepRaw: true });
    const counter = new CachedCounter(givenSettings.encoding, options.cache === false ? undefined : defaultCacheDir(ctx.env));
    await pacer.tick(); // reading is one step, loading the tokenizer (on the first count) another
    const tokens = await pacedMap(transcript.entries, (entry) => countEntries([entry], counter)[0]?.total ?? 0, pacer);
    // --target and the limits are in the model's tokens (the window of the session's model, its
    // calibrated size); the planner counts the turns in the file: convert through the calibration.
    const session = analyzeContext({ transcript, tokens, settings: givenSettings });
    const calibration = session.calibration;
    // A target below what the model sees before any turn (system prompt, tools) plans to 0: the
    // prune goes as far as it can and reports the target not reached.
    const planned = plannerLimits(session, givenSettings, givenTarget);
    const { settings, modelTarget } = planned;
    checkTarget(modelTarget, session.limits.hard);
    let { targetTokens } = planned;

    const eventId = randomUUID();
    let progress = startProgress(ctx, `pruning ${display}`);
    vectors = !rankRemotely || !cachePath ? undefined : await lazyEmbeddingCache(cachePath, { readOnly: options.dryRun === true, named: typeof options.archive === 'string' });
    const cache = vectors?.cache;
    const providers = await buildProviders(choice, {
      counter,
      corpus: strategy === 'relevance' ? transcript.entries.map((e) => e.turn.content) : [],
      ...(cache ? { cache } : {}),
      offlineSummary: options.dryRun === true,
      onProgress: (message) => progress.update(message),
      pacer,
    });
    let pinned: ReadonlySet<number> = new Set();
    if (review && setup) {
      progress.stop();
      ({ targetTokens, pinned } = await review.reviewPrune({
        ctx,
        setup,
        file: display,
        destination: inPlace ? display : transcriptOnStdout ? 'standard output' : (options.output ?? STDIN),
        entries: transcript.entries,
        tokens,
        counter,
        policy: { ...settings, strategy, force: options.force === true },
        targetTokens,
        ...(summaryShare !== undefined ? { summaryShare } : {}),
        ...(options.goal !== undefined ? { goal: options.goal } : {}),
        embedder: providers.embedder,
      }));
      progress = startProgress(ctx, `pruning ${display}`);
    }
    // The user's pins (--interactive) are planned and checked as pinned turns.
    const prune = (r: Parameters<typeof pruneDocument>[2]) => pruneDocument(doc, transcript, { ...r, pins: pinned });
    await testPause(ctx, trap?.signal, 'pipeline');
    pacer.check();
    let result;
    try {
      const request = {
        tokens,
        counter,
        policy: { ...settings, targetTokens, strategy, force: options.force === true, summaryReserveTokens: summaryReserveFor(summaryShare) },
        ...(options.goal !== undefined ? { goal: options.goal } : {}),
        embedder: providers.embedder,
        summarizer: providers.summarizer,
        eventId,
        ...(archivePath ? { archiveLocation: archiveDisplay(archivePath) } : {}),
        now: new Date().toISOString(),
        newId: randomUUID,
        ...(calibration.basis !== 'estimate' ? { calibration: { overhead: calibration.overhead, scale: calibration.scale } } : {}),
        ...(trap ? { signal: trap.signal } : {}),
        pacer,
        onProgress: (step: 'relevance' | 'plan' | 'summary') =>
          progress.update(step === 'relevance' ? `ranking turns by relevance (${providers.embedder.name})` : step === 'summary' ? `summarizing (${providers.summarizer.name})` : 'planning'),
      };
      try {
        result = await prune(request);
      } catch (error) {
        // --fallback: the remote embedder failed; rank every turn again with the local one.
        if (!(error instanceof EmbedderSwitched)) throw error;
        result = await prune({ ...request, embedder: providers.localEmbedder });
      }
    } finally {
      progress.stop();
    }
    if (trap?.signal.aborted) throw new InterruptedError();
    const providerBlock = await providersReport(choice, providers, options.dryRun === true, result.prepared.summaryText !== undefined);
    for (const fallback of providers.fallbacks) {
      if (!json) ctx.stderr.write(`devs-ctx: ${fallback.reason}\n  → used the offline ${fallback.usedInstead} instead (--fallback extractive)\n`);
    }
    const { prepared } = result;
    const { plan } = prepared;
    if (plan.outcome === 'impossible') {
      throw new BudgetImpossibleError(`${display}: ${plan.note ?? 'the budget cannot be met'}; nothing was written`, 'raise the limits (--window, --hard-limit) or unpin turns');
    }
    const base = {
      file: display,
      format: transcript.format,
      prepared,
      entries: transcript.entries,
      tokens,
      softLimit: settings.softLimitTokens,
      providers: providerBlock,
      calibration,
      modelLimits: { soft: session.limits.soft, hard: session.limits.hard, target: targetTokens === toEstimateTokens(calibration, modelTarget) ? modelTarget : toModelTokens(calibration, targetTokens) },
    };

    if (options.dryRun) {
      const report = buildPruneReport({ ...base, dryRun: true, output: null });
      counter.save();
      return finish(report, ctx, json, true);
    }

    const outputName = inPlace ? display : options.output && options.output !== STDIN ? options.output : STDIN;
    const { written, after } = result;
    if (!written || !after) {
      // Nothing to do: the output is the input's exact bytes [SPEC §6].
      if (!inPlace) writeOutput(outputName, serializeDocument(doc), ctx);
      counter.save();
      return finish(buildPruneReport({ ...base, dryRun: false, output: inPlace ? null : outputName }), ctx, json, false);
    }

    const afterTokens = after.tokens;
    counter.save();
    const originalBytes = serializeDocument(doc);
    // Archive only a prune that can be written: a file changed meanwhile is found before archiving.
    if (inPlace) {
      assertUnchangedOrAppended(target, originalBytes);
      assertNoOtherWriters(target);
    }
    if (!inPlace && outputName !== STDIN) checkOutputPath(resolve(ctx.cwd, outputName));
    await pacer.settle();

    let archive: { path: string; eventId: string } | undefined;
    if (archivePath) {
      const cached = vectors?.opened();
      store = cached ? new (await import('../../archive/sqlite-archive.js')).SqliteArchive(cached) : await openArchive(archivePath, { mustExist: false, named: typeof options.archive === 'string' });
      {
        await store.recordPrune({
          id: eventId,
          createdAt: new Date().toISOString(),
          sourcePath: input === STDIN ? STDIN : resolve(ctx.cwd, input),
          format: transcript.format,
          strategy,
          targetTokens,
          urgency: plan.urgency,
          ...(prepared.goal ? { goal: prepared.goal } : {}),
          tokensBefore: plan.totalBefore,
          tokensAfter: afterTokens,
          removedTurnCount: plan.dropped.size,
          maskedTurnCount: plan.masked.size,
          tokensSaved: plan.totalBefore - afterTokens,
          ...(prepared.summaryText !== undefined ? { summaryText: prepared.summaryText } : {}),
          input: doc,
          output: { records: written.records, bytes: written.bytes },
          turns: [...plan.dropped, ...plan.masked]
            .sort((a, b) => a - b)
            .map((i) => {
              const entry = transcript.entries[i];
              if (!entry) throw new Error(`entry ${i} missing`);
              return {
                entryIndex: i,
                turnId: entry.turn.id,
                role: entry.turn.role,
                type: entry.turn.type,
                action: plan.dropped.has(i) ? ('dropped' as const) : ('masked' as const),
                tokens: tokens[i] ?? 0,
                content: entry.turn.content,
                ...(entry.turn.timestamp !== undefined ? { timestamp: entry.turn.timestamp } : {}),
                records: entry.source.records,
              };
            }),
        });
      }
      archive = { path: archiveDisplay(archivePath), eventId };
    }

    try {
      await testPause(ctx, trap?.signal, 'archived');
      // The commit point: a signal that arrived before it is seen here (exit 130, nothing written).
      await pacer.settle();
      if (inPlace) replaceKeepingAppends(target, originalBytes, written.bytes);
      else writeOutput(outputName, written.bytes, ctx);
    } catch (error) {
      // The transcript was not written: the archive must not list a prune that did not happen.
      if (archive && store) await forgetPrune(store, eventId, ctx, json);
      throw error;
    }
    await testPause(ctx, trap?.signal, 'written');
    if (trap?.signal.aborted && !json) {
      ctx.stderr.write('devs-ctx: interrupted after the pruned transcript was written; the prune is complete (undo it with devs-ctx restore)\n');
    }
    const report = buildPruneReport({ ...base, dryRun: false, after, ...(archive ? { archive } : {}), output: outputName });
    return finish(report, ctx, json, false);
  } catch (error) {
    return reportError(ctx, error, json);
  } finally {
    trap?.release();
    if (store) await store.close().catch(() => {});
    else vectors?.opened()?.close();
    lock?.release();
  }
}



/** Removes the archived event of a prune whose transcript was not written; says so if even that fails. */
async function forgetPrune(store: Archive, eventId: string, ctx: CliContext, json: boolean): Promise<void> {
  try {
    await store.forgetPrune(eventId);
  } catch (error) {
    if (!json) ctx.stderr.write(`devs-ctx: the archive still lists prune ${eventId}, which was not written (${(error as Error).message}); ignore it in recall\n`);
  }
}


function finish(report: PruneReport, ctx: CliContext, json: boolean, dryRun: boolean): ExitCodeValue {
  if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    // The transcript may be on stdout: the human report goes where it cannot mix with it.
    const toStdout = dryRun || (report.output !== STDIN && report.output !== null) || report.output === null;
    (toStdout && report.output !== STDIN ? ctx.stdout : ctx.stderr).write(renderPruneReport(report, ctx));
  }
  return ExitCode.ok;
}
