// Writes dist/ranks/<encoding>.bin: js-tiktoken's rank tables in the binary form of
// src/core/tokens/rank-table.ts, which a counter loads without parsing. Run by `npm run build`
// after tsc (it uses the compiled encoder).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeRankTable } from '../dist/core/tokens/rank-table.js';
import { ENCODING_NAMES } from '../dist/core/tokens/encodings.js';

const require = createRequire(import.meta.url);
mkdirSync('dist/ranks', { recursive: true });
for (const name of ENCODING_NAMES) {
  writeFileSync(`dist/ranks/${name}.bin`, encodeRankTable(require(`js-tiktoken/ranks/${name}`)));
}
