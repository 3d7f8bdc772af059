import type { CommandDefinition } from '../command.js';
import { agentHookCommand } from './agent-hook.js';
import { analyzeCommand } from './analyze.js';
import { archiveCommand } from './archive.js';
import { auditCommand } from './audit.js';
import { hookCommand } from './hook.js';
import { initCommand } from './init.js';
import { mcpCommand } from './mcp.js';
import { pruneCommand } from './prune.js';
import { recallCommand } from './recall.js';
import { refreshCommand } from './refresh.js';
import { replayCommand } from './replay.js';
import { restoreCommand } from './restore.js';

/** The program itself: what `devs-ctx --help` says around the list of commands. */
export const PROGRAM = {
  name: 'devs-ctx',
  description: "Keep a coding agent's context window healthy: count, classify, prune and refresh transcripts.",
  examples: `
Examples:
  $ devs-ctx analyze session.jsonl
  $ devs-ctx analyze session.jsonl --json | jq .urgency
  $ devs-ctx prune session.jsonl --in-place
  $ devs-ctx refresh session.jsonl --check || devs-ctx refresh session.jsonl --in-place
  $ devs-ctx replay session.jsonl --window 200k

Run "devs-ctx <command> --help" for a command's options and exit codes.`,
} as const;

/**
 * Every command, in the order `devs-ctx --help` lists them. A definition is light (its flags and
 * help text); the command's own module is imported by its `run`, only when it runs.
 */
export const COMMANDS: readonly CommandDefinition[] = [
  analyzeCommand,
  pruneCommand,
  restoreCommand,
  recallCommand,
  archiveCommand,
  refreshCommand,
  replayCommand,
  auditCommand,
  mcpCommand,
  hookCommand,
  agentHookCommand,
  initCommand,
];
