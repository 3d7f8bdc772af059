/**
 * The closed sets of names that flags, the config file and the library share, each declared once.
 * Imports nothing: the CLI's definitions (what --help shows) load it without loading zod or a command.
 */

/** The tokenizer encodings devs-ctx counts with. */
export const ENCODING_NAMES = ['o200k_base', 'cl100k_base'] as const;

/** Which turns a prune removes first: the least relevant to the goal, or the oldest. */
export const PRUNE_STRATEGIES = ['relevance', 'recency'] as const;

/** The coding agents whose sessions, hooks and settings devs-ctx knows. */
export const AGENT_NAMES = ['claude-code', 'codex', 'gemini'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** Who writes a prune's summary (and condenses a refresh's TAS/PRD): offline, or Gemini. */
export const SUMMARIZER_NAMES = ['extractive', 'gemini'] as const;

/** How turns are embedded to rank them by relevance: offline (BM25), or Gemini. */
export const EMBEDDER_NAMES = ['local', 'gemini'] as const;

/** What stands in when Gemini fails. */
export const FALLBACK_NAMES = ['extractive'] as const;

/** Every hook githooks(5) documents; `--hook` takes any of them. */
export const STANDARD_GIT_HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
  'post-index-change',
] as const;
export type GitHookName = (typeof STANDARD_GIT_HOOKS)[number];

export function isGitHookName(name: string): name is GitHookName {
  return (STANDARD_GIT_HOOKS as readonly string[]).includes(name);
}

export const BLOCK_LEVELS = ['none', 'soft', 'hard'] as const;
