import * as z from 'zod/mini';
import './zod-english.js';
import { UsageError } from './errors.js';
import { parseTokenAmount } from './token-amount.js';
import {
  DEFAULT_HARD_LIMIT_TOKENS,
  DEFAULT_PINNED_PREFIX_TURNS,
  DEFAULT_PROTECTED_TAIL_TURNS,
  DEFAULT_SOFT_LIMIT_TOKENS,
  PINNED_TURN_TYPES,
} from './policy.js';
import type { PrunerConfig } from './policy.js';
import { TurnTypeSchema } from './turn.js';
import type { TurnType } from './turn.js';
import type { EncodingName } from './tokens/encodings.js';
import { EMBEDDER_NAMES, ENCODING_NAMES, FALLBACK_NAMES, PRUNE_STRATEGIES, SUMMARIZER_NAMES } from './names.js';

export const CONFIG_FILE_NAME = 'devs-ctx.config.json';

const tokens = z.number().check(z.int(), z.positive());

/** `devs-ctx.config.json`: every key optional; unknown keys are an error so typos are caught. */
/** The longest request timeout a config may set: what a Node timer holds, 2^31 − 1 ms. */
const MAX_TIMEOUT_SECONDS = 2_147_483;

export const ConfigFileSchema = z.strictObject({
  $schema: z.optional(z.string()),
  /** A model's context window: soft = 50 %, hard = 80 % of it. */
  window: z.optional(tokens),
  softLimit: z.optional(tokens),
  hardLimit: z.optional(tokens),
  pinnedPrefixTurns: z.optional(z.number().check(z.int(), z.nonnegative())),
  pinnedTypes: z.optional(z.array(TurnTypeSchema)),
  protectedTailTurns: z.optional(z.number().check(z.int(), z.nonnegative())),
  encoding: z.optional(z.enum(ENCODING_NAMES)),
  /** prune: which turns go first. */
  strategy: z.optional(z.enum(PRUNE_STRATEGIES)),
  /** prune: the window size to bring a transcript down to (default half the soft limit). */
  target: z.optional(tokens),
  /** prune: the summary's share of the removed tokens, in % (default 2; kept between 1,000 and 8,000 tokens). */
  summaryShare: z.optional(z.number().check(z.positive(), z.maximum(50))),
  /** prune: the archive, a SQLite file (relative to the config file's folder) or a postgres:// URL. */
  archive: z.optional(z.string().check(z.minLength(1))),
  /** refresh, replay: turns in an orchestrator node between refreshes (default 5). */
  refreshThreshold: z.optional(z.number().check(z.int(), z.positive())),
  /** refresh, replay: the whole refresh turn's token budget (default 2,000). */
  refreshTokens: z.optional(tokens),
  /** prune: who writes the summary (default: gemini when a Gemini key is set, else extractive). */
  summarizer: z.optional(z.enum(SUMMARIZER_NAMES)),
  /** prune: how turns are embedded for relevance (default: gemini when a key is set, else local). */
  embedder: z.optional(z.enum(EMBEDDER_NAMES)),
  /** Gemini model id for summaries (not the agent's model: that is `agentModel`). */
  model: z.optional(z.string().check(z.minLength(1))),
  /** The agent's model, for a transcript that names none (a `devs` transcript): its window sets the limits. */
  agentModel: z.optional(z.string().check(z.minLength(1))),
  /** Gemini model id for embeddings. */
  embeddingModel: z.optional(z.string().check(z.minLength(1))),
  /** Gemini API key (GEMINI_API_KEY and GOOGLE_API_KEY take precedence); keep this file private. */
  geminiApiKey: z.optional(z.string().check(z.minLength(1))),
  /** Gemini API base URL, for a proxy or gateway (DEVS_CTX_GEMINI_BASE_URL takes precedence). */
  geminiBaseUrl: z.optional(z.url()),
  /** Seconds one Gemini request may take. */
  // At most what a timer holds (2^31 − 1 ms): a larger value (1e7) overflowed the request timer (an internal error).
  timeout: z.optional(z.number().check(z.positive(), z.lte(MAX_TIMEOUT_SECONDS))),
  /** When Gemini fails: use the offline providers instead of exiting 5. */
  fallback: z.optional(z.enum(FALLBACK_NAMES)),
  /** Mask secrets before text is sent to Gemini (default true). */
  redact: z.optional(z.boolean()),
  /** hook, init: the agent transcripts to watch, as paths or globs relative to the config file's folder. */
  transcripts: z.optional(z.array(z.string().check(z.minLength(1)))),
});
export type ConfigFile = z.infer<typeof ConfigFileSchema>;

/**
 * The user's own config (`$XDG_CONFIG_HOME/devs-ctx/config.json`, else `~/.config/devs-ctx/config.json`):
 * what only the person running devs-ctx may decide, never a project's `devs-ctx.config.json`, which
 * arrives with a clone or a pull.
 */
export const USER_CONFIG_RELATIVE_PATH = 'devs-ctx/config.json';

const UserConfigSchema = z.strictObject({
  $schema: z.optional(z.string()),
  /** Gemini API base URL: https, or http on this machine (127.0.0.1, ::1, localhost). */
  geminiBaseUrl: z.optional(z.string().check(z.minLength(1))),
  /** Let a project's devs-ctx.config.json send Gemini requests (and the key) to its https geminiBaseUrl. */
  allowProjectGeminiBaseUrl: z.optional(z.boolean()),
  /** Let a project's "transcripts" name files outside its repository (absolute, `..`, symlinks out). */
  allowTranscriptsOutsideRepository: z.optional(z.boolean()),
  /** Let a project's "archive" be a postgres:// URL or a SQLite file outside the project's folder. */
  allowProjectArchive: z.optional(z.boolean()),
});
export type UserConfig = z.infer<typeof UserConfigSchema>;

/** Validates the user's own config; the error names the file, the key and what is allowed. */
export function parseUserConfig(path: string, value: unknown): UserConfig {
  const result = UserConfigSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue && issue.path.length > 0 ? issue.path.join('.') : undefined;
  const what =
    issue?.code === 'unrecognized_keys'
      ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed keys: ${Object.keys(UserConfigSchema.shape).join(', ')}`
      : `${issue?.message ?? 'invalid'} (expected ${key === undefined ? 'a JSON object' : key === 'geminiBaseUrl' ? 'an https URL' : 'true or false'})`;
  throw new UsageError(`${path}: ${key ? `key "${key}" ` : ''}${what}`, `fix ${path}`);
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** Why a URL may not receive the Gemini key, or undefined when it may (https, or http on loopback). */
function baseUrlProblem(url: string, options: { readonly allowLoopbackHttp: boolean }): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'it is not a URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:') {
    if (options.allowLoopbackHttp && isLoopbackHost(parsed.hostname)) return undefined;
    return options.allowLoopbackHttp ? 'plain http is allowed only to this machine (127.0.0.1, ::1, localhost)' : 'it is not https';
  }
  return `it is not an https URL (${parsed.protocol})`;
}

/**
 * [SPEC §7, issue 13] Where Gemini requests (and the key with them) go: the environment, else the
 * user's own config, else a project config's https URL only when the user's own config allows it.
 * A URL from the environment or the user's config may be plain http to this machine (tests, a local
 * proxy); a project's never. Bad user or environment values are errors; a project value that is not
 * allowed is ignored with a warning.
 */
export function resolveGeminiBaseUrl(sources: {
  readonly env?: string;
  readonly user?: { readonly path: string; readonly config: UserConfig };
  readonly project?: { readonly path: string; readonly config: ConfigFile };
}): { readonly baseUrl?: string; readonly ignored?: string } {
  const { env, user, project } = sources;
  if (env !== undefined && env.trim() !== '') {
    const problem = baseUrlProblem(env, { allowLoopbackHttp: true });
    if (problem)
      throw new UsageError(`DEVS_CTX_GEMINI_BASE_URL=${JSON.stringify(env)} cannot be used: ${problem}`, 'e.g. https://generativelanguage.googleapis.com');
    return { baseUrl: env };
  }
  const own = user?.config.geminiBaseUrl;
  if (user && own !== undefined) {
    const problem = baseUrlProblem(own, { allowLoopbackHttp: true });
    if (problem)
      throw new UsageError(`${user.path}: key "geminiBaseUrl" cannot be used: ${problem}`, `fix ${user.path}; e.g. https://generativelanguage.googleapis.com`);
    return { baseUrl: own };
  }
  const projectUrl = project?.config.geminiBaseUrl;
  if (!project || projectUrl === undefined) return {};
  const problem = baseUrlProblem(projectUrl, { allowLoopbackHttp: false });
  const allowed = user?.config.allowProjectGeminiBaseUrl === true;
  if (!problem && allowed) return { baseUrl: projectUrl };
  const why = problem
    ? `${problem}, and a project's config may only name an https URL`
    : `a project's config may redirect your Gemini key only when your own config (${user?.path ?? `~/.config/${USER_CONFIG_RELATIVE_PATH}`}) says "allowProjectGeminiBaseUrl": true`;
  return {
    ignored: `ignoring "geminiBaseUrl" ${JSON.stringify(projectUrl)} in ${project.path}: ${why}; Gemini requests go to the default URL (set DEVS_CTX_GEMINI_BASE_URL to choose one)`,
  };
}

/** What the command line said (only what it said). */
interface SettingFlags {
  readonly window?: number;
  readonly softLimit?: number;
  readonly hardLimit?: number;
  readonly encoding?: EncodingName;
  readonly agentModel?: string;
}

/** The agent's model as the user gave it: `--agent-model` names it for every transcript; config only for one that names none. */
export interface AgentModelSetting {
  readonly id: string;
  /** The flag or config key, for the report. */
  readonly from: string;
  /** A flag wins over the model a transcript names; the config key only fills in when it names none. */
  readonly overrides: boolean;
}

export interface Settings extends PrunerConfig {
  readonly pinnedTypes: readonly TurnType[];
  readonly protectedTailTurns: number;
  readonly encoding: EncodingName;
  /** Where the soft and hard limits came from, for the report. */
  readonly limitSource: string;
  /** The agent's model from `--agent-model` or config `agentModel`, when given. */
  readonly agentModel?: AgentModelSetting;
}

export interface SettingSources {
  readonly flags: SettingFlags;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly file?: { readonly path: string; readonly config: ConfigFile };
}

/** Window → limits: soft 50 %, hard 80 % (a 1M window gives the seeds' 500k / 800k). */
export function limitsFromWindow(window: number): { soft: number; hard: number } {
  return { soft: Math.floor(window * 0.5), hard: Math.floor(window * 0.8) };
}

function envTokens(env: SettingSources['env'], name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  // The same forms as the flags (--soft-limit 500k): 500000, 500_000, 500k, 1M, 1.5m; not 0x10 or 1e6.
  const value = parseTokenAmount(raw);
  if (value === undefined) {
    throw new UsageError(`${name}=${raw} is not a positive number of tokens such as 500000, 500k or 1M`, `for example ${name}=500k`);
  }
  return value;
}

/**
 * [SPEC §6] Precedence: flags, then environment (`DEVS_SOFT_LIMIT`, `DEVS_HARD_LIMIT`,
 * `DEVS_PRUNE_THRESHOLD` as the hard limit's older name), then the config file, then defaults.
 * Within one source an explicit limit beats one derived from `window`.
 */
export function resolveSettings(sources: SettingSources): Settings {
  const { flags, env, file } = sources;
  const fileConfig = file?.config ?? {};
  const flagWindow = flags.window !== undefined ? limitsFromWindow(flags.window) : undefined;
  const fileWindow = fileConfig.window !== undefined ? limitsFromWindow(fileConfig.window) : undefined;
  // Environment values are read lazily: a bad variable only matters when no flag overrides it.
  const hardEnvName = env['DEVS_HARD_LIMIT']?.trim() ? 'DEVS_HARD_LIMIT' : 'DEVS_PRUNE_THRESHOLD';
  type Choice = readonly [() => number | undefined, string];
  const pick = (choices: readonly Choice[], fallback: readonly [number, string]): readonly [number, string] => {
    for (const [value, from] of choices) {
      const v = value();
      if (v !== undefined) return [v, from];
    }
    return fallback;
  };

  const fileName = file?.path ?? CONFIG_FILE_NAME;
  const [soft, softFrom] = pick(
    [
      [() => flags.softLimit, '--soft-limit'],
      [() => flagWindow?.soft, `--window ${flags.window}`],
      [() => envTokens(env, 'DEVS_SOFT_LIMIT'), 'DEVS_SOFT_LIMIT'],
      [() => fileConfig.softLimit, `${fileName} softLimit`],
      [() => fileWindow?.soft, `${fileName} window`],
    ],
    [DEFAULT_SOFT_LIMIT_TOKENS, 'default'],
  );
  const [hard, hardFrom] = pick(
    [
      [() => flags.hardLimit, '--hard-limit'],
      [() => flagWindow?.hard, `--window ${flags.window}`],
      [() => envTokens(env, hardEnvName), hardEnvName],
      [() => fileConfig.hardLimit, `${fileName} hardLimit`],
      [() => fileWindow?.hard, `${fileName} window`],
    ],
    [DEFAULT_HARD_LIMIT_TOKENS, 'default'],
  );
  // One limit given and the other not: sessionLimits checks them once the model's window is known.
  if (soft >= hard && softFrom !== 'default' && hardFrom !== 'default') {
    throw new UsageError(
      `the soft limit (${soft}, from ${softFrom}) must be below the hard limit (${hard}, from ${hardFrom})`,
      'set both limits, or --window N to derive them (soft 50 %, hard 80 % of N)',
    );
  }
  return {
    softLimitTokens: soft,
    hardLimitTokens: hard,
    pinnedPrefixTurns: fileConfig.pinnedPrefixTurns ?? DEFAULT_PINNED_PREFIX_TURNS,
    pinnedTypes: fileConfig.pinnedTypes ?? PINNED_TURN_TYPES,
    protectedTailTurns: fileConfig.protectedTailTurns ?? DEFAULT_PROTECTED_TAIL_TURNS,
    encoding: flags.encoding ?? fileConfig.encoding ?? 'o200k_base',
    limitSource: softFrom === hardFrom ? softFrom : `soft from ${softFrom}, hard from ${hardFrom}`,
    ...agentModelSetting(flags.agentModel, fileConfig.agentModel, fileName),
  };
}

/** `--agent-model` beats config `agentModel`; neither: no key at all. */
function agentModelSetting(flag: string | undefined, config: string | undefined, fileName: string): { agentModel?: AgentModelSetting } {
  if (flag !== undefined) return { agentModel: { id: flag, from: '--agent-model', overrides: true } };
  if (config !== undefined) return { agentModel: { id: config, from: `${fileName} agentModel`, overrides: false } };
  return {};
}

/** Validates a parsed config file; the error names the file, the key and what is allowed. */
export function parseConfigFile(path: string, value: unknown): ConfigFile {
  const result = ConfigFileSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue && issue.path.length > 0 ? issue.path.join('.') : undefined;
  let what = issue?.message ?? 'invalid';
  if (issue?.code === 'unrecognized_keys') {
    what = `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed keys: ${Object.keys(ConfigFileSchema.shape).join(', ')}`;
  } else if (issue?.code === 'invalid_value' && 'values' in issue) {
    what = `must be one of ${issue.values.map(String).join(', ')}`;
  } else if (issue?.code === 'too_small' || issue?.code === 'too_big' || issue?.code === 'invalid_type') {
    what = `${issue.message} (expected ${describeExpected(key)})`;
  }
  throw new UsageError(`${path}: ${key ? `key "${key}" ` : ''}${what}`, `fix ${path} or pass --config to use another file`);
}

function describeExpected(key: string | undefined): string {
  if (!key) return 'a JSON object';
  if (key.startsWith('pinnedTypes')) return `an array of ${TurnTypeSchema.options.join('|')}`;
  if (key === 'encoding') return ENCODING_NAMES.join(' or ');
  if (key === 'pinnedPrefixTurns' || key === 'protectedTailTurns') return 'a whole number ≥ 0';
  if (key === 'summaryShare') return 'a percentage of the removed tokens, more than 0 and at most 50 (e.g. 3)';
  if (key.startsWith('transcripts')) return 'an array of paths or globs, relative to the config file';
  if (key === 'archive') return 'a path to the SQLite archive, relative to the config file';
  if (key === 'timeout') return `a number of seconds above 0, at most ${MAX_TIMEOUT_SECONDS}`;
  if (key === 'geminiApiKey') return 'the Gemini API key, a non-empty string';
  if (key === 'geminiBaseUrl') return 'an https URL';
  if (key === 'model' || key === 'embeddingModel') return 'a Gemini model id such as gemini-3.5-flash';
  if (key === 'agentModel') return "the agent's model id, such as claude-sonnet-4-5-20250929";
  if (key === 'redact') return 'true or false';
  if (key === '$schema') return 'a string';
  if (key === 'refreshThreshold') return 'a whole number of turns above 0';
  return 'a positive whole number of tokens';
}
