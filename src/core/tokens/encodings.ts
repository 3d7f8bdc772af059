import { createRequire } from 'node:module';
import { BpeCounter, type RankSource } from './bpe.js';
import { RankTable } from './rank-table.js';
import type { PieceClasses } from './unicode-pieces.js';

import { ENCODING_NAMES } from '../names.js';

export { ENCODING_NAMES };
export type EncodingName = (typeof ENCODING_NAMES)[number];

const counters = new Map<EncodingName, BpeCounter>();
let prebuilt: ((name: EncodingName) => Uint8Array | undefined) | undefined;

/**
 * Where prebuilt binary rank tables come from (src/io/rank-tables.ts reads dist/ranks/; core does no
 * I/O itself). Without one, or when it has no table, js-tiktoken's ranks are parsed as before.
 */
export function usePrebuiltRankTables(read: (name: EncodingName) => Uint8Array | undefined): void {
  prebuilt = read;
}

let prebuiltClasses: (() => PieceClasses | undefined) | undefined;

/**
 * Where the prebuilt class table comes from (src/io/rank-tables.ts reads dist/ranks/, for this
 * Node's Unicode only): with it, an o200k counter that is not a bulk one splits its first texts by
 * hand (BpeCounter, unicode-pieces.ts), and a count of a few never compiles the split regex. Without
 * one, the regex splits as before.
 */
export function usePrebuiltPieceClasses(read: () => PieceClasses | undefined): void {
  prebuiltClasses = read;
}

/** Where a bulk counter leaves the plain path: the fast one is slower only until the JIT has compiled it. */
const BULK_WARM_AFTER_CHARS = 16 * 1024;

/**
 * The counter for `name`, built on first use. Only this function pulls in a rank table, so `--help`
 * and runs that never count stay fast: the prebuilt binary table when there is one (a file read, no
 * parsing), else js-tiktoken's (about 2 MB of source, parsed), synchronously through the package's
 * CommonJS build.
 */
export function loadCounter(name: EncodingName, options: { readonly bulk?: boolean } = {}): BpeCounter {
  let counter = counters.get(name);
  if (counter === undefined) {
    // `bulk`: the first caller will count megabytes (a batch worker): the faster path from the start.
    // A bulk counter is warm after a few pages and splits with the regex from then on: it compiles the
    // regex either way, and splitting its first pages by hand costs it more than it saves.
    // Read when a first text is to be split by hand (a count of many texts at once never reads it).
    const pieceClasses = name === 'o200k_base' && options.bulk !== true ? prebuiltClasses : undefined;
    counter = new BpeCounter(prebuiltTable(name) ?? loadRanks(name), {
      ...(options.bulk ? { warmAfterChars: BULK_WARM_AFTER_CHARS } : {}),
      ...(pieceClasses ? { pieceClasses } : {}),
    });
    counters.set(name, counter);
  }
  return counter;
}

function prebuiltTable(name: EncodingName): RankTable | undefined {
  try {
    const bytes = prebuilt?.(name);
    return bytes === undefined ? undefined : RankTable.decode(bytes);
  } catch {
    // A damaged or foreign file: js-tiktoken's ranks are always there.
    return undefined;
  }
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
