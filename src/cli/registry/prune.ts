import { defineCommand } from '../command.js';
import { pruneFlags } from '../flags/prune.js';

export const pruneCommand = defineCommand({
  name: 'prune',
  description: 'prune a transcript: keep pinned turns, mask old tool output, drop the least relevant turns, add one summary, archive what was removed',
  arguments: [{ name: '[file]', description: 'transcript file; - (or nothing, when piped) reads standard input' }],
  options: pruneFlags,
  examples: `
Examples:
  $ devs-ctx prune session.jsonl --dry-run
  $ devs-ctx prune session.jsonl --in-place --window 200k
  $ devs-ctx prune session.jsonl -o pruned.jsonl --strategy recency --target 100k --json
  $ cat session.jsonl | devs-ctx prune --force > pruned.jsonl
  $ devs-ctx prune session.jsonl --in-place --interactive
  $ GEMINI_API_KEY=… devs-ctx prune session.jsonl --in-place --summarizer gemini --fallback extractive

Gemini: the key comes from $GEMINI_API_KEY, $GOOGLE_API_KEY or the config file's geminiApiKey and is
never printed; $DEVS_CTX_GEMINI_BASE_URL points requests at a proxy or gateway (https, or http to
this machine). A project's devs-ctx.config.json geminiBaseUrl is ignored unless it is https and
~/.config/devs-ctx/config.json says "allowProjectGeminiBaseUrl": true.

Exit codes: 0 pruned, or nothing to do (the output is then the input, byte for byte),
2 usage error, 3 input unreadable or output not writable, 4 invalid transcript,
5 summarizer or embedder failed (nothing written), 6 pinned and protected turns alone exceed
the limit (nothing written), 7 the file is locked by another devs-ctx or open for writing
in another process (Linux), 130 interrupted before the write (nothing written).`,
  run: async ({ options, args, ctx }) => (await import('../commands/prune.js')).runPrune(args[0] as string | undefined, options, ctx),
});
