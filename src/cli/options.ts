import { Option } from 'commander';
import type * as z from 'zod/mini';
import type { FlagZod } from './flag-zod.js';
import { AGENT_NAMES, EMBEDDER_NAMES, ENCODING_NAMES, FALLBACK_NAMES, PRUNE_STRATEGIES, SUMMARIZER_NAMES } from '../core/names.js';
import { FORMAT_NAMES } from '../core/transcript.js';
import { parseTokenAmount } from '../core/token-amount.js';

/**
 * Every flag is declared once, here or in its command's definition (src/cli/registry/): one `Flag`
 * holds commander's `Option` (what --help shows and commander parses) and the zod schema that
 * validates and converts the value. A command's options type is inferred from its flags.
 *
 * The schema is built from `z` (the part of zod/mini in src/cli/flag-zod.ts) when the command
 * runs (src/cli/parse-options.ts): --help and --version never load zod.
 */

/** What a flag's schema is built from: zod/mini's functions that flags use. */
export type Zod = FlagZod;

/** The option's name in commander's parsed options: `--dry-run` → `dryRun`, `--no-cache` → `cache`. */
type LongName<F extends string> = F extends `${string}--${infer N} <${string}`
  ? N
  : F extends `${string}--${infer N} [${string}`
    ? N
    : F extends `${string}--${infer N}`
      ? N
      : never;
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
type FlagKey<F extends string> = LongName<F> extends `no-${infer R}` ? CamelCase<R> : CamelCase<LongName<F>>;

export interface Flag<K extends string = string, S extends z.ZodMiniType = z.ZodMiniType> {
  /** The key commander stores the value under (its `attributeName()`). */
  readonly key: K;
  readonly option: Option;
  readonly schema: (z: Zod) => S;
}

export type Shape<T extends readonly Flag[]> = { [F in T[number] as F['key']]: ReturnType<F['schema']> };
/** The parsed, converted options of a command with these flags. */
export type OptionsOf<T extends readonly Flag[]> = z.output<z.ZodMiniObject<Shape<T>>>;

/** One flag: commander's option from `flags` and `description` (adjusted by `configure`), validated by `schema`. */
export function flag<const F extends string, S extends z.ZodMiniType>(
  flags: F,
  description: string,
  schema: (z: Zod) => S,
  configure: (option: Option) => Option = (option) => option,
): Flag<FlagKey<F>, S> {
  const option = configure(new Option(flags, description));
  return { key: option.attributeName() as FlagKey<F>, option, schema };
}

/** A flag without a value (`--json`), or the negation of one (`--no-cache`). */
export const boolean = <const F extends string>(flags: F, description: string) => flag(flags, description, (z) => z.optional(z.boolean()));

/** A flag that takes any text. */
export const text = <const F extends string>(flags: F, description: string) => flag(flags, description, (z) => z.optional(z.string()));

/** A flag that takes one of `values`: commander lists and checks them, zod types them. */
export const choice = <const F extends string, const V extends readonly [string, ...string[]]>(flags: F, description: string, values: V) =>
  flag(
    flags,
    description,
    (z) => z.optional(z.enum(values)),
    (option) => option.choices(values),
  );

/** The long flag of `flags`, for messages: `-o, --output <file>` → `--output`. */
function longFlag(flags: string): string {
  return /--[\w-]+/.exec(flags)?.[0] ?? flags;
}

/** A `--window` below this, written without a unit, is taken for a missing `k`. */
const MIN_WINDOW_TOKENS = 1_000;

/** A number of tokens as a user writes it (200000, 200k, 1M); `--window 200` is taken for a missing k. */
function tokenAmount(z: Zod, name: string) {
  return z.pipe(
    z.optional(z.string()),
    z.transform((raw: string | undefined, ctx) => {
      if (raw === undefined) return undefined;
      const value = parseTokenAmount(raw);
      if (value === undefined) {
        ctx.issues.push({ code: 'custom', message: `${name} ${raw}: expected a positive number of tokens such as 200000, 200k or 1M`, input: raw });
        return z.NEVER;
      }
      // No model has a window of a few hundred tokens: `--window 200` means 200k.
      if (name === '--window' && /^\s*\d+\s*$/.test(raw) && value < MIN_WINDOW_TOKENS) {
        ctx.issues.push({
          code: 'custom',
          message: `${name} ${raw}: a window of ${value} tokens is too small for any model; did you mean ${raw.trim()}k?`,
          input: raw,
        });
        return z.NEVER;
      }
      return value;
    }),
  );
}

/** A flag that takes a number of tokens. */
export const tokens = <const F extends string>(flags: F, description: string) => flag(flags, description, (z) => tokenAmount(z, longFlag(flags)));

/** A whole number from `min` to `max`, named in the message as `what`. */
export function wholeNumber(name: string, what: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (z: Zod) =>
    z.pipe(
      z.optional(z.string()),
      z.transform((raw: string | undefined, ctx) => {
        if (raw === undefined) return undefined;
        const value = Number(raw);
        if (!Number.isInteger(value) || value < min || value > max) {
          ctx.issues.push({ code: 'custom', message: `${name} ${raw}: expected ${what}`, input: raw });
          return z.NEVER;
        }
        return value;
      }),
    );
}

// The flags several commands share. Where commands describe a flag differently, the description is a parameter.

export const json = (description: string) => boolean('--json', description);
export const force = (description: string) => boolean('--force', description);
export const output = (description: string) => text('-o, --output <file>', description);
export const inPlace = (description: string) => boolean('--in-place', description);
export const config = (description = 'use this config file instead of the nearest devs-ctx.config.json') => text('--config <path>', description);
export const format = () => choice('--format <name>', 'force the transcript format instead of detecting it', FORMAT_NAMES);
export const encoding = () => choice('--encoding <name>', 'tokenizer encoding (default o200k_base)', ENCODING_NAMES);
export const strict = () => boolean('--strict', 'make any malformed line fatal (exit 4)');
export const noCache = (caches: string) => boolean('--no-cache', `do not read or write ${caches}`);
export const strategy = (description: string) => choice('--strategy <name>', description, PRUNE_STRATEGIES);
export const goal = (description: string) => text('--goal <text>', description);
export const target = (description: string) => tokens('--target <tokens>', description);
export const summarizer = (description: string) => choice('--summarizer <name>', description, SUMMARIZER_NAMES);
export const embedder = (description: string) => choice('--embedder <name>', description, EMBEDDER_NAMES);
export const fallback = (description: string) => choice('--fallback <name>', description, FALLBACK_NAMES);
export const noRedact = (description: string) => boolean('--no-redact', description);
export const agent = (description: string) => choice('--agent <name>', description, AGENT_NAMES);
export const tas = (description = "read the TAS from this file (default: the transcript's tas turns)") => text('--tas <file>', description);
export const prd = (description = "read the PRD from this file (default: the transcript's prd turns)") => text('--prd <file>', description);
export const refreshTokens = () => tokens('--refresh-tokens <tokens>', 'condense the TAS and PRD to fit this many tokens in all (default 2000)');
export const threshold = () =>
  flag('--threshold <turns>', 'turns in a node between refreshes (default 5)', wholeNumber('--threshold', 'a whole number of turns, at least 1', 1));
export const model = (description: string) =>
  flag('--model <id>', description, (z) => z.optional(z.string().check(z.trim(), z.minLength(1, '--model needs a model id'))));
export const timeout = (description: string) =>
  flag('--timeout <seconds>', description, (z) =>
    z.optional(
      z.coerce
        .number({ error: '--timeout takes a number of seconds' })
        .check(z.positive('--timeout must be more than 0 seconds'), z.lte(3600, '--timeout is at most 3600 seconds')),
    ),
  );
export const archiveLocation = (description: string) => text('--archive <path|url>', description);
export const yes = (description: string) => boolean('-y, --yes', description);

/** The agent's model (not the Gemini summary model of --model): its window sets the limits. */
const agentModel = () =>
  flag(
    '--agent-model <id>',
    "the agent's model, e.g. claude-sonnet-4-5-20250929: its window (from the model catalog) sets the limits; wins over the model the transcript names (config: agentModel, used only when the transcript names none)",
    (z) => z.optional(z.string().check(z.trim(), z.minLength(1, '--agent-model needs a model id'))),
  );

/** The limits every command that reads a transcript takes. */
const limits = () =>
  [
    agentModel(),
    tokens('--window <tokens>', "set the limits from a model's context window: soft 50%, hard 80% (e.g. 200k; default: the session's model's window)"),
    tokens('--soft-limit <tokens>', "soft limit: prune recommended from here (default 50% of the model's window, else 500k)"),
    tokens('--hard-limit <tokens>', "hard limit: prune required from here (default 80% of the model's window, else 800k)"),
  ] as const;

/** The options every command that reads a transcript shares: format, encoding, limits, config, strictness, caches. */
export const readingFlags = (caches: string) => [format(), encoding(), ...limits(), config(), strict(), noCache(caches)] as const;

/** The limits and counting options as `settingsFor` reads them. */
export type LimitOptions = Partial<
  Pick<OptionsOf<ReturnType<typeof readingFlags>>, 'window' | 'softLimit' | 'hardLimit' | 'agentModel' | 'encoding' | 'config'>
>;
