import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import './zod-english.js';
import { BLOCK_LEVELS } from './names.js';
import type { GitHookName } from './names.js';

/**
 * The git hook `devs-ctx hook install` writes: its settings, the POSIX `sh` script itself, and the
 * marker that tells a devs-ctx hook from anyone else's. Pure: the files are written by src/io/git-hooks.ts.
 */

export const DEFAULT_GIT_HOOK: GitHookName = 'pre-commit';

/** Where the hook that was in place before devs-ctx is kept (relative to the hooks folder). */
const PREVIOUS_HOOKS_DIR = '.devs-ctx-previous';

/**
 * The hook that was in place before devs-ctx is moved aside to this path and called first. It keeps
 * its own file name (in a folder of its own), because hook dispatchers tell which hook they are run
 * as from `basename "$0"`.
 */
export function previousHookName(hook: string): string {
  return `${PREVIOUS_HOOKS_DIR}/${hook}`;
}

/** The command the hook falls back to when the devs-ctx it was written by is gone. */
export const NPX_FALLBACK = 'npx --no-install devs-ctx';

const META_PREFIX = '# devs-ctx-hook: ';
const META_PLACEHOLDER = `${META_PREFIX}…`;

/** The settings a hook was written with, kept in the hook itself (one JSON comment line). */
const HookMetaSchema = z.object({
  schemaVersion: z.literal(1),
  hook: z.string(),
  devsCtxVersion: z.string(),
  /** Exit 1 when a transcript was at this urgency (or above) before the hook pruned it. */
  blockOn: z.enum(BLOCK_LEVELS),
  /** Run `refresh --in-place` on transcripts where a refresh is due. */
  refresh: z.boolean(),
  /** The config file (relative to the work tree's top, or absolute); null: the nearest one at run time. */
  config: z.nullable(z.string()),
  /**
   * Set when `hook install --config` named it: used as named, the user's own. Otherwise it is the
   * project's (found where it is, and changed by any pull), read as a config found, never as one the
   * user named: it cannot send the archive outside the project, for one.
   */
  configNamed: z.optional(z.literal(true)),
  /** Paths or globs from `--transcript` (relative to the work tree's top, or absolute); null: the config's `transcripts`. */
  transcripts: z.nullable(z.array(z.string())),
  /** The hook moved aside at install (a file name in the hooks folder), or null when there was none. */
  previous: z.nullable(z.string()),
  /** How the hook runs devs-ctx: this node and this bin, else `npx --no-install devs-ctx`. Null: npx only. */
  runner: z.object({ node: z.nullable(z.string()), bin: z.nullable(z.string()) }),
  /** sha256 of the script without this line: a hook edited by hand is not removed silently. */
  sha256: z.string(),
});
export type HookMeta = z.infer<typeof HookMetaSchema>;
export type HookSettings = Omit<HookMeta, 'sha256'>;

/** A POSIX `sh` single-quoted word: safe for any path. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A path as a person pastes it into `sh` as a command's argument: as it is when it holds nothing the
 * shell reads (`a/b-c.jsonl`), else quoted; one that starts with `-` gets `./` (else it is an option).
 */
export function shellWord(value: string): string {
  const path = value.startsWith('-') ? `./${value}` : value;
  return /^[\w@%+=:,./-]+$/.test(path) ? path : shellQuote(path);
}

function withoutMetaLine(script: string): string {
  return script
    .split('\n')
    .filter((line) => !line.startsWith(META_PREFIX))
    .join('\n');
}

function digest(script: string): string {
  return createHash('sha256').update(withoutMetaLine(script)).digest('hex');
}

/**
 * The hook's text. The decisions live in the script, in plain sight, and call the public commands
 * (`analyze`, `prune --in-place`, `refresh --check` / `--in-place`), so a user can read what runs
 * before every commit. Written for POSIX sh: no arrays, no `local`, no `[[`.
 */
export function renderHookScript(settings: HookSettings): string {
  const { hook } = settings;
  const lines: string[] = [];
  const add = (...more: string[]): void => void lines.push(...more);
  add(
    '#!/bin/sh',
    META_PLACEHOLDER,
    '#',
    `# ${hook} hook written by \`devs-ctx hook install\` (devs-ctx ${settings.devsCtxVersion}); run it again to change`,
    `# this. Installed in a hooks folder, \`devs-ctx hook uninstall --hook ${hook}\` removes it and puts back the`,
    '# hook that was there before, byte for byte. `devs-ctx hook status` says what it covers.',
    '#',
    '# It runs `devs-ctx analyze` on the transcripts it covers, prunes in place those at the soft or hard',
    '# limit, refreshes those where a refresh is due, and prints one line. It does not block the',
    `# ${hook} unless --block-on was given: then it exits 1 when a transcript had reached that urgency`,
    '# before this hook pruned it (the prune still runs, so the next attempt goes through).',
    '',
  );
  if (settings.previous !== null) {
    add(
      '# The hook that was here before devs-ctx runs first, with the same arguments and input, when it is',
      "# executable (as git would run it). If it fails, that is this hook's answer and devs-ctx does nothing.",
      `previous="$(dirname -- "$0")"/${shellQuote(settings.previous)}`,
      'if [ -x "$previous" ]; then',
      '  "$previous" "$@" || exit $?',
      'fi',
      '',
    );
  }
  add(
    'say() { printf \'%s\\n\' "devs-ctx: $1" >&2; }',
    `hook=${shellQuote(hook)}`,
    `block_on=${shellQuote(settings.blockOn)}`,
    `refresh=${shellQuote(settings.refresh ? 'yes' : 'no')}`,
    `config=${shellQuote(settings.config ?? '')}`,
    `node=${shellQuote(settings.runner.node ?? '')}`,
    `bin=${shellQuote(settings.runner.bin ?? '')}`,
    '',
    '# devs-ctx as installed when this hook was written (that node, else node on PATH), else the',
    "# project's own copy through npx (never a download). Missing altogether: say so, do not block.",
    'if [ -n "$bin" ] && [ -f "$bin" ] && [ -x "$node" ]; then',
    '  run() { "$node" "$bin" "$@" </dev/null; }',
    'elif [ -n "$bin" ] && [ -f "$bin" ] && command -v node >/dev/null 2>&1; then',
    '  run() { node "$bin" "$@" </dev/null; }',
    `elif command -v npx >/dev/null 2>&1 && ${NPX_FALLBACK} --version >/dev/null 2>&1 </dev/null; then`,
    `  run() { ${NPX_FALLBACK} "$@" </dev/null; }`,
    'else',
    `  say "not found (\${bin:-no installed copy}, ${NPX_FALLBACK}); $hook hook skipped"`,
    '  exit 0',
    'fi',
    '',
    '# The rest happens in one devs-ctx process (hook run): it lists the transcripts this hook covers',
    '# (its --transcript globs, else the config file\'s "transcripts"), skips those unchanged since its',
    '# last run, analyses the others, prunes in place those at the soft or hard limit, refreshes those due',
    '# that have a TAS or PRD to refresh with, stages a pruned transcript git tracks (when it had no',
    '# unstaged changes; otherwise it says so), and prints one line. It exits 10 or 11 (the urgency reached)',
    '# only for --block-on: this hook then exits 1. Any other failure (a config that is not valid, a',
    '# devs-ctx that does not start) is said, and the commit goes on; an interrupt (130) stops it.',
    'run hook run --hook-file "$0"',
    'status=$?',
    'case "$status" in',
    '  0) exit 0 ;;',
    '  10|11) exit 1 ;;',
    '  130) exit 130 ;;',
    'esac',
    'say "failed (exit $status); the $hook goes on"',
    'exit 0',
    '',
  );
  const body = lines.join('\n');
  const meta: HookMeta = { ...settings, sha256: digest(body) };
  return body.replace(META_PLACEHOLDER, `${META_PREFIX}${JSON.stringify(meta)}`);
}

export type ParsedHook = { readonly kind: 'devs-ctx'; readonly meta: HookMeta; readonly modified: boolean } | { readonly kind: 'foreign' };

/** Tells a hook devs-ctx wrote (and whether it was edited since) from anyone else's. */
export function parseHookScript(text: string): ParsedHook {
  const line = text.split('\n', 5).find((l) => l.startsWith(META_PREFIX));
  if (line === undefined) return { kind: 'foreign' };
  let value: unknown;
  try {
    value = JSON.parse(line.slice(META_PREFIX.length));
  } catch {
    return { kind: 'foreign' };
  }
  const meta = HookMetaSchema.safeParse(value);
  if (!meta.success) return { kind: 'foreign' };
  return { kind: 'devs-ctx', meta: meta.data, modified: digest(text) !== meta.data.sha256 };
}
