/**
 * The performance benchmark: `npm run bench` (builds, then runs this with tsx).
 *
 * Each case is the median of N runs of a real process (process.execPath), compared with a baseline
 * (the floor: read the file and JSON.parse every line; or `node -e 0`) against a target. It reports;
 * it does not gate: exit 0 when a target is missed, non-zero only when a command fails.
 *
 * To add a case, append to `cases` below: a name, a `measure` of what to time, and optionally a
 * baseline case and a target.
 *
 * After the timings, a retention check (not timed): a generated session with facts planted across its
 * middle is pruned to the same budgets by `relevance`, by `recency` and by a plain keep-the-last-turns
 * trim, and the share of facts each keeps is compared (see bench/retention.ts).
 *
 * Then the summary case (not timed; bench/summary.ts, alone: `npm run bench:summary` or
 * `DEVS_CTX_BENCH_ONLY=summary`): devs-ctx's offline summary of each real Claude Code session's span
 * before its first compaction, beside the agent's own compaction summary of it.
 *
 * Last, the calibration check (not timed; alone: `node --import tsx bench/calibration.ts`; with the
 * retention check: `DEVS_CTX_BENCH_CHECKS=only`): over the real Claude Code and Codex sessions in
 * ../shared/realdata, the calibrated context size against the next recorded API call (see
 * bench/calibration.ts).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ensureAgentSession } from './agent-session.js';
import { APPENDED_TURNS, BATCH, CLAUDE_PROJECTS, ensureBatchData, ensureBenchData, ensureClaudeProjects, ensureClaudeSession } from './generate.js';
import { keepLastTurns, PLANTED_FACTS, survival, turnContents, writeRetentionTranscript } from './retention.js';
import type { PlantedFact, Survival } from './retention.js';
import { formatCalibration, runCalibration } from './calibration.js';
import { summaryBench } from './summary.js';
import { CommandFailed, Interrupted, interruptedBy, measure, measureInTurns, rssMethod, runNode } from './measure.js';
import type { TurnCase } from './measure.js';
import { CCUSAGE_ARGS, CCUSAGE_VERSION, ccusageRun, installCcusage } from './peer.js';
import { benchTempDir, DATA_TEMP, endOnCtrlC, removeTempDirs, SYSTEM_TEMP, sweepLeftovers } from './scratch.js';
import type { Sample, Stat } from './measure.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const projectDir = dirname(benchDir);
const dataDir = join(benchDir, '.data');
const cli = join(projectDir, 'bin', 'devs-ctx.js');
/** `DEVS_CTX_BENCH_ONLY=REGEX` runs only the cases whose names match (with their baselines), and no retention check. */
const benchOnly = onlyFilter(process.env['DEVS_CTX_BENCH_ONLY']);
/** The filter, or a clear message and exit 2 when it is not a regular expression. */
function onlyFilter(source: string | undefined): RegExp | undefined {
  if (!source) return undefined;
  try {
    return new RegExp(source);
  } catch (error) {
    process.stderr.write(`bench: DEVS_CTX_BENCH_ONLY is not a regular expression (${(error as Error).message})\n`);
    process.exit(2);
  }
}
/** `DEVS_CTX_BENCH_CHECKS=only` runs only the untimed checks (retention, calibration), without generating the timed cases' data. */
const checksOnly = process.env['DEVS_CTX_BENCH_CHECKS'] === 'only';
const floorScript = join(benchDir, 'floor.mjs');
const floorBatchScript = join(benchDir, 'floor-batch.mjs');
/** analyze exits 0, 10 or 11 by urgency: all three are a successful analysis. */
const ANALYZE_OK = [0, 10, 11] as const;

/** Rounds of turns of a group of cases (see `inTurns`); the 10M file's and the 2,000 sessions' groups take fewer. */
const ROUNDS = 5;
const LONG_ROUNDS = 3;

// ---------------------------------------------------------------------------------------------
// What the cases run

/** A fresh, empty cache dir (removed at the end). */
function freshCacheDir(): string {
  return benchTempDir('cache-', dataDir);
}

function analyze(file: string, cacheDir: string, rss = false): Sample {
  return runNode([cli, 'analyze', file, '--json'], { env: { DEVS_CTX_CACHE_DIR: cacheDir }, okCodes: ANALYZE_OK, rss });
}

/**
 * One prune of `file` as a user would run it: offline (relevance, extractive summary), output to a
 * temp file, archive on (a fresh archive in a temp dir, through DEVS_CTX_ARCHIVE) or off, and an
 * empty token-count cache like analyze's cold runs. The dirs are made before the timed spawn.
 */
function prune(file: string, archive: boolean, more: readonly string[] = []): Sample {
  const dir = freshCacheDir();
  const args = [cli, 'prune', file, '--force', '-o', join(dir, 'pruned.jsonl'), '--json', ...(archive ? [] : ['--no-archive']), ...more];
  const env: Record<string, string> = { DEVS_CTX_CACHE_DIR: join(dir, 'cache') };
  if (archive) env['DEVS_CTX_ARCHIVE'] = join(dir, 'archive.sqlite');
  const sample = runNode(args, { env });
  // The archive and output are a few MB each; do not let them pile up over the runs.
  rmSync(dir, { recursive: true, force: true });
  return sample;
}

/** `analyze DIR --ndjson` over the generated sessions: the pool of workers, streaming rows. */
function analyzeBatch(dir: string, cacheDir: string, rss = false, output: '--ndjson' | '--json' = '--ndjson'): Sample {
  return runNode([cli, 'analyze', dir, output], { env: { DEVS_CTX_CACHE_DIR: cacheDir }, okCodes: ANALYZE_OK, rss });
}

/**
 * An agent hook as the agent runs it: the documented stdin JSON in, a fresh archive each run (the
 * window is archived anew, as before a real compaction), the token cache given.
 */
function agentHook(hook: 'pre-compact' | 'post-compact', session: { path: string; project: string }, cacheDir: string): Sample {
  const dir = freshCacheDir();
  const input = JSON.stringify(
    hook === 'pre-compact'
      ? {
          session_id: 'bench-150k',
          transcript_path: session.path,
          cwd: session.project,
          hook_event_name: 'PreCompact',
          trigger: 'auto',
          custom_instructions: '',
        }
      : { session_id: 'bench-150k', transcript_path: session.path, cwd: session.project, hook_event_name: 'SessionStart', source: 'compact' },
  );
  const start = performance.now();
  const result = spawnSync(process.execPath, [cli, 'agent-hook', hook, '--agent', 'claude-code'], {
    input,
    cwd: session.project,
    env: { ...process.env, NO_COLOR: '1', DEVS_CTX_CACHE_DIR: cacheDir, DEVS_CTX_ARCHIVE: join(dir, 'archive.sqlite') },
    encoding: 'utf8',
  });
  const ms = performance.now() - start;
  if (interruptedBy(result)) throw new Interrupted();
  if (result.status !== 0 || /agent goes on/.test(result.stderr)) throw new CommandFailed(`agent-hook ${hook} failed: ${result.stderr.slice(-2000)}`);
  rmSync(dir, { recursive: true, force: true });
  return { ms };
}

/**
 * A git repository with 25 Claude Code sessions configured for the pre-commit hook and nothing due;
 * the hook has run once, so its record of the sessions is there (the state of every commit but the first).
 */
function hookRepo(session: { path: string }): string {
  const repo = benchTempDir('hook-repo-', dataDir);
  const git = (...args: string[]): void => void spawnSync('git', args, { cwd: repo, env: isolatedGit(), stdio: 'ignore' });
  git('init', '-q');
  mkdirSync(join(repo, 'sessions'));
  const text = readFileSync(session.path, 'utf8').split('\n').slice(0, 200).join('\n');
  for (let i = 0; i < 25; i++) writeFileSync(join(repo, 'sessions', `s${i}.jsonl`), `${text}\n`);
  writeFileSync(join(repo, 'devs-ctx.config.json'), JSON.stringify({ transcripts: ['sessions/*.jsonl'] }));
  const installed = spawnSync(process.execPath, [cli, 'hook', 'install'], { cwd: repo, env: isolatedGit(), encoding: 'utf8' });
  if (interruptedBy(installed)) throw new Interrupted();
  if (installed.status !== 0) throw new CommandFailed(`hook install: ${installed.stderr}`);
  hookCommit(repo);
  return repo;
}

/**
 * The environment for git and the hook in the bench's repository: none of the user's git settings (a
 * global `core.hooksPath` would have `hook install` install into the user's own hooks folder).
 */
function isolatedGit(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
}

/** The pre-commit hook as git runs it (sh, at the work tree's top), nothing due. */
function hookCommit(repo: string): Sample {
  const start = performance.now();
  const result = spawnSync('sh', [join(repo, '.git', 'hooks', 'pre-commit')], {
    cwd: repo,
    // Its own cache (a user's would be the default one): the bench writes nothing in the home folder.
    env: { ...isolatedGit(), NO_COLOR: '1', DEVS_CTX_ARCHIVE: join(repo, 'archive.sqlite'), DEVS_CTX_CACHE_DIR: join(repo, '.cache') },
    encoding: 'utf8',
  });
  const ms = performance.now() - start;
  if (interruptedBy(result)) throw new Interrupted();
  if (result.status !== 0 || !/nothing due \(25 transcripts checked\)/.test(result.stderr))
    throw new CommandFailed(`pre-commit hook: ${result.stderr.slice(-2000)}`);
  return { ms };
}

/**
 * A cache folder as a long-time user has it: `file`'s counts (from an analyze of it) among 190,000
 * in all, the others made up (hashes of texts no transcript holds), added through the built cache.
 */
function fullCountCache(file: string): string {
  const dir = freshCacheDir();
  analyze(file, dir);
  fillCountCache(dir);
  return dir;
}

/** Adds made-up counts to the token-count cache in `dir` until it holds 190,000. */
function fillCountCache(dir: string): void {
  const script = `const { TokenCountCache } = await import(${JSON.stringify(join(projectDir, 'dist', 'io', 'count-cache.js'))});
    const cache = TokenCountCache.open(${JSON.stringify(dir)}, 'o200k_base');
    for (let i = 0; cache.size < 190000; i++) cache.set(TokenCountCache.key('filler ' + i), i % 5000);
    cache.save();`;
  const made = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (interruptedBy(made)) throw new Interrupted();
  if (made.status !== 0) throw new CommandFailed(`filling the count cache: ${made.stderr}`);
}

/**
 * A copy of a projects folder whose three largest sessions have grown since the last run: the cache
 * returned (190,000 counts, see fullCountCache) was made by a run over the folder with those three
 * cut to their first 90 % of lines, which were then put back whole. The rows of the other sessions
 * and the counts of the old turns are in it; the grown ones must be read and their new turns counted.
 */
function grownProjects(projects: string): { dir: string; cache: string } {
  const dir = benchTempDir('claude-grown-', dataDir);
  cpSync(projects, dir, { recursive: true });
  const sessions = largestSessions(dir, 3);
  const whole = sessions.map((path) => readFileSync(path));
  for (const [i, path] of sessions.entries()) {
    const lines = (whole[i] as Buffer).toString('utf8').split('\n');
    writeFileSync(path, `${lines.slice(0, Math.floor(lines.length * 0.9)).join('\n')}\n`);
  }
  const cache = freshCacheDir();
  fillCountCache(cache);
  analyzeBatch(dir, cache);
  for (const [i, path] of sessions.entries()) writeFileSync(path, whole[i] as Buffer);
  return { dir, cache };
}

/** The `n` largest sessions (JSONL files) under `dir`, largest first. */
function largestSessions(dir: string, n: number): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).size - statSync(a).size || (a < b ? -1 : 1))
    .slice(0, n);
}

/**
 * A copy of a projects folder whose largest session, the one being worked in, grew by 10 lines since
 * the last run, and not for the first time: the cache returned (190,000 counts, see fullCountCache)
 * was left by a run with it 20 lines short and one with it 10 lines short, so it holds the folder's
 * rows and where that session's last read ended (read on from there).
 */
function activeSessionGrown(projects: string): { dir: string; cache: string } {
  const dir = benchTempDir('claude-active-', dataDir);
  cpSync(projects, dir, { recursive: true });
  const [session] = largestSessions(dir, 1);
  if (session === undefined) throw new CommandFailed(`no session in ${projects}`);
  const lines = readFileSync(session, 'utf8').split(/(?<=\n)/);
  const cache = freshCacheDir();
  fillCountCache(cache);
  for (const short of [20, 10]) {
    writeFileSync(session, lines.slice(0, lines.length - short).join(''));
    analyzeBatch(dir, cache);
  }
  writeFileSync(session, lines.join(''));
  return { dir, cache };
}

function floor(file: string): Sample {
  return runNode([floorScript, file]);
}

/** The total tokens that analyze reports, found wherever the JSON puts `totalTokens`. */
function reportedTotal(file: string): number | undefined {
  const { stdout } = runNode([cli, 'analyze', file, '--json', '--no-cache'], { okCodes: ANALYZE_OK });
  const find = (value: unknown): number | undefined => {
    if (!value || typeof value !== 'object') return undefined;
    if ('totalTokens' in value && typeof value.totalTokens === 'number') return value.totalTokens;
    for (const child of Object.values(value)) {
      const found = find(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return find(JSON.parse(stdout) as unknown);
}

// ---------------------------------------------------------------------------------------------
// Cases

type Target = { readonly kind: 'ratio'; readonly max: number } | { readonly kind: 'rssMb'; readonly max: number };

interface BenchCase {
  readonly name: string;
  /** The measurement, or why it was skipped. */
  readonly run: () => Stat | { readonly skipped: string };
  /** The name of an earlier case this one is divided by. */
  readonly baseline?: string;
  readonly target?: Target;
  /** The generated data its runs read: made before the runs, only when a picked case needs it. */
  readonly needs?: GeneratedData;
}

/** The kinds of data the bench generates in bench/.data (bench/generate.ts). */
type GeneratedData = 'one-file' | 'batch' | 'claude-projects' | 'claude-session';

async function main(): Promise<number> {
  if (benchOnly?.test('summary')) {
    for (const line of summaryBench(join(projectDir, '..', 'shared', 'realdata'))) console.log(line);
    return 0;
  }
  mkdirSync(dataDir, { recursive: true });
  if (checksOnly) {
    for (const line of retention()) console.log(line);
    console.log('');
    console.log(await calibration());
    return 0;
  }
  const batchName = `${BATCH.sessions.toLocaleString('en-US')} sessions`;
  const claudeName = `${CLAUDE_PROJECTS.sessions} Claude Code sessions`;
  const ccusageName = `ccusage claude session ${claudeName}`;
  const firstName = `analyze ${claudeName} first run`;
  const rerunName = `analyze ${claudeName} re-run`;
  // The same with --json, as one would compare it with `ccusage session --json`: whole reports, kept too.
  const rerunJsonName = `analyze ${claudeName} re-run --json`;
  const grownName = `analyze ${claudeName} re-run, 3 grown, 190k-count cache`;
  const activeName = `analyze ${claudeName} re-run, the active one grown 10 lines, 190k-count cache`;
  const readOnName = 'analyze DIR, 1M-token Claude Code session grown 10 lines';
  const log = (m: string): boolean => process.stderr.write(`${m}\n`);
  // The generated data: made once the cases are picked, each kind only when a picked case needs it
  // (DEVS_CTX_BENCH_ONLY=agent-hook measures the agent hooks without any of it).
  let data = { small: '', large: '', appended: '', appendedTurns: APPENDED_TURNS };
  let batchDir = '';
  let claudeDir = '';
  let claudeProjects = '';
  let claudeSession = '';
  let claudeRerunCache = '';

  const stats = new Map<string, Stat>();
  const missing = (name: string): never => {
    throw new Error(`case ${name} has not run`);
  };
  // Each case is measured in turns with the cases its ratio is taken against (a group: the 1M
  // file's floor, analyze cold and warm and the prunes; the 1M+20 file's floor and analyzes; …),
  // each round running every case of the group once and starting one further along, as the peer
  // below is: a machine whose load changes during the bench weighs on all of them alike. Measured
  // one case after the other, each ratio also measured how the load moved in between. A group is
  // measured when any of its cases is first asked for (DEVS_CTX_BENCH_ONLY runs the whole group).
  const inTurns = (cases: readonly TurnCase[], rounds: number): ((name: string) => Stat) => {
    let measured: Map<string, Stat> | undefined;
    return (name) => {
      measured ??= measureInTurns(cases, rounds);
      return measured.get(name) ?? missing(name);
    };
  };
  let warmCache = '';
  let appendCache = '';
  let fullCacheTemplate: string | undefined;
  let batchWarmCache = '';
  let agentSessionMade: ReturnType<typeof ensureAgentSession> | undefined;
  const agentSession = (): ReturnType<typeof ensureAgentSession> => {
    agentSessionMade ??= ensureAgentSession(dataDir);
    return agentSessionMade;
  };
  let agentWarmCache = '';
  const startUp = inTurns(
    [
      { name: 'node -e 0', run: () => runNode(['-e', '0']), warmup: 1 },
      { name: 'devs-ctx --version', run: () => runNode([cli, '--version']), warmup: 1 },
    ],
    ROUNDS,
  );
  const oneMillion = inTurns(
    [
      { name: 'floor 1M', run: () => floor(data.small), warmup: 1 },
      { name: 'analyze 1M cold', run: () => analyze(data.small, freshCacheDir()) },
      {
        name: 'analyze 1M warm',
        run: () => analyze(data.small, warmCache),
        warmup: 1,
        before: () => {
          if (warmCache) return;
          warmCache = freshCacheDir();
          analyze(data.small, warmCache);
        },
      },
      { name: 'prune 1M cold', run: () => prune(data.small, true) },
      { name: 'prune 1M cold --no-archive', run: () => prune(data.small, false) },
      { name: 'prune 1M cold --strategy recency', run: () => prune(data.small, true, ['--strategy', 'recency']) },
    ],
    ROUNDS,
  );
  const appendedName = `analyze 1M+${data.appendedTurns} warm`;
  const appended = inTurns(
    [
      { name: 'floor 1M+20', run: () => floor(data.appended), warmup: 1 },
      {
        // Each run starts from a cache primed with the original file only, so 20 turns are new.
        name: appendedName,
        run: () => analyze(data.appended, appendCache),
        before: () => {
          appendCache = freshCacheDir();
          analyze(data.small, appendCache);
        },
      },
      {
        // The same with the token-count cache of someone who has used devs-ctx for a while: 190,000
        // counts (the cache keeps at most 200,000), the 1M file's among them. Opening the cache must
        // not cost in proportion to it (a JSON cache of that size took about 370 ms to load).
        name: `${appendedName}, 190k-count cache`,
        run: () => analyze(data.appended, appendCache),
        before: () => {
          fullCacheTemplate ??= fullCountCache(data.small);
          appendCache = freshCacheDir();
          cpSync(fullCacheTemplate, appendCache, { recursive: true });
        },
      },
    ],
    ROUNDS,
  );
  const tenMillion = inTurns(
    [
      { name: 'floor 10M', run: () => floor(data.large), warmup: 1 },
      { name: 'analyze 10M cold', run: () => analyze(data.large, freshCacheDir(), true) },
    ],
    LONG_ROUNDS,
  );
  const batch = inTurns(
    [
      { name: `floor ${batchName}`, run: () => runNode([floorBatchScript, batchDir]), warmup: 1 },
      { name: `analyze ${batchName} cold`, run: () => analyzeBatch(batchDir, freshCacheDir(), true) },
      {
        name: `analyze ${batchName} warm`,
        run: () => analyzeBatch(batchDir, batchWarmCache),
        warmup: 1,
        before: () => {
          if (batchWarmCache) return;
          batchWarmCache = freshCacheDir();
          analyzeBatch(batchDir, batchWarmCache);
        },
      },
    ],
    LONG_ROUNDS,
  );
  const allCases: BenchCase[] = [
    { name: 'node -e 0', run: () => startUp('node -e 0') },
    {
      name: 'devs-ctx --version',
      run: () => startUp('devs-ctx --version'),
      baseline: 'node -e 0',
      target: { kind: 'ratio', max: 2 },
    },
    // The agents' compaction hooks on a 150k-token Claude Code session [issue 17]. Targets: well
    // inside the 60 s (before) and 30 s (after) budgets the install gives them, and close to a
    // process start: cold ≤ 15× node -e 0 (it tokenizes the whole window), warm ≤ 10× (counts
    // cached; it still parses, archives and indexes the window), after ≤ 10× (reads the history,
    // picks the hints; no archive write). Measured 5.7×, 5.0× and 4.2× on 2 loaded cores.
    {
      name: 'agent-hook pre-compact 150k cold',
      run: () => measure('agent-hook pre-compact 150k cold', () => agentHook('pre-compact', agentSession(), freshCacheDir()), 3),
      baseline: 'node -e 0',
      target: { kind: 'ratio', max: 15 },
    },
    {
      name: 'agent-hook pre-compact 150k warm',
      run: () =>
        measure('agent-hook pre-compact 150k warm', () => agentHook('pre-compact', agentSession(), agentWarmCache), 3, {
          before: () => {
            if (agentWarmCache) return;
            agentWarmCache = freshCacheDir();
            agentHook('pre-compact', agentSession(), agentWarmCache);
          },
        }),
      baseline: 'node -e 0',
      target: { kind: 'ratio', max: 10 },
    },
    {
      name: 'agent-hook post-compact 150k',
      run: () => measure('agent-hook post-compact 150k', () => agentHook('post-compact', agentSession(), freshCacheDir()), 3),
      baseline: 'node -e 0',
      target: { kind: 'ratio', max: 10 },
    },
    // A commit with 25 Claude Code sessions configured and nothing due [issue 17 §4]: under 0.5 s,
    // ≤ 5× node -e 0 (which takes 80-190 ms on these loaded cores); measured 284 ms, 3.5×. The
    // shell hook it replaced took 14.2 s (a refresh-check process per session).
    {
      name: 'git hook, 25 sessions, nothing due',
      run: () => {
        const repo = hookRepo(agentSession());
        return measure('git hook, 25 sessions, nothing due', () => hookCommit(repo), 5, { warmup: 1 });
      },
      baseline: 'node -e 0',
      target: { kind: 'ratio', max: 5 },
    },
    { name: 'floor 1M', needs: 'one-file', run: () => oneMillion('floor 1M') },
    {
      name: 'analyze 1M cold',
      needs: 'one-file',
      run: () => oneMillion('analyze 1M cold'),
      baseline: 'floor 1M',
      target: { kind: 'ratio', max: 5 },
    },
    {
      name: 'analyze 1M warm',
      needs: 'one-file',
      run: () => oneMillion('analyze 1M warm'),
      baseline: 'floor 1M',
      target: { kind: 'ratio', max: 1.5 },
    },
    {
      name: 'prune 1M cold',
      needs: 'one-file',
      run: () => oneMillion('prune 1M cold'),
      baseline: 'analyze 1M cold',
      target: { kind: 'ratio', max: 2 },
    },
    {
      name: 'prune 1M cold --no-archive',
      needs: 'one-file',
      run: () => oneMillion('prune 1M cold --no-archive'),
      baseline: 'analyze 1M cold',
      target: { kind: 'ratio', max: 2 },
    },
    {
      // The same prune ranked by recency, archive on: all of it but the offline relevance ranking (the
      // BM25 fit, the goal excerpts and the scores read every turn's words, beside the count). No
      // target: it shows what the default ranking adds to "prune 1M cold".
      name: 'prune 1M cold --strategy recency',
      needs: 'one-file',
      run: () => oneMillion('prune 1M cold --strategy recency'),
      baseline: 'analyze 1M cold',
    },
    { name: 'floor 1M+20', needs: 'one-file', run: () => appended('floor 1M+20') },
    {
      name: appendedName,
      needs: 'one-file',
      run: () => appended(appendedName),
      baseline: 'floor 1M+20',
      target: { kind: 'ratio', max: 2 },
    },
    {
      name: `${appendedName}, 190k-count cache`,
      needs: 'one-file',
      run: () => appended(`${appendedName}, 190k-count cache`),
      baseline: 'floor 1M+20',
      target: { kind: 'ratio', max: 2 },
    },
    { name: 'floor 10M', needs: 'one-file', run: () => tenMillion('floor 10M') },
    {
      name: 'analyze 10M cold',
      needs: 'one-file',
      run: () => tenMillion('analyze 10M cold'),
      baseline: 'floor 10M',
      target: { kind: 'ratio', max: 5 },
    },
    {
      name: 'analyze 10M peak RSS',
      // Peak RSS was taken in the cold runs above; this row only reports it.
      run: () => stats.get('analyze 10M cold') ?? missing('analyze 10M cold'),
      target: { kind: 'rssMb', max: 300 },
    },
    // Many sessions: `analyze DIR` over 2,000 small transcripts in 20 project folders, spread over the
    // cores by a pool of worker threads. The floor reads and parses every file on one thread.
    // Targets (issue 18): cold ≤ 8×: a batch must not cost much more per byte than one big file, the
    // cores paying for its per-file work (2,000 opens, format detection, a report each, worker
    // start-up); warm ≤ 2×: an unchanged file's finished row comes from the row cache, so a re-run
    // costs discovery, an open and two small reads per file. Peak RSS < 300 MB, the one-file bound: rows are held in memory, never reports, so
    // memory must not grow with the number of sessions.
    { name: `floor ${batchName}`, needs: 'batch', run: () => batch(`floor ${batchName}`) },
    {
      name: `analyze ${batchName} cold`,
      needs: 'batch',
      run: () => batch(`analyze ${batchName} cold`),
      baseline: `floor ${batchName}`,
      target: { kind: 'ratio', max: 8 },
    },
    {
      name: `analyze ${batchName} warm`,
      needs: 'batch',
      run: () => batch(`analyze ${batchName} warm`),
      baseline: `floor ${batchName}`,
      target: { kind: 'ratio', max: 2 },
    },
    {
      name: `analyze ${batchName} peak RSS`,
      run: () => stats.get(`analyze ${batchName} cold`) ?? missing(`analyze ${batchName} cold`),
      target: { kind: 'rssMb', max: 300 },
    },
  ];
  // The peer: ccusage over the same Claude Code projects folder (its Claude Code sessions only, given
  // that folder and an empty home; offline: no price fetch; see bench/peer.ts), then devs-ctx over
  // it, first run (empty caches), again with nothing changed, again after three sessions grew, and
  // again after the session being worked in grew by 10 lines (copies of the folder, a long-time
  // user's cache). They are measured in turns (ccusage, first run,
  // re-run, …, each round starting one further along), so a machine whose load changes during the
  // bench weighs on all alike and the ratios stay fair. Without ccusage (it did not install, failed,
  // or did not read the folder's sessions), devs-ctx's runs are measured all the same.
  let peer: { stats: Map<string, Stat>; skipped?: string } | undefined;
  const peerStat = (name: string): Stat | { skipped: string } => {
    if (peer === undefined) {
      const ccusage = installCcusage(benchTempDir('devs-ctx-bench-ccusage-'));
      let skipped = 'skip' in ccusage ? ccusage.skip : undefined;
      const runCcusage = (): Sample | undefined => {
        if ('skip' in ccusage || skipped !== undefined) return undefined;
        const run = ccusageRun(ccusage, claudeDir, CLAUDE_PROJECTS.sessions);
        if ('skip' in run) skipped = run.skip;
        return 'skip' in run ? undefined : run;
      };
      claudeRerunCache = freshCacheDir();
      const rerunJsonCache = freshCacheDir();
      // Warm-up (and the re-runs' primed caches).
      runCcusage();
      analyzeBatch(claudeProjects, claudeRerunCache);
      analyzeBatch(claudeProjects, rerunJsonCache, false, '--json');
      const grown = grownProjects(claudeProjects);
      const active = activeSessionGrown(claudeProjects);
      const stats = measureInTurns(
        [
          { name: ccusageName, run: runCcusage },
          { name: firstName, run: () => analyzeBatch(claudeProjects, freshCacheDir()) },
          { name: rerunName, run: () => analyzeBatch(claudeProjects, claudeRerunCache) },
          { name: rerunJsonName, run: () => analyzeBatch(claudeProjects, rerunJsonCache, false, '--json') },
          {
            name: grownName,
            run: () => {
              // Each run starts from the cache as it was before the sessions grew (a run saves to it).
              const cache = freshCacheDir();
              cpSync(grown.cache, cache, { recursive: true });
              return analyzeBatch(grown.dir, cache);
            },
          },
          {
            name: activeName,
            run: () => {
              const cache = freshCacheDir();
              cpSync(active.cache, cache, { recursive: true });
              return analyzeBatch(active.dir, cache);
            },
          },
        ],
        ROUNDS,
      );
      if (skipped !== undefined) stats.delete(ccusageName);
      peer = { stats, ...(skipped === undefined ? {} : { skipped }) };
    }
    const stat = peer.stats.get(name);
    return stat ?? (name === ccusageName && peer.skipped !== undefined ? { skipped: peer.skipped } : missing(name));
  };
  allCases.push(
    { name: ccusageName, needs: 'claude-projects', run: () => peerStat(ccusageName) },
    { name: firstName, needs: 'claude-projects', run: () => peerStat(firstName), baseline: ccusageName, target: { kind: 'ratio', max: 4 } },
    { name: rerunName, needs: 'claude-projects', run: () => peerStat(rerunName), baseline: ccusageName, target: { kind: 'ratio', max: 1 } },
    { name: rerunJsonName, needs: 'claude-projects', run: () => peerStat(rerunJsonName), baseline: ccusageName, target: { kind: 'ratio', max: 1 } },
    // What a status line or cron job re-running every few minutes meets: a few active sessions have
    // grown, and the cache is a long-time user's. No target in the issue; reported beside the others.
    { name: grownName, needs: 'claude-projects', run: () => peerStat(grownName), baseline: ccusageName },
    // Between two runs of a status line, most often only the session being worked in has grown, by
    // a few turns, and not for the first time (read on from where the last run ended). No target either.
    { name: activeName, needs: 'claude-projects', run: () => peerStat(activeName), baseline: ccusageName },
  );
  // A developer's active session, re-analysed every few minutes: it has grown by 10 lines since the
  // last run. Read whole (the first time it grew, nothing was kept yet) against read on from where
  // the last run ended (each later time). Each run starts from a copy of the cache made for it.
  /** The session's folder, and the cache as the runs before the measured one left it. */
  const grownSession = (readOn: boolean): { dir: string; cache: string } => {
    const lines = readFileSync(claudeSession, 'utf8').split(/(?<=\n)/);
    const dir = benchTempDir('claude-session-', dataDir);
    const file = join(dir, 'project', 'session.jsonl');
    mkdirSync(join(dir, 'project'));
    const cache = freshCacheDir();
    // Read on: a run at 20 lines short, one at 10 short (it grew: where it ended is kept), then the last 10.
    // Whole: a run at 10 short, then the last 10 (its first growth).
    for (const short of readOn ? [20, 10] : [10]) {
      writeFileSync(file, lines.slice(0, lines.length - short).join(''));
      analyzeBatch(dir, cache);
    }
    writeFileSync(file, lines.join(''));
    return { dir, cache };
  };
  /** A run of `analyze DIR` on the grown session, each from a copy of the cache it grew from. */
  const growthCase = (name: string, readOn: boolean): TurnCase => {
    let session: ReturnType<typeof grownSession> | undefined;
    let cache = '';
    return {
      name,
      run: () => analyzeBatch((session as ReturnType<typeof grownSession>).dir, cache),
      warmup: 1,
      before: () => {
        session ??= grownSession(readOn);
        cache = freshCacheDir();
        cpSync(session.cache, cache, { recursive: true });
      },
    };
  };
  const growth = inTurns([growthCase(`${readOnName}, read whole`, false), growthCase(`${readOnName}, read on from where it ended`, true)], ROUNDS);
  allCases.push(
    { name: `${readOnName}, read whole`, needs: 'claude-session', run: () => growth(`${readOnName}, read whole`) },
    // No target in the issue ("a file that only grew is read from where it ended"): reported beside the others.
    {
      name: `${readOnName}, read on from where it ended`,
      needs: 'claude-session',
      run: () => growth(`${readOnName}, read on from where it ended`),
      baseline: `${readOnName}, read whole`,
    },
  );
  // The cases picked, and what they are measured against, and what that is measured against in turn.
  const needed = new Set(allCases.filter((c) => !benchOnly || benchOnly.test(c.name)).map((c) => c.name));
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of allCases) {
      if (!needed.has(c.name)) continue;
      for (const more of [...(c.baseline ? [c.baseline] : []), ...(c.name.endsWith('peak RSS') ? [c.name.replace(/peak RSS$/, 'cold')] : [])]) {
        if (!needed.has(more)) {
          needed.add(more);
          grew = true;
        }
      }
    }
  }
  const cases = allCases.filter((c) => needed.has(c.name));
  const needs = new Set(cases.flatMap((c) => (c.needs ? [c.needs] : [])));
  if (needs.has('one-file')) data = await ensureBenchData(dataDir, log);
  if (needs.has('batch')) batchDir = await ensureBatchData(dataDir, log);
  if (needs.has('claude-projects')) {
    claudeDir = await ensureClaudeProjects(dataDir, log);
    claudeProjects = join(claudeDir, 'projects');
  }
  if (needs.has('claude-session')) claudeSession = await ensureClaudeSession(dataDir, log);

  process.stderr.write(`measuring (${rssMethod() === 'time' ? '/usr/bin/time -v' : 'resourceUsage hook'} for peak RSS)…\n`);
  const skipped = new Map<string, string>();
  for (const c of cases) {
    // A Ctrl-C that came while the bench itself ran (not a command it started) is heard here (a timer
    // lets the event loop take the signal in; an immediate comes round before it does).
    await new Promise((resolve) => setTimeout(resolve, 1));
    const result = c.run();
    if ('skipped' in result) {
      skipped.set(c.name, result.skipped);
      process.stderr.write(`  ${c.name}: skipped: ${result.skipped}\n`);
    } else {
      stats.set(c.name, result);
    }
  }

  // CPU time (user + system, all threads) is printed beside: on a machine shared with other work the
  // wall times swing with the load, CPU time much less. Targets judge the wall-time ratio.
  const rows: string[][] = [['measurement', 'time (ms)', 'baseline', 'ratio', 'target', 'result', 'cpu (ms)', 'cpu ratio']];
  for (const c of cases) {
    const skip = skipped.get(c.name);
    if (skip !== undefined) {
      rows.push([c.name, '', '', '', '', `SKIP: ${skip}`, '', '']);
      continue;
    }
    const stat = stats.get(c.name) ?? missing(c.name);
    const baseSkipped = c.baseline !== undefined && skipped.has(c.baseline);
    const base = c.baseline === undefined || baseSkipped ? undefined : (stats.get(c.baseline) ?? missing(c.baseline));
    const ratio = base ? stat.medianMs / base.medianMs : undefined;
    let target = '';
    let result = '';
    let time = stat.medianMs.toFixed(0);
    switch (c.target?.kind) {
      case 'ratio':
        target = `≤ ${c.target.max}×`;
        result = baseSkipped ? 'no baseline' : ratio !== undefined && ratio <= c.target.max ? 'PASS' : 'MISS';
        break;
      case 'rssMb': {
        const mb = (stat.maxRssKb ?? NaN) / 1024;
        time = `${mb.toFixed(0)} MB`;
        target = `< ${c.target.max} MB`;
        result = mb < c.target.max ? 'PASS' : 'MISS';
        break;
      }
      case undefined:
        break;
      default:
        c.target satisfies never;
    }
    rows.push([
      c.name,
      time,
      base ? `${base.medianMs.toFixed(0)} (${base.name})` : '',
      c.target?.kind === 'rssMb' || ratio === undefined ? '' : `${ratio.toFixed(2)}×`,
      target,
      result,
      c.target?.kind === 'rssMb' || stat.medianCpuMs === undefined ? '' : stat.medianCpuMs.toFixed(0),
      c.target?.kind === 'rssMb' || stat.medianCpuMs === undefined || base?.medianCpuMs === undefined
        ? ''
        : `${(stat.medianCpuMs / base.medianCpuMs).toFixed(2)}×`,
    ]);
  }

  const smallTokens = benchOnly ? undefined : reportedTotal(data.small);
  const cpuList = cpus();
  console.log(
    `machine: ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `node ${process.version}, ${process.platform}-${process.arch}`,
  );
  console.log(
    `1M transcript: devs-ctx counts ${smallTokens ?? '?'} tokens; each case with a baseline measured in turns with it, medians of ${ROUNDS} rounds (${LONG_ROUNDS} for 10M and the 2,000 sessions), but the agent hooks (3 runs) and the git hook (5) measured after node -e 0; ` +
      'prune = offline relevance (the default) to the default target, with --force; --strategy recency: the same without the ranking',
  );
  for (const line of formatTable(rows)) console.log(line);

  console.log(
    `${batchName}: ${BATCH.projects} project folders, generated; analyze DIR --ndjson with ${availableParallelism()} worker thread(s); ` +
      'cold = empty token-count cache; floor = find, read and JSON.parse every file on one thread',
  );
  const peerSkipped = skipped.get(ccusageName);
  console.log(
    `${claudeName}: ${CLAUDE_PROJECTS.projects} projects, generated Claude Code lines; ` +
      (peerSkipped === undefined
        ? `ccusage@${CCUSAGE_VERSION} \`${CCUSAGE_ARGS.join(' ')}\` (installed by the bench into a temp folder; given the folder and an empty home) vs `
        : `ccusage skipped (${peerSkipped}); `) +
      'devs-ctx `analyze <config>/projects --ndjson` (and `--json`, which prints whole reports); first run = empty caches, re-run = nothing changed since',
  );
  if (!benchOnly || benchOnly.test('archive')) {
    const { archiveBench } = await import('./archive.js');
    console.log('');
    for (const line of await archiveBench((m) => process.stderr.write(`${m}\n`))) console.log(line);
  }
  if (benchOnly) return 0;
  console.log('');
  for (const line of retention()) console.log(line);
  console.log('');
  for (const line of summaryBench(join(projectDir, '..', 'shared', 'realdata'))) console.log(line);
  console.log('');
  console.log(await calibration());
  return 0;
}

/** The calibration check over ../shared/realdata, as one line. */
async function calibration(): Promise<string> {
  const realdata = join(projectDir, '..', 'shared', 'realdata');
  return existsSync(realdata) ? formatCalibration(await runCalibration(realdata)) : `calibration: skipped (${realdata} not found)`;
}

/** Columns padded to their widest cell, a rule under the header row. */
function formatTable(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const lines: string[] = [];
  for (const [i, row] of rows.entries()) {
    lines.push(
      row
        .map((cell, j) => cell.padEnd(widths[j] ?? 0))
        .join('  ')
        .trimEnd(),
    );
    if (i === 0) lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Retention

/** Budgets as shares of the session's tokens: a deep prune, a usual one, a light one. */
const RETENTION_BUDGETS = [0.1, 0.2, 0.4] as const;
/** Relevance should keep at least this many times the facts that keeping the last turns keeps. */
const RETENTION_TARGET = 2;

/** Prunes the retention session to `target` with `strategy`; returns what survives and the tokens after. */
function pruneForRetention(file: string, target: number, strategy: 'relevance' | 'recency'): { survived: Survival; tokens: number } {
  const out = join(freshCacheDir(), `${strategy}.jsonl`);
  const { stdout } = runNode([
    cli,
    'prune',
    file,
    '--force',
    '--target',
    String(target),
    '--strategy',
    strategy,
    '--no-archive',
    '--no-cache',
    '-o',
    out,
    '--json',
  ]);
  const report = JSON.parse(stdout) as { after?: { tokens?: number } };
  return { survived: survival(turnContents(out)), tokens: report.after?.tokens ?? NaN };
}

function share(s: Survival): string {
  const summary = s.onlyInSummary.length ? `, ${s.onlyInSummary.length} via summary` : '';
  return `${s.total}/${PLANTED_FACTS.length} (${Math.round((100 * s.total) / PLANTED_FACTS.length)} %${summary})`;
}

const KINDS: readonly [PlantedFact['turn'], string][] = [
  ['user', 'user'],
  ['reasoning', 'reas'],
  ['assistant', 'asst'],
  ['tool_result', 'tool'],
];
function byKind(s: Survival): string {
  const kept = [...s.inTurns, ...s.onlyInSummary];
  return KINDS.map(([kind, label]) => `${label} ${kept.filter((f) => f.turn === kind).length}/${PLANTED_FACTS.filter((f) => f.turn === kind).length}`).join(
    ' ',
  );
}

/** Runs the retention check and returns the lines to print. */
function retention(): string[] {
  process.stderr.write('retention: generating the session and pruning it…\n');
  const session = writeRetentionTranscript(join(dataDir, 'retention.jsonl'));
  const total = reportedTotal(session.file);
  if (total === undefined) throw new CommandFailed('analyze reported no total for the retention session');
  const rows: string[][] = [
    ['budget (--target)', 'relevance', 'recency', 'keep-last', 'relevance/keep-last', 'target', 'result', 'relevance kept, by turn kind'],
  ];
  for (const fraction of RETENTION_BUDGETS) {
    const target = Math.round((total * fraction) / 1000) * 1000;
    const relevance = pruneForRetention(session.file, target, 'relevance');
    const recency = pruneForRetention(session.file, target, 'recency');
    const last = keepLastTurns(session.file, target);
    const lastSurvived = survival(last.contents);
    for (const [name, tokens] of [
      ['relevance', relevance.tokens],
      ['recency', recency.tokens],
      ['keep-last', last.tokens],
    ] as const) {
      if (!(tokens <= target)) process.stderr.write(`  warning: ${name} at --target ${target} came to ${tokens} tokens\n`);
    }
    const ratio = lastSurvived.total === 0 ? (relevance.survived.total > 0 ? Infinity : NaN) : relevance.survived.total / lastSurvived.total;
    rows.push([
      `${target.toLocaleString('en-US')} (${Math.round(fraction * 100)} %)`,
      share(relevance.survived),
      share(recency.survived),
      share(lastSurvived),
      ratio === Infinity ? '∞ (keep-last 0)' : Number.isNaN(ratio) ? 'n/a (both 0)' : `${ratio.toFixed(2)}×`,
      `≥ ${RETENTION_TARGET}×`,
      ratio >= RETENTION_TARGET ? 'PASS' : 'MISS',
      byKind(relevance.survived),
    ]);
  }
  const kinds = KINDS.map(([kind, label]) => `${PLANTED_FACTS.filter((f) => f.turn === kind).length} ${label}`).join(', ');
  return [
    `retention: ${session.turns}-turn devs session, ${total.toLocaleString('en-US')} tokens, seed-generated; goal = its last user request;`,
    `${PLANTED_FACTS.length} planted facts across turns at ${session.factSpan.map((x) => Math.round(x * 100)).join('–')} % of it (${kinds}); a fact survives in a kept turn's text or in the summary turn`,
    ...formatTable(rows),
  ];
}

// Ctrl-C: the command it reached ends, and so does the bench, its temporary folders removed.
endOnCtrlC();
try {
  sweepLeftovers([
    [dataDir, DATA_TEMP],
    [tmpdir(), SYSTEM_TEMP],
  ]);
  process.exitCode = await main();
} catch (error) {
  if (error instanceof Interrupted) {
    process.stderr.write('bench interrupted\n');
    process.exitCode = 130;
  } else {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} finally {
  removeTempDirs();
}
