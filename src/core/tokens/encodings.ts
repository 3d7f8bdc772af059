import { createRequire } from 'node:module';
import { BpeCounter, type RankSource } from './bpe.js';

export const ENCODING_NAMES = ['o200k_base', 'cl100k_base'] as const;
export type EncodingName = (typeof ENCODING_NAMES)[number];

const counters = new Map<EncodingName, BpeCounter>();

/**
 * The counter for `name`, built on first use. Only this function pulls in a rank table (about 2 MB of
 * source), synchronously through the package's CommonJS build, so `--help` and runs that never count
 * stay fast.
 */
export function loadCounter(name: EncodingName): BpeCounter {
  let counter = counters.get(name);
  if (counter === undefined) {
    counter = new BpeCounter(loadRanks(name));
    counters.set(name, counter);
  }
  return counter;
}

function loadRanks(name: EncodingName): RankSource {
  const require = createRequire(import.meta.url);
  const loaded: unknown = require(`js-tiktoken/ranks/${name}`);
  // The .cjs build assigns the object to module.exports; accept an ESM-style `default` as well.
  const source = isRankSource(loaded) ? loaded : isRecord(loaded) ? loaded['default'] : undefined;
  if (!isRankSource(source)) throw new Error(`js-tiktoken/ranks/${name} does not export a rank table`);
  return source;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isRankSource(value: unknown): value is RankSource {
  return isRecord(value) && typeof value['pat_str'] === 'string' && typeof value['bpe_ranks'] === 'string';
}
