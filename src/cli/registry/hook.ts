import { BLOCK_LEVELS, isGitHookName, STANDARD_GIT_HOOKS } from '../../core/names.js';
import type { AgentName } from '../../io/agent-sessions.js';
import { defineCommand } from '../command.js';
import type { CommandDefinition } from '../command.js';
import { agent, boolean, choice, config, flag, force, json, text } from '../options.js';
import type { OptionsOf, Zod } from '../options.js';

const EXAMPLES = `
Examples:
  $ devs-ctx hook install                                        # pre-commit; transcripts from devs-ctx.config.json
  $ devs-ctx hook install --hook pre-push --block-on hard --transcript 'sessions/*.jsonl'
  $ devs-ctx hook status --json | jq '.hooks[].transcripts'

The hook runs the hook that was there before (kept as .devs-ctx-previous/<hook>), then analyze;
it prunes in place the transcripts at the soft or hard limit, refreshes those due, and prints one
line. It blocks only with --block-on: exit 1 when a transcript had reached that limit before its
prune. uninstall puts the previous hook back, byte for byte.

With --agent claude-code|codex|gemini it installs into the agent instead: before each compaction
its window is archived and indexed, right after it the agent gets its pinned documents and lookup
hints back, and the devs-ctx MCP server is registered. Project settings by default, --user for yours:
  $ devs-ctx hook install --agent claude-code        # .claude/settings.json and .mcp.json
  $ devs-ctx hook install --agent codex --user       # ~/.codex/hooks.json and ~/.codex/config.toml
  $ devs-ctx hook status --agent gemini              # .gemini/settings.json
  $ devs-ctx hook uninstall --agent codex --user     # the files as they were, byte for byte

Exit codes: 0, 2 usage error (unknown hook, no transcripts configured, a hook edited by hand
without --force, an agent settings file that is not valid JSON), 3 not a git repository (or git missing).`;

const hookName = (z: Zod) =>
  z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined) return undefined;
    if (!isGitHookName(raw)) {
      ctx.addIssue({ code: 'custom', message: `--hook ${raw}: not a git hook; one of ${STANDARD_GIT_HOOKS.join(', ')}` });
      return z.NEVER;
    }
    return raw;
  });

const hook = (description: string) => flag('--hook <name>', description, hookName);
const everyHook = () => hook('only this git hook (default: every hook devs-ctx installed here)');
const user = (description = "with --agent: the user's settings instead of the project's") => boolean('--user', description);
const hookJson = () => json('print one JSON report on stdout');

const installOptions = [
  hook('which git hook (default pre-commit; any standard hook)'),
  choice('--block-on <level>', 'exit 1 when a transcript had reached this limit before its prune (default: never block)', BLOCK_LEVELS),
  flag(
    '--transcript <path>',
    'a transcript path or (quoted) glob to watch, relative to here; repeatable (default: the config file\'s "transcripts")',
    (z) => z.array(z.string().min(1)).optional(),
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
export type HookInstallOptions = OptionsOf<typeof installOptions>;

const uninstallOptions = [
  everyHook(),
  force('remove a devs-ctx hook even if it was edited by hand'),
  hookJson(),
  agent("remove devs-ctx's hooks and MCP server from this agent's settings (files devs-ctx changed come back byte for byte)"),
  user(),
] as const;
export type HookUninstallOptions = OptionsOf<typeof uninstallOptions>;

const statusOptions = [
  everyHook(),
  config(),
  boolean('--print-transcripts', 'print only the transcript files covered, one absolute path a line (a name holding a line break is left out, with a warning)'),
  boolean('--null', 'with --print-transcripts: end each path with a NUL byte instead (for xargs -0)'),
  text('--hook-file <path>', 'with --print-transcripts: read the settings from this hook script (the hook passes "$0")'),
  json('print one JSON document on stdout'),
  agent("show which of devs-ctx's hooks and MCP server this agent's settings hold"),
  user(),
] as const;
export type HookStatusOptions = OptionsOf<typeof statusOptions>;

const runOptions = [
  flag('--hook-file <path>', 'the hook script whose settings to use (the hook passes "$0")', (z) => z.string().min(1, '--hook-file: the hook script to run (the hook passes "$0")'), (option) =>
    option.makeOptionMandatory(),
  ),
] as const;
export type HookRunOptions = OptionsOf<typeof runOptions>;

/** The options of `hook install|uninstall|status --agent X`. */
export interface AgentOptions {
  readonly agent: AgentName;
  readonly user?: boolean | undefined;
  readonly json?: boolean | undefined;
}

export const hookCommand: CommandDefinition = {
  name: 'hook',
  description: 'install, remove or inspect a git hook that prunes and refreshes the agent transcripts on every commit',
  examples: EXAMPLES,
  subcommands: [
    defineCommand({
      name: 'install',
      description: 'write the hook (default pre-commit), keeping any hook already there and running it first',
      options: installOptions,
      examples: EXAMPLES,
      run: async ({ options, ctx }) => {
        const { agent } = options;
        if (agent === undefined) return (await import('../commands/hook.js')).runHookInstall(options, ctx);
        const [{ runAgentInstall }, { packageInfo }] = await Promise.all([import('../commands/agent-install.js'), import('../commands/hook.js')]);
        return runAgentInstall({ ...options, agent }, packageInfo().bin, ctx);
      },
    }),
    defineCommand({
      name: 'uninstall',
      description: 'remove the devs-ctx hook(s) and put back the hook that was there before, byte for byte',
      options: uninstallOptions,
      examples: EXAMPLES,
      run: async ({ options, ctx }) => {
        const { agent } = options;
        if (agent === undefined) return (await import('../commands/hook.js')).runHookUninstall(options, ctx);
        const [{ runAgentUninstall }, { packageInfo }] = await Promise.all([import('../commands/agent-install.js'), import('../commands/hook.js')]);
        return runAgentUninstall({ ...options, agent }, packageInfo().bin, ctx);
      },
    }),
    defineCommand({
      name: 'status',
      description: 'say whether the hook is installed, where, for which git hook, and which transcripts it covers',
      options: statusOptions,
      examples: EXAMPLES,
      run: async ({ options, ctx }) => {
        const { agent } = options;
        if (agent === undefined) return (await import('../commands/hook.js')).runHookStatus(options, ctx);
        return (await import('../commands/agent-install.js')).runAgentStatus({ ...options, agent }, ctx);
      },
    }),
    defineCommand({
      name: 'run',
      description: 'what the git hook runs: prune and refresh the transcripts it covers that changed since its last run (one process)',
      options: runOptions,
      run: async ({ options, ctx }) => (await import('../commands/hook-run.js')).runHookRun(options, ctx),
    }),
  ],
};
