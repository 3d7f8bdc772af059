import { readFileSync } from 'node:fs';
import { usePrebuiltRankTables } from '../core/tokens/encodings.js';
import type { EncodingName } from '../core/tokens/encodings.js';

/**
 * The binary rank tables `npm run build` writes into dist/ranks/ (scripts/build-ranks.mjs), found
 * from this module in the tsc output (dist/io/) or the bundle (dist/cli-bundle/): both are one level
 * below dist/. From the TypeScript sources there are none, and js-tiktoken's ranks are parsed.
 */
export function installPrebuiltRankTables(): void {
  usePrebuiltRankTables((name: EncodingName) => {
    try {
      return readFileSync(new URL(`../ranks/${name}.bin`, import.meta.url));
    } catch {
      return undefined;
    }
  });
}
