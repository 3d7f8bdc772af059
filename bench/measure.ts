/**
 * Running and timing the bench's commands: one spawned process at a time, its wall time, and (through
 * `/usr/bin/time -v` where it works) its CPU time and peak RSS; medians over runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const dataDir = join(dirname(fileURLToPath(import.meta.url)), '.data');

/** One timed run: wall time, and peak RSS when it was measured. */
export interface Sample {
  readonly ms: number;
  readonly maxRssKb?: number;
  /** User + system CPU time of the process (all its threads), when /usr/bin/time measured it. */
  readonly cpuMs?: number;
}

/** The result of a case: median time over its runs, and the largest peak RSS seen. */
export interface Stat {
  readonly name: string;
  readonly runs: number;
  readonly medianMs: number;
  readonly maxRssKb?: number;
  readonly medianCpuMs?: number;
}

interface RunOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly okCodes?: readonly number[];
  /** Measure peak RSS too (through /usr/bin/time -v, or a --import hook reading resourceUsage). */
  readonly rss?: boolean;
  /** The process is killed after this long, and the run fails (default: none). */
  readonly timeoutMs?: number;
}

export class CommandFailed extends Error {
  /** What the process itself wrote to standard error (without /usr/bin/time's report). */
  readonly stderr: string;

  constructor(message: string, stderr = '') {
    super(message);
    this.stderr = stderr;
  }
}

/** Ctrl-C reached the command the bench was running: it ended, and the bench ends. */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/**
 * Whether a command the bench ran ended because of Ctrl-C: killed by SIGINT, or ended with 130 as
 * devs-ctx (and most tools) do once they have heard it, also as `/usr/bin/time` passes it on.
 */
export function interruptedBy(result: { readonly status: number | null; readonly signal: NodeJS.Signals | null; readonly stderr?: string | null }): boolean {
  return result.signal === 'SIGINT' || result.status === 130 || /^Command terminated by signal 2$/m.test(result.stderr ?? '');
}

/**
 * A process's standard error without the report `/usr/bin/time -v` appends to it (its first line,
 * "Command exited with …" or "Command terminated by …", follows the process's last text directly when
 * that did not end its line).
 */
function ownStderr(stderr: string, timed: boolean): string {
  if (!timed) return stderr;
  const report = stderr.search(/^\tCommand being timed:/m);
  if (report < 0) return stderr;
  return stderr.slice(0, report).replace(/Command (?:exited with non-zero status|terminated by signal) \d+\n$/, '');
}

let rssProbe: 'time' | 'hook' | undefined;
/** `/usr/bin/time -v` when it works here; otherwise a preloaded hook that prints maxRSS at exit. */
export function rssMethod(): 'time' | 'hook' {
  if (rssProbe) return rssProbe;
  const probe = existsSync('/usr/bin/time') ? spawnSync('/usr/bin/time', ['-v', process.execPath, '-e', '0'], { encoding: 'utf8' }) : undefined;
  rssProbe = probe?.status === 0 && /Maximum resident set size/.test(probe.stderr) ? 'time' : 'hook';
  return rssProbe;
}

function rssHookFile(): string {
  const file = join(dataDir, 'maxrss-hook.mjs');
  writeFileSync(
    file,
    "import { writeSync } from 'node:fs';\n" +
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is JavaScript for the child, whose template it is
      "process.on('exit', () => writeSync(2, `\\nDEVS_CTX_BENCH_MAXRSS_KB ${process.resourceUsage().maxRSS}\\n`));\n",
  );
  return file;
}

/** Spawns `node ...args`, times it, and throws when it fails. */
export function runNode(args: readonly string[], options: RunOptions = {}): Sample & { stdout: string } {
  const okCodes = options.okCodes ?? [0];
  const env = { ...process.env, NO_COLOR: '1', ...options.env };
  const limit = options.timeoutMs;
  // A time limit under /usr/bin/time is kept by coreutils' timeout beneath it: killing /usr/bin/time
  // itself would leave its child running. In the foreground, so that Ctrl-C reaches the child (it
  // then times out the child alone, not the child's own children). Without timeout(1) there, the
  // child runs unwrapped, killed outright at the limit.
  const timeoutCommand = limit !== undefined && rssMethod() === 'time' && existsSync('/usr/bin/timeout') ? '/usr/bin/timeout' : undefined;
  let command = process.execPath;
  let argv = [...args];
  // /usr/bin/time -v whenever it works here: it gives CPU time (and peak RSS) at no cost.
  const method = rssMethod() === 'time' && (limit === undefined || timeoutCommand) ? 'time' : options.rss ? 'hook' : undefined;
  if (method === 'time') {
    command = '/usr/bin/time';
    argv = ['-v', ...(timeoutCommand && limit !== undefined ? [timeoutCommand, '--foreground', '-k', '2', `${limit / 1000}s`] : []), process.execPath, ...args];
  } else if (method === 'hook') {
    argv = ['--import', rssHookFile(), ...args];
  }
  const start = performance.now();
  const result = spawnSync(command, argv, {
    env,
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    // The process itself is killed here; under timeout(1), only if that fails to end it.
    ...(limit === undefined ? {} : { timeout: timeoutCommand ? limit + 15_000 : limit, killSignal: 'SIGKILL' as const }),
  });
  const ms = performance.now() - start;
  const stderr = ownStderr(result.stderr ?? '', method === 'time');
  // timeout(1) ends with 124, or 137 once it had to kill; a command may end so itself, before the limit.
  const timedOut = timeoutCommand !== undefined && limit !== undefined && ms >= limit && (result.status === 124 || result.status === 137);
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT' || timedOut) {
    throw new CommandFailed(`node ${args.join(' ')} did not finish within ${((limit ?? 0) / 1000).toFixed(0)} s`, stderr);
  }
  const ok = !result.error && result.status !== null && okCodes.includes(result.status);
  if (!ok && interruptedBy({ ...result, stderr: method === 'time' ? result.stderr.slice(stderr.length) : '' })) throw new Interrupted();
  if (result.error) throw new CommandFailed(`node ${args.join(' ')}: ${result.error.message}`, stderr);
  if (!ok) {
    // A command that reports on standard output (analyze --ndjson, say) says there why it failed.
    const printed = result.stdout.trim() ? `\n${result.stdout.trim().slice(-1000)}` : '';
    throw new CommandFailed(`node ${args.join(' ')} exited ${result.status ?? result.signal}\n${stderr.slice(-2000)}${printed}`, stderr);
  }
  let maxRssKb: number | undefined;
  let cpuMs: number | undefined;
  if (method === 'time') {
    cpuMs = 1000 * (Number(/User time \(seconds\): ([\d.]+)/.exec(result.stderr)?.[1]) + Number(/System time \(seconds\): ([\d.]+)/.exec(result.stderr)?.[1]));
    if (!Number.isFinite(cpuMs)) cpuMs = undefined;
  }
  if (method === 'time' && options.rss) maxRssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1]);
  if (method === 'hook') maxRssKb = Number(/DEVS_CTX_BENCH_MAXRSS_KB (\d+)/.exec(result.stderr)?.[1]);
  if (maxRssKb !== undefined && !Number.isFinite(maxRssKb)) throw new CommandFailed(`no peak RSS from node ${args.join(' ')}`);
  return { ms, stdout: result.stdout, ...(maxRssKb === undefined ? {} : { maxRssKb }), ...(cpuMs === undefined ? {} : { cpuMs }) };
}

/** The median of runs (and the largest peak RSS, if measured), printed as it is found. */
function statOf(name: string, runs: readonly Sample[]): Stat {
  const rss = runs.flatMap((r) => (r.maxRssKb === undefined ? [] : [r.maxRssKb]));
  const cpu = runs.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs]));
  const stat: Stat = { name, runs: runs.length, medianMs: median(runs.map((r) => r.ms)), ...(cpu.length === runs.length ? { medianCpuMs: median(cpu) } : {}) };
  const result = rss.length ? { ...stat, maxRssKb: Math.max(...rss) } : stat;
  process.stderr.write(`  ${name}: ${result.medianMs.toFixed(0)} ms${rss.length ? `, ${(Math.max(...rss) / 1024).toFixed(0)} MB` : ''}\n`);
  return result;
}

/** One case of a group measured in turns (`measureInTurns`). */
export interface TurnCase {
  readonly name: string;
  /** A timed run; undefined when it gave none (a peer tool that is skipped). */
  readonly run: () => Sample | undefined;
  /** Untimed set-up before each of its runs (e.g. a fresh, primed cache dir). */
  readonly before?: () => void;
  /** Untimed runs first, to warm the OS file cache. */
  readonly warmup?: number;
}

/**
 * Each case's median over `rounds` rounds of turns: a round runs every case once, each round
 * starting one further along, so a machine whose load changes during the bench weighs on all of
 * them alike, and a ratio between two of them is not also how the load moved between their runs.
 * Warm-up runs come first. A case that gave no sample has no figure.
 */
export function measureInTurns(cases: readonly TurnCase[], rounds: number): Map<string, Stat> {
  for (const turn of cases) {
    for (let i = 0; i < (turn.warmup ?? 0); i++) {
      turn.before?.();
      turn.run();
    }
  }
  const samples = cases.map((): Sample[] => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const at = (round + k) % cases.length;
      const turn = cases[at] as TurnCase;
      turn.before?.();
      const sample = turn.run();
      if (sample !== undefined) samples[at]?.push(sample);
    }
  }
  return new Map(cases.flatMap((turn, at) => (samples[at]?.length ? [[turn.name, statOf(turn.name, samples[at])] as const] : [])));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

interface MeasureOptions {
  /** Untimed set-up before each run (e.g. a fresh, primed cache dir). */
  readonly before?: () => void;
  /** Untimed runs first, to warm the OS file cache. */
  readonly warmup?: number;
}

/** Runs `fn` `runs` times and returns the median time (and the largest peak RSS, if measured). */
export function measure(name: string, fn: () => Sample, runs: number, options: MeasureOptions = {}): Stat {
  for (let i = 0; i < (options.warmup ?? 0); i++) {
    options.before?.();
    fn();
  }
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    options.before?.();
    samples.push(fn());
  }
  return statOf(name, samples);
}
