import { boolean, embedder, goal, json, model, prd, readingFlags, refreshTokens, strategy, summarizer, target, tas, threshold, timeout } from '../options.js';
import type { OptionsOf } from '../options.js';

export const replayFlags = [
  json('print one JSON report (with schemaVersion) and nothing else on stdout'),
  target("what each prune brings the window down to, in the model's tokens (default: half the soft limit)"),
  strategy('which turns a prune removes first'),
  goal('the task the agent works on (default: the latest user request or task turn at each prune)'),
  threshold(),
  tas("TAS for the refreshes (default: the transcript's tas turns)"),
  prd("PRD for the refreshes (default: the transcript's prd turns)"),
  refreshTokens(),
  boolean('--no-refresh', 'simulate prunes only'),
  summarizer('who writes each simulated summary (default extractive: a replay stays offline unless asked)'),
  embedder('how turns are ranked (default local)'),
  model('Gemini model for summaries (with --summarizer gemini)'),
  timeout('give up on one Gemini request after this many seconds (default 60)'),
  ...readingFlags('the token-count and summary caches'),
] as const;
export type ReplayOptions = OptionsOf<typeof replayFlags>;
