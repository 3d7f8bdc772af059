import { defineCommand } from '../command.js';
import { initFlags } from '../flags/init.js';

export const initCommand = defineCommand({
  name: 'init',
  description: 'write a devs-ctx.config.json for this project: asks (or takes flags) for transcripts, limits, pinned types, strategy, summarizer and archive',
  options: initFlags,
  examples: `
Examples:
  $ devs-ctx init                                        # on a terminal: asks, then writes ./devs-ctx.config.json
  $ devs-ctx init --yes                                  # the defaults, no questions (also without a terminal)
  $ devs-ctx init --transcripts '.devs/*.jsonl' --window 200k --summarizer extractive --yes
  $ devs-ctx init --force --yes --strategy recency       # replace an existing config

Without a terminal every question needs its flag, or --yes. An existing file is replaced only after
asking, or with --force. Exit codes: 0 written, 2 usage error (also: the file exists, no terminal and
no --force), 3 not writable, 130 cancelled (nothing written).`,
  run: async ({ options, ctx }) => (await import('../commands/init.js')).runInit(options, ctx),
});
