import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { countEntries } from '../../core/accounting.js';
import { BudgetImpossibleError, ExitCode, InterruptedError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { excerptable, findGoalExcerpts, planningGoal, summaryReserveFor } from '../../core/prune/engine.js';
import type { GoalExcerptsFound } from '../../core/prune/engine.js';
import { EXCERPT_MIN_LINES } from '../../core/prune/excerpt.js';
import { LineKeepingReader, primeTermIndex, TermIndex } from '../../core/terms.js';
import { defaultTargetTokens } from '../../core/prune/plan.js';
import { analyzeContext, plannerLimits } from '../../core/session-context.js';
import { toEstimateTokens, toModelTokens } from '../../core/context-size.js';
import { buildPruneReport } from '../../core/reports/prune.js';
import { pacedMap, Pacer } from '../../core/pace.js';
import type { PruneReport } from '../../core/reports/prune.js';
import { assertNoOtherWriters, assertUnchangedOrAppended, checkOutputPath, replaceKeepingAppends } from '../../io/atomic.js';
import type { FileLock } from '../../io/atomic.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { STDIN } from '../../io/input.js';
import { serializeDocument } from '../../io/jsonl.js';
import type { Archive } from '../../archive/archive.js';
import { pruneEvent } from '../../archive/prune-event.js';
import { archiveThenWrite } from '../../prune/commit.js';
import { pruneDocument } from '../../prune/document.js';
import { LocalEmbedder } from '../../providers/local-embedder.js';
import type { DocumentPrune } from '../../prune/document.js';
import { checkTranscriptDestination, lockInPlace, realTarget, STDOUT, writeOutput } from '../transcript-output.js';
import { testPause } from '../context.js';
import type { CliContext, InterruptTrap } from '../context.js';
import { SMALLER_COMPILES_V8_FLAGS } from '../v8-flags.js';
import { archiveDisplay, checkOutputIsNotArchive, lazyEmbeddingCache, openArchive, preloadArchiveModule, resolveArchivePath } from '../archive.js';
import { buildProviders, chooseProviders, providersReport } from '../choose-providers.js';
import type { ProviderSet } from '../choose-providers.js';
import type { InteractiveSetup } from '../interactive/prune-review.js';
import { reportError } from '../errors.js';
import { renderPruneReport } from '../render/prune-text.js';
import { startProgress } from '../render/progress.js';
import type { PruneOptions } from '../flags/prune.js';
import { CachedCounter, checkTarget, loadTranscriptInput, settingsFor } from '../shared.js';
import { CountWorkers, PARALLEL_MIN_CHARS } from '../parallel-count.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import type { TranscriptEntry } from '../../core/transcript.js';

/** `devs-ctx prune [file|-]`: parse → load → run the prune service (plan → summarize → write and verify) → archive and write → report. */
export async function runPrune(path: string | undefined, given: PruneOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = given.json === true;
  const held: Held = {};
  try {
    const args = await parsePruneArgs(path, given, ctx, json);
    const loaded = await loadPrune(args, ctx, held);
    const run = await runService(args, loaded, ctx, held);
    const { options, inPlace } = args;
    const { transcript, session, counter } = loaded;
    const { prepared, written, after } = run.result;
    const { plan } = prepared;
    const providerBlock = await providersReport(
      loaded.choice,
      run.providers,
      options.dryRun === true,
      prepared.summaryText !== undefined,
      prepared.ranking?.fallback,
    );
    for (const fallback of providerBlock.fallback) {
      if (!json) ctx.stderr.write(`devs-ctx: ${fallback.reason}\n  → used the offline ${fallback.usedInstead} instead (--fallback extractive)\n`);
    }
    if (plan.outcome === 'impossible') {
      throw new BudgetImpossibleError(
        `${loaded.display}: ${plan.note ?? 'the budget cannot be met'}; nothing was written`,
        'raise the limits (--window, --hard-limit) or unpin turns',
      );
    }
    const { calibration } = session;
    const modelTarget =
      run.targetTokens === toEstimateTokens(calibration, loaded.modelTarget) ? loaded.modelTarget : toModelTokens(calibration, run.targetTokens);
    const base = {
      file: loaded.display,
      format: transcript.format,
      prepared,
      entries: transcript.entries,
      tokens: loaded.tokens,
      softLimit: loaded.settings.softLimitTokens,
      providers: providerBlock,
      calibration,
      modelLimits: { soft: session.limits.soft, hard: session.limits.hard, target: modelTarget },
      issues: [...loaded.doc.issues, ...transcript.issues],
    };
    counter.save();
    if (options.dryRun) return finish(buildPruneReport({ ...base, dryRun: true, output: null }), ctx, json);

    const outputName = inPlace ? loaded.display : options.output && options.output !== STDOUT ? options.output : STDOUT;
    if (!written || !after) {
      // Nothing to do: the output is the input's exact bytes [SPEC §6].
      if (!inPlace) await writeOutput(outputName, serializeDocument(loaded.doc), ctx, held.trap?.signal);
      return finish(buildPruneReport({ ...base, dryRun: false, output: inPlace ? null : outputName }), ctx, json);
    }
    const archive = await writePrune(args, loaded, { ...run, written, after, outputName }, ctx, held);
    return finish(buildPruneReport({ ...base, dryRun: false, after, ...(archive ? { archive } : {}), output: outputName }), ctx, json);
  } catch (error) {
    return reportError(ctx, error, json);
  } finally {
    // The lock first, the signal trap last: a signal while the workers end and the archive closes
    // is the trap's (the run ends as it would), not Node's default end with the lock left behind.
    held.lock?.release();
    await testPause(ctx, held.trap?.signal, 'closing');
    await held.countWorkers?.end();
    if (held.store) await held.store.close().catch(() => {});
    else held.vectors?.opened()?.close();
    held.trap?.release();
  }
}

/**
 * Count workers started before a large transcript is read (it will be counted across the cores
 * cold), so they load the tokenizer while it is read: as many as the count can use for its size.
 */
function startCountWorkers(input: string, encoding: EncodingName, ctx: CliContext): CountWorkers | undefined {
  if (input === STDIN) return undefined;
  let size: number;
  try {
    size = statSync(resolve(ctx.cwd, input)).size;
  } catch {
    return undefined; // reading it says what is wrong
  }
  const workers = Math.min(availableParallelism(), Math.floor(size / (PARALLEL_MIN_CHARS / 2))) - 1;
  return workers > 0 ? new CountWorkers(encoding, workers, SMALLER_COMPILES_V8_FLAGS) : undefined;
}

/** What a prune holds while it runs, released however it ends. */
interface Held {
  countWorkers?: CountWorkers | undefined;
  lock?: FileLock | undefined;
  store?: Archive | undefined;
  vectors?: Awaited<ReturnType<typeof lazyEmbeddingCache>> | undefined;
  trap?: InterruptTrap | undefined;
}

/** The command line, checked before anything is read. */
interface PruneArgs {
  readonly options: PruneOptions;
  readonly json: boolean;
  readonly input: string;
  readonly inPlace: boolean;
  readonly transcriptOnStdout: boolean;
  readonly review?: { readonly reviewPrune: typeof import('../interactive/prune-review.js').reviewPrune; readonly setup: InteractiveSetup };
}

async function parsePruneArgs(path: string | undefined, options: PruneOptions, ctx: CliContext, json: boolean): Promise<PruneArgs> {
  const input = path ?? (ctx.stdin.isTTY ? undefined : STDIN);
  if (input === undefined) throw new UsageError('no transcript given', 'pass a path, or - to read standard input');
  // -o naming the input through a symlinked folder or a hard link is --in-place (locked).
  const { inPlace } = checkTranscriptDestination(input, options, json, { flag: '--dry-run', given: options.dryRun === true }, ctx.cwd);
  // --interactive needs a terminal: checked before anything is read. The review itself runs
  // between the plan and the summary.
  const transcriptOnStdout = !inPlace && (options.output === undefined || options.output === STDOUT);
  if (!options.interactive) return { options, json, input, inPlace, transcriptOnStdout };
  const { interactiveSetup, reviewPrune } = await import('../interactive/prune-review.js');
  const setup = interactiveSetup(ctx, {
    fromStdin: input === STDIN,
    dryRun: options.dryRun === true,
    yes: options.yes === true,
    screen: json || transcriptOnStdout ? 'stderr' : 'stdout',
  });
  return { options, json, input, inPlace, transcriptOnStdout, review: { reviewPrune, setup } };
}

type Loaded = Awaited<ReturnType<typeof loadPrune>>;

/** Settings, providers and archive chosen; the transcript read (locked with --in-place), counted, and its limits in the planner's tokens. */
async function loadPrune(args: PruneArgs, ctx: CliContext, held: Held) {
  const { options, input, inPlace } = args;
  const { settings: givenSettings, file } = settingsFor(options, ctx);
  held.countWorkers = startCountWorkers(input, givenSettings.encoding, ctx);
  const givenTarget = options.target ?? file?.config.target;
  // Both limits explicit are known before the transcript is read: a bad --target fails first (one
  // limit given: the other comes from the model's window, checked once the transcript is read).
  if (!givenSettings.limitSource.includes('default')) checkTarget(givenTarget ?? defaultTargetTokens(givenSettings), givenSettings.hardLimitTokens);
  const strategy = options.strategy ?? file?.config.strategy ?? 'relevance';
  // A large transcript ranked by relevance has every word read (the BM25 fit): its reader is primed
  // now, and V8 compiles it while the transcript is read, not while the count workers count.
  if (held.countWorkers && strategy === 'relevance') primeTermIndex();
  const summaryPercent = options.summaryShare ?? file?.config.summaryShare;
  const summaryShare = summaryPercent === undefined ? undefined : summaryPercent / 100;
  const choice = await chooseProviders(options, ctx, file);
  const rankRemotely = choice.embedder === 'gemini' && strategy === 'relevance';
  const archivePath = options.dryRun ? undefined : await resolveArchivePath(options.archive, ctx, file);
  checkOutputIsNotArchive(options.output, archivePath, ctx.cwd);
  // A dry run writes nothing, the archive included; it only reads Gemini vectors cached there.
  const cachePath = options.dryRun && rankRemotely && options.archive !== false ? await resolveArchivePath(options.archive, ctx, file) : archivePath;

  // --in-place works on the real file: replacing a symlink would leave the agent's file unpruned.
  const target = inPlace ? realTarget(resolve(ctx.cwd, input)) : '';
  // Ctrl-C from here on stops at the next safe point with exit 130 and nothing written; a
  // second one ends the process at once, removing the lock first.
  held.trap = ctx.trapInterrupt?.();
  const pacer = new Pacer(held.trap?.signal);
  if (inPlace) held.lock = lockInPlace(target, held.trap);
  const { format } = options;
  const { doc, transcript, display } = await loadTranscriptInput(input, { format, strict: options.strict === true, ctx, keepRaw: true });
  // The count workers count the transcript, then what the prune counts beyond its turns (the
  // placeholders, the summary's lines); they end once the pruned transcript is made.
  const counter = new CachedCounter(givenSettings.encoding, options.cache === false ? undefined : defaultCacheDir(ctx.env), held.countWorkers);
  await pacer.tick(); // reading is one step, loading the tokenizer (on the first count) another
  // A large transcript counted cold is counted across the cores, as analyze does (the same counts).
  // For a relevance prune, this thread meanwhile does what needs no count (the offline ranking's BM25
  // fit, the tool results' goal excerpts, both reading the turns' terms once) and leaves the counting
  // to the workers; otherwise it counts its share, as analyze does.
  const { entries } = transcript;
  let local = new LocalEmbedder();
  let goalExcerpts: GoalExcerptsFound | undefined;
  await counter.prepare(
    entries,
    availableParallelism(),
    strategy !== 'relevance'
      ? undefined
      : async () => {
          // The tool results' lines are read once, by the fit, and kept for the excerpts.
          const index = new TermIndex();
          const reader = new LineKeepingReader(index, (i) => excerptable(entries[i] as TranscriptEntry), EXCERPT_MIN_LINES);
          local = await LocalEmbedder.fit(
            entries.map((e) => e.turn.content),
            pacer,
            reader,
          );
          const { goal } = planningGoal(entries, options.goal);
          goalExcerpts = await findGoalExcerpts(entries, goal, { index, pacer, lines: (i) => reader.lines(i) });
          // The turns' relevance, as the plan will rank them offline (a remote embedder ranks them then),
          // while count workers count the transcript: not on this thread alone, for a prune that may have nothing to do.
          if (goal && !rankRemotely && held.countWorkers)
            await local.scoreAhead(
              goal,
              entries.map((e) => e.turn.content),
              pacer,
            );
          // Last, while the workers finish counting, the archive's module loads (without workers,
          // this thread counts next, and a prune with nothing to do loads it for nothing).
          if (held.countWorkers) await preloadArchiveModule(archivePath);
        },
  );
  // A review waits for the user: the workers end now rather than wait with it (its plans count the excerpts here).
  if (args.review) await held.countWorkers?.end();
  const tokens = await pacedMap(transcript.entries, (entry) => countEntries([entry], counter)[0]?.total ?? 0, pacer);
  // --target and the limits are in the model's tokens (the window of the session's model, its
  // calibrated size); the planner counts the turns in the file: convert through the calibration.
  const session = analyzeContext({ transcript, tokens, settings: givenSettings });
  // A target below what the model sees before any turn (system prompt, tools) plans to 0: the
  // prune goes as far as it can and reports the target not reached.
  const { settings, modelTarget, targetTokens } = plannerLimits(session, givenSettings, givenTarget);
  checkTarget(modelTarget, session.limits.hard);
  return {
    strategy,
    summaryShare,
    choice,
    rankRemotely,
    archivePath,
    cachePath,
    target,
    pacer,
    doc,
    transcript,
    display,
    counter,
    local,
    goalExcerpts,
    tokens,
    session,
    settings,
    modelTarget,
    targetTokens,
  };
}

/** The prune service on the loaded transcript: providers built, then plan → (review) → summarize → write and verify, nothing written yet. */
async function runService(
  args: PruneArgs,
  loaded: Loaded,
  ctx: CliContext,
  held: Held,
): Promise<{ result: DocumentPrune; providers: ProviderSet; eventId: string; targetTokens: number }> {
  const { options, review } = args;
  const { display, pacer, strategy, transcript } = loaded;
  const eventId = randomUUID();
  let targetTokens = loaded.targetTokens;
  let progress = startProgress(ctx, `pruning ${display}`);
  let result: DocumentPrune;
  let providers: ProviderSet;
  try {
    const { cachePath } = loaded;
    held.vectors =
      !loaded.rankRemotely || !cachePath
        ? undefined
        : await lazyEmbeddingCache(cachePath, { readOnly: options.dryRun === true, named: typeof options.archive === 'string' });
    const cache = held.vectors?.cache;
    const set = await buildProviders(loaded.choice, {
      counter: loaded.counter,
      local: loaded.local,
      ...(cache ? { cache } : {}),
      offlineSummary: options.dryRun === true,
      onProgress: (message) => progress.update(message),
    });
    providers = set;
    await testPause(ctx, held.trap?.signal, 'pipeline');
    pacer.check();
    const policy = { ...loaded.settings, targetTokens, strategy, force: options.force === true, summaryReserveTokens: summaryReserveFor(loaded.summaryShare) };
    const destination = args.inPlace ? display : args.transcriptOnStdout ? 'standard output' : (options.output ?? STDOUT);
    result = await pruneDocument(loaded.doc, transcript, {
      tokens: loaded.tokens,
      counter: loaded.counter,
      policy,
      ...(options.goal !== undefined ? { goal: options.goal } : {}),
      ...(loaded.goalExcerpts ? { goalExcerpts: loaded.goalExcerpts } : {}),
      embedder: set.embedder,
      ...(set.fallbackEmbedder ? { fallbackEmbedder: set.fallbackEmbedder } : {}),
      summarizer: set.summarizer,
      eventId,
      ...(loaded.archivePath ? { archiveLocation: archiveDisplay(loaded.archivePath) } : {}),
      ...(options.archive === false ? { notArchived: true } : {}),
      now: new Date().toISOString(),
      newId: randomUUID,
      ...(loaded.session.calibration.basis !== 'estimate'
        ? { calibration: { overhead: loaded.session.calibration.overhead, scale: loaded.session.calibration.scale } }
        : {}),
      ...(held.trap ? { signal: held.trap.signal } : {}),
      pacer,
      onProgress: (step) => {
        progress.update(
          step === 'relevance' ? `ranking turns by relevance (${set.embedder.name})` : step === 'summary' ? `summarizing (${set.summarizer.name})` : 'planning',
        );
      },
      ...(review
        ? {
            review: async (planning) => {
              progress.stop();
              const { entries } = transcript;
              const reviewed = await review.reviewPrune({
                ctx,
                setup: review.setup,
                file: display,
                destination,
                entries,
                tokens: loaded.tokens,
                planning,
                policy,
              });
              targetTokens = reviewed.targetTokens;
              progress = startProgress(ctx, `pruning ${display}`);
              return reviewed;
            },
          }
        : {}),
    });
  } finally {
    progress.stop();
    // The summary and the output counted, the count workers are done.
    void held.countWorkers?.end();
  }
  if (held.trap?.signal.aborted) throw new InterruptedError();
  return { result, providers, eventId, targetTokens };
}

/** Checks the destination, archives the prune, then writes it (in place, keeping what the agent appended meanwhile). */
async function writePrune(
  args: PruneArgs,
  loaded: Loaded,
  run: { readonly result: DocumentPrune; readonly written: NonNullable<DocumentPrune['written']>; readonly after: NonNullable<DocumentPrune['after']> } & {
    readonly eventId: string;
    readonly targetTokens: number;
    readonly outputName: string;
  },
  ctx: CliContext,
  held: Held,
): Promise<{ path: string; eventId: string } | undefined> {
  const { options, inPlace, input, json } = args;
  const { target, pacer, transcript, archivePath } = loaded;
  const { written, outputName, eventId } = run;
  // The bytes read, when the file was read whole (the archive checks them against what its lines rebuild).
  const originalBytes = loaded.doc.bytes ?? serializeDocument(loaded.doc);
  // Archive only a prune that can be written: a file changed meanwhile is found before archiving.
  if (inPlace) {
    assertUnchangedOrAppended(target, originalBytes);
    assertNoOtherWriters(target);
  }
  if (!inPlace && outputName !== STDOUT) checkOutputPath(resolve(ctx.cwd, outputName));
  await pacer.settle();

  let archive: { store: Archive; event: ReturnType<typeof pruneEvent> } | undefined;
  if (archivePath) {
    const cached = held.vectors?.opened();
    held.store = cached
      ? new (await import('../../archive/sqlite-archive.js')).SqliteArchive(cached)
      : await openArchive(archivePath, { mustExist: false, named: typeof options.archive === 'string' });
    const { prepared } = run.result;
    const event = pruneEvent({
      id: eventId,
      createdAt: new Date().toISOString(),
      sourcePath: input === STDIN ? STDIN : resolve(ctx.cwd, input),
      format: transcript.format,
      strategy: loaded.strategy,
      targetTokens: run.targetTokens,
      plan: prepared.plan,
      ...(prepared.goal ? { goal: prepared.goal } : {}),
      ...(prepared.summaryText !== undefined ? { summaryText: prepared.summaryText } : {}),
      entries: transcript.entries,
      tokens: loaded.tokens,
      input: loaded.doc,
      inputBytes: originalBytes,
      output: written,
      tokensAfter: run.after.tokens,
    });
    archive = { store: held.store, event };
  }
  const write = async (): Promise<void> => {
    await testPause(ctx, held.trap?.signal, 'archived');
    // The commit point: a signal that arrived before it is seen here (exit 130, nothing written).
    await pacer.settle();
    if (inPlace) replaceKeepingAppends(target, originalBytes, written.bytes);
    else await writeOutput(outputName, written.bytes, ctx, held.trap?.signal, { payload: true });
  };
  await archiveThenWrite(archive, write, (id, error) => {
    if (!json) ctx.stderr.write(`devs-ctx: the archive may still list prune ${id}, which was not written (${error.message}); ignore it in recall\n`);
  });
  await testPause(ctx, held.trap?.signal, 'written');
  if (held.trap?.signal.aborted && !json) {
    ctx.stderr.write('devs-ctx: interrupted after the pruned transcript was written; the prune is complete (undo it with devs-ctx restore)\n');
  }
  return archivePath ? { path: archiveDisplay(archivePath), eventId } : undefined;
}

function finish(report: PruneReport, ctx: CliContext, json: boolean): ExitCodeValue {
  if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  // The transcript may be on stdout: the human report goes where it cannot mix with it.
  else (report.output === STDOUT ? ctx.stderr : ctx.stdout).write(renderPruneReport(report, ctx));
  return ExitCode.ok;
}
