import { defineCommand } from '../command.js';
import type { CommandDefinition } from '../command.js';
import { installFlags, runFlags, statusFlags, uninstallFlags } from '../flags/hook.js';

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

export const hookCommand: CommandDefinition = {
  name: 'hook',
  description: 'install, remove or inspect a git hook that prunes and refreshes the agent transcripts on every commit',
  examples: EXAMPLES,
  subcommands: [
    defineCommand({
      name: 'install',
      description: 'write the hook (default pre-commit), keeping any hook already there and running it first',
      options: installFlags,
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
      options: uninstallFlags,
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
      options: statusFlags,
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
      options: runFlags,
      run: async ({ options, ctx, main }) => (await import('../commands/hook-run.js')).runHookRun(options, ctx, main),
    }),
  ],
};
