import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { isPostgresUrl, redactUrl } from '../../archive/archive.js';
import { defaultArchivePath } from '../../archive/paths.js';
import { CONFIG_FILE_NAME, ConfigFileSchema, limitsFromWindow, resolveSettings } from '../../core/config.js';
import type { SUMMARIZER_NAMES } from '../../core/names.js';
import type { ConfigFile } from '../../core/config.js';
import { ExitCode, InterruptedError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { DEFAULT_HARD_LIMIT_TOKENS, DEFAULT_SOFT_LIMIT_TOKENS, PINNED_TURN_TYPES } from '../../core/policy.js';
import { sessionLimits } from '../../core/session-context.js';
import type { PruneStrategy } from '../../core/prune/plan.js';
import { TurnTypeSchema } from '../../core/turn.js';
import type { TurnType } from '../../core/turn.js';
import { parseTokenAmount } from '../../core/token-amount.js';
import { writeError, writeFileInterruptible } from '../../io/atomic.js';
import { trackedByGit } from '../../io/config.js';
import { archiveLocation } from '../archive.js';
import { testMark } from '../context.js';
import type { CliContext } from '../context.js';
import { reportError } from '../errors.js';
import { answer, canPrompt, loadClack, promptIO, shortTokens } from '../interactive/prompts.js';
import type { Clack, PromptIO } from '../interactive/prompts.js';
import { splitTranscriptList } from '../flags/init.js';
import type { InitOptions } from '../flags/init.js';
import { loadTranscriptInput } from '../shared.js';
import { discoverTranscripts } from '../batch/discover.js';
import { modelWindow } from '../../core/models.js';
import type { ModelWindow } from '../../core/models.js';

const INIT_SCHEMA_VERSION = 1;

type Summarizer = (typeof SUMMARIZER_NAMES)[number];
type Limits = Pick<ConfigFile, 'window' | 'softLimit' | 'hardLimit'>;

/** Every question the wizard asks, with the flag that answers it instead. */
const QUESTIONS = [
  ['transcripts', '--transcripts'],
  ['limits', '--window (or --soft-limit / --hard-limit)'],
  ['pinnedTypes', '--pinned-types'],
  ['strategy', '--strategy'],
  ['summarizer', '--summarizer'],
  ['archive', '--archive'],
] as const;

const DEFAULT_WINDOW = 1_000_000;
const LOCAL_ARCHIVE = '.devs-ctx/archive.sqlite';
const KEY_VARIABLES = ['GEMINI_API_KEY', 'GOOGLE_API_KEY'] as const;

/**
 * `devs-ctx init`: asks what a project's `devs-ctx.config.json` should say (or takes it from flags,
 * or the defaults with --yes), validates it with the config schema and writes it. A cancelled
 * prompt exits 130 and writes nothing; an existing file is replaced only when the user says so.
 */
export async function runInit(options: InitOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const path = resolve(ctx.cwd, options.config ?? CONFIG_FILE_NAME);
    const pinnedTypes = options.pinnedTypes !== undefined ? parsePinnedTypes(options.pinnedTypes) : undefined;
    const screen = json ? ctx.stderr : ctx.stdout;
    const interactive = options.yes !== true && canPrompt(ctx, screen);

    const { exists, apiKeyVariable } = checkInit(options, ctx, { path, interactive });
    const clack = interactive ? await loadClack() : undefined;
    const io = promptIO(ctx, screen);
    if (clack) {
      clack.intro('devs-ctx init', io);
      if (exists && options.force !== true) {
        const replace = answer(
          clack,
          io,
          await clack.confirm({ message: `${displayPath(path, ctx)} already exists. Replace it?`, initialValue: false, ...io }),
        );
        if (!replace) {
          clack.cancel(`Kept ${displayPath(path, ctx)}`, io);
          throw new InterruptedError(`kept ${path}; nothing was written`);
        }
      }
    }

    const notes: string[] = [];
    const note = (text: string, level: 'info' | 'warn' = 'info'): void => {
      if (clack) clack.log[level](text, io);
      else notes.push(text);
    };
    const configDir = dirname(path);
    const home = ctx.env['HOME'] ?? homedir();

    const transcripts = options.transcripts ?? (clack ? await askTranscripts(clack, io) : []);
    transcriptNotes(transcripts, configDir, ctx, note);
    // The window of the model the transcripts name (Claude Code: 200k; Codex: its recorded window).
    const found = limitsFromFlags(options) ? undefined : await modelOfTranscripts(transcripts, configDir, ctx);
    if (found) note(`${found.file}: ${found.model.how}; proposing a ${shortTokens(found.model.window)} window`);
    const proposed = found?.model.window ?? DEFAULT_WINDOW;
    const limits = limitsFromFlags(options) ?? (clack ? await askLimits(clack, io, proposed) : { window: proposed });
    const pinned = pinnedTypes ?? (clack ? await askPinnedTypes(clack, io) : [...PINNED_TURN_TYPES]);
    const strategy = options.strategy ?? (clack ? await askStrategy(clack, io) : 'relevance');
    const summarizer = options.summarizer ?? (clack ? await askSummarizer(clack, io, apiKeyVariable) : apiKeyVariable ? 'gemini' : 'extractive');
    if (summarizer === 'gemini') {
      note(
        apiKeyVariable
          ? `Gemini key found in ${apiKeyVariable} (not shown).`
          : 'No Gemini API key is set: prune with this config exits 2 until one is. Get a key at https://aistudio.google.com/apikey and add `export GEMINI_API_KEY=…` to your shell profile (~/.bashrc, ~/.zshrc); the environment is a safer place for it than this file.',
        apiKeyVariable ? 'info' : 'warn',
      );
    }
    const archive = await chooseArchive(options, { clack, io, ctx, home, note });

    const config = validateConfig(
      {
        ...(transcripts.length > 0 ? { transcripts } : {}),
        ...limits,
        pinnedTypes: pinned,
        strategy,
        // "Offline" means nothing leaves the machine: the embedder follows the summarizer.
        summarizer,
        embedder: summarizer === 'gemini' ? 'gemini' : 'local',
        ...(archive !== undefined ? { archive } : {}),
        ...(options.storeApiKey && apiKeyVariable ? { geminiApiKey: ctx.env[apiKeyVariable] } : {}),
      },
      path,
    );
    const text = `${JSON.stringify(config, null, 2)}\n`;
    // Ctrl-C is heard while a FIFO named by --config waits for its reader (exit 130, nothing written).
    const trap = ctx.trapInterrupt?.();
    try {
      // A file holding the key is readable by its owner alone.
      await writeFileInterruptible(
        path,
        Buffer.from(text),
        trap?.signal,
        () => testMark(ctx, 'fifo'),
        config.geminiApiKey !== undefined ? { mode: 0o600 } : {},
      );
    } catch (error) {
      throw error instanceof InterruptedError ? error : writeError(path, error);
    } finally {
      trap?.release();
    }
    if (config.geminiApiKey !== undefined) notes.push('The Gemini key is stored in the file (mode 0600): do not commit it.');

    reportInit({ path, exists, config, transcripts, configDir, notes, json, clack, io, ctx });
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

/** What must hold before anything is asked: an answer for every question, leave to replace the file, a key to store. */
function checkInit(
  options: InitOptions,
  ctx: CliContext,
  run: { path: string; interactive: boolean },
): { exists: boolean; apiKeyVariable: string | undefined } {
  const { path, interactive } = run;
  const unanswered = QUESTIONS.filter(([key]) => !answeredByFlag(key, options)).map(([, flag]) => flag);
  if (!interactive && options.yes !== true && unanswered.length > 0) {
    throw new UsageError(
      `no terminal to ask on, and no answer given for ${unanswered.join(', ')}`,
      'pass --yes to take the defaults for what the flags leave out (devs-ctx init --help lists them)',
    );
  }
  const exists = existsSync(path);
  if (exists && options.force !== true && !interactive) {
    throw new UsageError(`${path} already exists; nothing was written`, 'pass --force to replace it');
  }
  const apiKeyVariable = KEY_VARIABLES.find((name) => (ctx.env[name] ?? '').trim() !== '');
  if (options.storeApiKey && !apiKeyVariable) {
    throw new UsageError(
      '--store-api-key copies the key from GEMINI_API_KEY or GOOGLE_API_KEY, and neither is set',
      'set one first; keeping it only in the environment is better',
    );
  }
  // The next `git commit -a` would publish it, and devs-ctx reads no key from a file git tracks anyway.
  if (options.storeApiKey && existsSync(dirname(path)) && trackedByGit(path)) {
    throw new UsageError(
      `${path} is tracked by git: a key stored there would be committed with it (and devs-ctx does not read a key from a tracked file); nothing was written`,
      'keep the key in GEMINI_API_KEY, or store it in your own config: devs-ctx init --config ~/.config/devs-ctx/config.json --store-api-key',
    );
  }
  return { exists, apiKeyVariable };
}

/** Warns about transcripts that do not exist yet, or that lie outside the project. */
function transcriptNotes(transcripts: readonly string[], configDir: string, ctx: CliContext, note: (text: string, level?: 'info' | 'warn') => void): void {
  for (const missing of transcripts.filter((t) => !isGlob(t) && !existsSync(resolve(configDir, t)))) {
    note(`${missing} does not exist yet (paths are relative to ${displayPath(configDir, ctx) || '.'})`, 'warn');
  }
  // The hook confines a project's transcripts to its repository (the config may come with a clone).
  for (const outside of transcripts.filter((t) => t === '~' || t.startsWith('~/') || isAbsolute(t) || normalize(t).split(/[\\/]/)[0] === '..')) {
    note(
      `${outside} is outside this folder: the git hook leaves a project's transcripts outside its repository out, unless your own ~/.config/devs-ctx/config.json says "allowTranscriptsOutsideRepository": true (or install the hook with --transcript ${outside})`,
      'warn',
    );
  }
}

/** The archive: from --archive, or asked; never a URL holding a password. */
async function chooseArchive(
  options: InitOptions,
  run: { clack: Clack | undefined; io: PromptIO; ctx: CliContext; home: string; note: (text: string, level?: 'info' | 'warn') => void },
): Promise<string | undefined> {
  const { clack, io, ctx, home, note } = run;
  const archive = options.archive !== undefined ? expandHome(options.archive, home) : clack ? await askArchive(clack, io, ctx, home) : undefined;
  if (archive !== undefined) archiveLocation(ctx.cwd, archive); // `postgres:/…` (one slash) is no path: refused, not written
  if (archive !== undefined && isPostgresUrl(archive) && urlHoldsPassword(archive)) {
    throw new UsageError(
      `--archive ${redactUrl(archive)}: the config file would hold the database password`,
      'leave the password out of the URL and give it with PGPASSWORD or ~/.pgpass (or set DEVS_CTX_ARCHIVE_URL in the environment instead)',
    );
  }
  if (archive !== undefined && (ctx.env['DEVS_CTX_ARCHIVE'] ?? '').trim() !== '') {
    note('DEVS_CTX_ARCHIVE is set in this environment and wins over the archive in the config file', 'warn');
  }
  if (archive !== undefined && !isPostgresUrl(archive) && !isAbsolute(archive) && !archive.startsWith('..')) {
    note(`The archive holds transcript text: keep ${archive.split('/')[0]} out of version control (.gitignore).`);
  } else if (archive !== undefined) {
    note(
      `${isPostgresUrl(archive) ? redactUrl(archive) : archive} is outside this folder: a project's config may send the archive there only when your own ~/.config/devs-ctx/config.json says "allowProjectArchive": true (or pass --config, or set DEVS_CTX_ARCHIVE_URL / DEVS_CTX_ARCHIVE)`,
      'warn',
    );
  }
  return archive;
}

function reportInit(run: {
  path: string;
  exists: boolean;
  config: ConfigFile;
  transcripts: readonly string[];
  configDir: string;
  notes: readonly string[];
  json: boolean;
  clack: Clack | undefined;
  io: PromptIO;
  ctx: CliContext;
}): void {
  const { path, exists, config, transcripts, configDir, notes, json, clack, io, ctx } = run;
  const shown = showable(config);
  const next = nextSteps(transcripts, configDir, ctx);
  if (json) {
    ctx.stdout.write(`${JSON.stringify({ schemaVersion: INIT_SCHEMA_VERSION, path, replaced: exists, config: shown, notes }, null, 2)}\n`);
  } else if (clack) {
    for (const line of notes) clack.log.warn(line, io);
    clack.note(JSON.stringify(shown, null, 2), `Wrote ${displayPath(path, ctx)}`, io);
    clack.outro(`Next: ${next.join('  ·  ')}`, io);
  } else {
    const out = [
      `Wrote ${path}${exists ? ' (replaced)' : ''}:`,
      JSON.stringify(shown, null, 2),
      ...notes.map((n) => `note: ${n}`),
      `next: ${next.join('\n      ')}`,
    ];
    ctx.stdout.write(`${out.join('\n')}\n`);
  }
}

function answeredByFlag(question: (typeof QUESTIONS)[number][0], options: InitOptions): boolean {
  switch (question) {
    case 'limits':
      return limitsFromFlags(options) !== undefined;
    case 'transcripts':
    case 'pinnedTypes':
    case 'strategy':
    case 'summarizer':
    case 'archive':
      return options[question] !== undefined;
    default:
      return question satisfies never;
  }
}

function limitsFromFlags(options: InitOptions): Limits | undefined {
  if (options.window === undefined && options.softLimit === undefined && options.hardLimit === undefined) return undefined;
  return {
    ...(options.window !== undefined ? { window: options.window } : {}),
    ...(options.softLimit !== undefined ? { softLimit: options.softLimit } : {}),
    ...(options.hardLimit !== undefined ? { hardLimit: options.hardLimit } : {}),
  };
}

/** `system,prd,tas` → the types; `none` or an empty value pins no type. */
function parsePinnedTypes(raw: string): TurnType[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 1 && names[0] === 'none') return [];
  const types: TurnType[] = [];
  for (const name of names) {
    const type = TurnTypeSchema.safeParse(name);
    if (!type.success)
      throw new UsageError(`--pinned-types: "${name}" is not a turn type`, `use a comma-separated list of ${TurnTypeSchema.options.join(', ')} (or none)`);
    if (!types.includes(type.data)) types.push(type.data);
  }
  return types;
}

function isGlob(path: string): boolean {
  return /[*?[\]{}]/.test(path);
}

function expandHome(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

/** Zod-validated, and the limits consistent (soft below hard), or a usage error naming the problem. */
function validateConfig(value: Record<string, unknown>, path: string): ConfigFile {
  const result = ConfigFileSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new UsageError(`the answers do not make a valid config: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(), 'see devs-ctx init --help');
  }
  // One limit alone is checked against the seeds' default for the other (the model's window is not known here).
  // The limits are the answers (the flags, or the questions they stand for), not a file yet: a
  // message names them so.
  const { window, softLimit, hardLimit, ...rest } = result.data;
  const flags = {
    ...(window !== undefined ? { window } : {}),
    ...(softLimit !== undefined ? { softLimit } : {}),
    ...(hardLimit !== undefined ? { hardLimit } : {}),
  };
  sessionLimits(resolveSettings({ flags, env: {}, file: { path, config: rest } }), undefined);
  return result.data;
}

/** The config as shown on screen: the key, if stored, is never printed. */
function showable(config: ConfigFile): ConfigFile {
  return config.geminiApiKey !== undefined ? { ...config, geminiApiKey: '(hidden)' } : config;
}

function displayPath(path: string, ctx: CliContext): string {
  const rel = relative(ctx.cwd, path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

function nextSteps(transcripts: readonly string[], configDir: string, ctx: CliContext): string[] {
  const first = transcripts.find((t) => !isGlob(t));
  const file = first ? displayPath(resolve(configDir, first), ctx) : 'session.jsonl';
  return [`devs-ctx analyze ${file}`, `devs-ctx prune ${file} --dry-run`];
}

async function askTranscripts(clack: Clack, io: PromptIO): Promise<string[]> {
  const raw = answer(
    clack,
    io,
    await clack.text({
      message: 'Which transcripts should devs-ctx look after? Paths or globs, comma-separated, relative to the config file (empty: none yet)',
      placeholder: '.devs/sessions/*.jsonl',
      defaultValue: '',
      ...io,
    }),
  );
  return splitTranscriptList(raw);
}

/** The first transcript (of the first 20 found) whose model's window is known, and that window. */
async function modelOfTranscripts(
  transcripts: readonly string[],
  configDir: string,
  ctx: CliContext,
): Promise<{ file: string; model: ModelWindow } | undefined> {
  if (transcripts.length === 0) return undefined;
  let looked = 0;
  for (const found of discoverTranscripts(transcripts, configDir)) {
    if (found.error || looked++ >= 20) continue;
    try {
      const { transcript } = await loadTranscriptInput(found.path, { format: undefined, strict: false, ctx });
      const model = modelWindow(transcript.model);
      if (model) return { file: displayPath(found.path, ctx), model };
    } catch {
      // unreadable or not a transcript: the next one
    }
    if (looked >= 20) break;
  }
  return undefined;
}

async function askLimits(clack: Clack, io: PromptIO, proposed: number = DEFAULT_WINDOW): Promise<Limits> {
  const windows = [...new Set([proposed, 1_000_000, 400_000, 200_000, 128_000])];
  const choice = answer(
    clack,
    io,
    await clack.select<number | 'custom' | 'limits'>({
      message: "The model's context window (the limits follow from it: soft 50 %, hard 80 %)",
      options: [
        ...windows.map((w) => {
          const { soft, hard } = limitsFromWindow(w);
          const why = w === proposed && proposed !== DEFAULT_WINDOW ? ' (the model in your transcripts)' : w === DEFAULT_WINDOW ? ' (the defaults)' : '';
          return { value: w, label: `${shortTokens(w)} tokens`, hint: `soft ${shortTokens(soft)}, hard ${shortTokens(hard)}${why}` };
        }),
        { value: 'custom', label: 'another window size…' },
        { value: 'limits', label: 'set the soft and hard limits myself…' },
      ],
      initialValue: proposed,
      ...io,
    }),
  );
  if (typeof choice === 'number') return { window: choice };
  if (choice === 'custom') return { window: await askTokens(clack, io, 'Context window in tokens (e.g. 300k)', undefined) };
  const softLimit = await askTokens(clack, io, 'Soft limit: prune recommended from here', DEFAULT_SOFT_LIMIT_TOKENS);
  const hardLimit = await askTokens(clack, io, 'Hard limit: prune required from here', Math.max(DEFAULT_HARD_LIMIT_TOKENS, softLimit + 1), (n) =>
    n <= softLimit ? `must be above the soft limit (${shortTokens(softLimit)})` : undefined,
  );
  return { softLimit, hardLimit };
}

async function askTokens(clack: Clack, io: PromptIO, message: string, initial: number | undefined, check?: (n: number) => string | undefined): Promise<number> {
  const raw = answer(
    clack,
    io,
    await clack.text({
      message,
      ...(initial !== undefined ? { initialValue: shortTokens(initial) } : { placeholder: '200k' }),
      validate: (value) => {
        const n = parseTokenAmount(value ?? '');
        if (n === undefined) return 'a positive number of tokens, such as 200000, 200k or 1M';
        return check?.(n);
      },
      ...io,
    }),
  );
  return parseTokenAmount(raw) ?? 0;
}

async function askPinnedTypes(clack: Clack, io: PromptIO): Promise<TurnType[]> {
  const chosen = answer(
    clack,
    io,
    await clack.multiselect<TurnType>({
      message: 'Turn types that are never pruned (project knowledge)',
      options: TurnTypeSchema.options.map((type) => ({ value: type, label: type })),
      initialValues: [...PINNED_TURN_TYPES],
      required: false,
      ...io,
    }),
  );
  // In the schema's order, whatever order they were ticked in.
  return TurnTypeSchema.options.filter((t) => chosen.includes(t));
}

async function askStrategy(clack: Clack, io: PromptIO): Promise<PruneStrategy> {
  return answer(
    clack,
    io,
    await clack.select<PruneStrategy>({
      message: 'Which turns does a prune remove first?',
      options: [
        { value: 'relevance', label: 'relevance', hint: 'the least relevant to the current goal' },
        { value: 'recency', label: 'recency', hint: 'the oldest' },
      ],
      initialValue: 'relevance',
      ...io,
    }),
  );
}

async function askSummarizer(clack: Clack, io: PromptIO, keyVariable: string | undefined): Promise<Summarizer> {
  return answer(
    clack,
    io,
    await clack.select<Summarizer>({
      message: 'Who writes the summary of what a prune removes (and ranks turns)?',
      options: [
        { value: 'extractive', label: 'offline (extractive)', hint: 'nothing leaves this machine' },
        {
          value: 'gemini',
          label: 'Gemini',
          hint: keyVariable
            ? `Flash summaries and Gemini embeddings; key found in ${keyVariable}`
            : 'Flash summaries and Gemini embeddings; needs GEMINI_API_KEY',
        },
      ],
      initialValue: keyVariable ? 'gemini' : 'extractive',
      ...io,
    }),
  );
}

async function askArchive(clack: Clack, io: PromptIO, ctx: CliContext, home: string): Promise<string | undefined> {
  const choice = answer(
    clack,
    io,
    await clack.select<'default' | 'local' | 'custom'>({
      message: 'Where are removed turns archived (so restore and recall can bring them back)?',
      options: [
        {
          value: 'default',
          label: `the default: ${defaultArchivePath({ ...ctx.env, DEVS_CTX_ARCHIVE: undefined }, home)}`,
          hint: 'one archive for every project',
        },
        { value: 'local', label: `next to the config: ${LOCAL_ARCHIVE}` },
        { value: 'custom', label: 'another path…' },
      ],
      initialValue: 'default',
      ...io,
    }),
  );
  if (choice === 'default') return undefined;
  if (choice === 'local') return LOCAL_ARCHIVE;
  const raw = answer(
    clack,
    io,
    await clack.text({
      message: 'Archive path (relative to the config file, or absolute)',
      placeholder: 'archive/devs-ctx.sqlite',
      validate: (value) => ((value ?? '').trim() === '' ? 'a path, please' : undefined),
      ...io,
    }),
  );
  return expandHome(raw.trim(), home);
}

/** Whether a postgres:// URL carries a password: `user:password@`, or `?password=` / `?sslpassword=` (node-postgres reads both). */
/**
 * Whether the URL holds a password: a `:` after the user name, before the first `@` (a password
 * written without percent-encoding too: `u:pa/ss@h`, `u:p@ss@h`), or a password parameter. An `@`
 * in a later parameter (`application_name=ci@laptop`) is no password's end.
 */
function urlHoldsPassword(url: string): boolean {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/*/iu, '');
  const at = rest.indexOf('@');
  if (at >= 0 && rest.slice(0, at).includes(':')) return true;
  const query = url.indexOf('?');
  return query >= 0 && [...new URLSearchParams(url.slice(query + 1)).keys()].some((key) => /^(?:password|sslpassword)$/iu.test(key));
}
