import { boolean, choice, flag, json, readingFlags, text, wholeNumber } from '../options.js';
import type { OptionsOf } from '../options.js';

export const analyzeFlags = [
  json('print one JSON document (with schemaVersion) and nothing else on stdout'),
  boolean('--ndjson', 'many sessions: print one JSON line per session as it is done, then a totals line'),
  choice('--sort <key>', 'many sessions: order rows by tokens (the context the model sees) or urgency, largest first (rows then print at the end)', [
    'tokens',
    'urgency',
  ]),
  text('--since <when>', 'many sessions: only sessions with a turn at or after this (2026-05-01, 2026-05-01T09:30Z, or an age: 12h, 7d, 2w)'),
  text('--until <when>', 'many sessions: only sessions with a turn before this (a date includes that whole day)'),
  flag(
    '--jobs <n>',
    'worker threads for many sessions, or for counting one large transcript (default: one per core; 1 = no workers)',
    wholeNumber('--jobs', 'a whole number of worker threads from 1 to 256', 1, 256),
  ),
  choice('--basis <kind>', 'the context size: auto (calibrated on the recorded API calls) or estimate (the turns in the file only)', ['auto', 'estimate']),
  ...readingFlags('the token-count cache nor the finished reports of unchanged files'),
] as const;
export type AnalyzeOptions = OptionsOf<typeof analyzeFlags>;
