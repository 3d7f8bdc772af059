import { defineCommand } from '../command.js';
import { analyzeFlags } from '../flags/analyze.js';

export const analyzeCommand = defineCommand({
  name: 'analyze',
  description: 'count tokens, classify pruning urgency, and show what a prune would remove',
  arguments: [
    {
      name: '[paths...]',
      description: "transcript files, directories or quoted globs ('~/.claude/projects/*/*.jsonl'); - (or nothing, when piped) reads standard input",
    },
  ],
  options: analyzeFlags,
  examples: `
Examples:
  $ devs-ctx analyze session.jsonl
  $ devs-ctx analyze ~/.claude/projects --since 7d --sort urgency
  $ devs-ctx analyze '~/.codex/sessions/**/*.jsonl' --ndjson | jq -c 'select(.urgency != "none")'
  $ devs-ctx analyze session.jsonl --json | jq '.urgency, .context'
  $ cat rollout.jsonl | devs-ctx analyze - --format codex

The size is the one the model sees: for a transcript that records its API usage (Claude Code,
Codex, Gemini CLI) the estimate is calibrated on those records (system prompt, tools, the model's
tokenizer); --basis estimate uses the plain estimate. Without --window or limits, the limits are
soft 50 % / hard 80 % of the window of the session's model (else 500k / 800k).

Exit codes (by that size): 0 below the soft limit, 10 soft limit reached, 11 hard limit reached,
2 usage error, 3 input unreadable, 4 invalid transcript.`,
  run: async ({ options, args, ctx }) => (await import('../commands/analyze.js')).runAnalyze(args[0] as string[], options, ctx),
});
