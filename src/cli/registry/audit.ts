import { defineCommand } from '../command.js';
import { auditFlags } from '../flags/audit.js';

export const auditCommand = defineCommand({
  name: 'audit',
  description:
    "what each of the agent's own compactions kept and lost: tokens before and after, identifiers of the compacted turns its summary kept or dropped, and the recall query for each lost one",
  arguments: [{ name: '[file]', description: 'a Claude Code, Codex or Gemini CLI session file; - reads standard input' }],
  options: auditFlags,
  examples: `
Identifiers are file paths, error messages, commands, the user's instructions and code names of
the compacted turns; one counts as kept when the summary names it (errors and instructions: most of
their words).

Examples:
  $ devs-ctx audit ~/.claude/projects/-home-me-app/70d782f7-….jsonl
  $ devs-ctx audit rollout.jsonl --json | jq '.totals.keptShare'

Exit codes: 0 (also when the session has no compaction), 2 usage error, 3 input unreadable,
4 invalid transcript.`,
  run: async ({ options, args, ctx }) => (await import('../commands/audit.js')).runAudit(args[0] as string | undefined, options, ctx),
});
