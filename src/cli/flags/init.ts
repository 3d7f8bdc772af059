import { boolean, flag, force, json, strategy, summarizer, text, tokens, yes } from '../options.js';
import type { OptionsOf } from '../options.js';

/** Comma-separated paths or globs; a comma inside `{a,b}` belongs to the glob. */
export function splitTranscriptList(raw: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of raw) {
    if (ch === '{') depth++;
    if (ch === '}') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

export const initFlags = [
  flag(
    '--transcripts <paths>',
    'transcripts to look after: paths or globs, comma-separated or repeated, relative to the config file',
    // Each --transcripts value is itself a comma-separated list.
    (z) =>
      z.optional(
        z.pipe(
          z.array(z.string()),
          z.transform((values: string[]) => values.flatMap(splitTranscriptList)),
        ),
      ),
    (option) => option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
  ),
  tokens('--window <tokens>', "the model's context window: soft limit 50%, hard 80% (e.g. 200k; default 1M)"),
  tokens('--soft-limit <tokens>', 'the soft limit itself (instead of --window)'),
  tokens('--hard-limit <tokens>', 'the hard limit itself (instead of --window)'),
  text('--pinned-types <types>', 'comma-separated turn types never pruned, or none (default system,prd,tas,requirements,spec,plan)'),
  strategy('which turns a prune removes first (default relevance)'),
  summarizer('extractive: offline, nothing leaves the machine; gemini: Gemini summaries and embeddings (default: gemini when a key is set)'),
  flag(
    '--archive <path|url>',
    'where prunes archive removed turns: a path relative to the config file, or a postgres:// URL without its password (default: $XDG_DATA_HOME/devs-ctx/archive.sqlite)',
    (z) => z.optional(z.string().check(z.trim(), z.minLength(1, '--archive needs a path'))),
  ),
  flag('--config <path>', 'the file to write (default ./devs-ctx.config.json)', (z) =>
    z.optional(z.string().check(z.trim(), z.minLength(1, '--config needs a path'))),
  ),
  yes('ask nothing: the defaults for every question no flag answers'),
  force('replace an existing config file without asking'),
  boolean('--store-api-key', 'also write the key from $GEMINI_API_KEY/$GOOGLE_API_KEY into the file (mode 0600); the environment is better'),
  json('print { schemaVersion, path, replaced, config, notes } on stdout (the key, if stored, is hidden)'),
] as const;
export type InitOptions = OptionsOf<typeof initFlags>;
