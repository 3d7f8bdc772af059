import { BLOCK_LEVELS, isGitHookName, STANDARD_GIT_HOOKS } from '../../core/names.js';
import type { AgentName } from '../../core/names.js';
import { agent, boolean, choice, config, flag, force, json, text } from '../options.js';
import type { OptionsOf, Zod } from '../options.js';

const hookName = (z: Zod) =>
  z.pipe(
    z.optional(z.string()),
    z.transform((raw: string | undefined, ctx) => {
      if (raw === undefined) return undefined;
      if (!isGitHookName(raw)) {
        ctx.issues.push({ code: 'custom', message: `--hook ${raw}: not a git hook; one of ${STANDARD_GIT_HOOKS.join(', ')}`, input: raw });
        return z.NEVER;
      }
      return raw;
    }),
  );

const hook = (description: string) => flag('--hook <name>', description, hookName);
const everyHook = () => hook('only this git hook (default: every hook devs-ctx installed here)');
const user = (description = "with --agent: the user's settings instead of the project's") => boolean('--user', description);
const hookJson = () => json('print one JSON report on stdout');

export const installFlags = [
  hook('which git hook (default pre-commit; any standard hook)'),
  choice('--block-on <level>', 'exit 1 when a transcript had reached this limit before its prune (default: never block)', BLOCK_LEVELS),
  flag(
    '--transcript <path>',
    'a transcript path or (quoted) glob to watch, relative to here; repeatable (default: the config file\'s "transcripts")',
    (z) => z.optional(z.array(z.string().check(z.minLength(1)))),
    (option) => option.argParser((value: string, previous: string[] = []) => [...previous, value]),
  ),
  boolean('--no-refresh', 'do not refresh transcripts where a refresh is due (prune only)'),
  config(),
  force('replace a devs-ctx hook that was edited by hand'),
  boolean('--stdout', 'print the hook script (running npx --no-install devs-ctx) instead of installing it, for husky or lefthook'),
  hookJson(),
  agent("install this agent's compaction hooks and the devs-ctx MCP server into its own settings instead of a git hook"),
  user("with --agent: the user's settings (~/.claude, ~/.codex, ~/.gemini) instead of the project's"),
] as const;
export type HookInstallOptions = OptionsOf<typeof installFlags>;

export const uninstallFlags = [
  everyHook(),
  force('remove a devs-ctx hook even if it was edited by hand'),
  hookJson(),
  agent("remove devs-ctx's hooks and MCP server from this agent's settings (files devs-ctx changed come back byte for byte)"),
  user(),
] as const;
export type HookUninstallOptions = OptionsOf<typeof uninstallFlags>;

export const statusFlags = [
  everyHook(),
  config(),
  boolean('--print-transcripts', 'print only the transcript files covered, one absolute path a line (a name holding a line break is left out, with a warning)'),
  boolean('--null', 'with --print-transcripts: end each path with a NUL byte instead (for xargs -0)'),
  text('--hook-file <path>', 'with --print-transcripts: read the settings from this hook script (the hook passes "$0")'),
  json('print one JSON document on stdout'),
  agent("show which of devs-ctx's hooks and MCP server this agent's settings hold"),
  user(),
] as const;
export type HookStatusOptions = OptionsOf<typeof statusFlags>;

export const runFlags = [
  flag(
    '--hook-file <path>',
    'the hook script whose settings to use (the hook passes "$0")',
    (z) => z.string().check(z.minLength(1, '--hook-file: the hook script to run (the hook passes "$0")')),
    (option) => option.makeOptionMandatory(),
  ),
] as const;
export type HookRunOptions = OptionsOf<typeof runFlags>;

/** The options of `hook install|uninstall|status --agent X`. */
export interface AgentOptions {
  readonly agent: AgentName;
  readonly user?: boolean | undefined;
  readonly json?: boolean | undefined;
}
