// Writes dist/ranks/<encoding>.bin: js-tiktoken's rank tables in the binary form of
// src/core/tokens/rank-table.ts, which a counter loads without parsing; and dist/ranks/piece-classes.bin,
// each code point's class under o200k's split pattern, made with this Node's regex engine (see
// src/core/tokens/unicode-pieces.ts). Run by `npm run build` after tsc (it uses the compiled code).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeRankTable } from '../dist/core/tokens/rank-table.js';
import { ENCODING_NAMES } from '../dist/core/tokens/encodings.js';
import { buildPieceClasses } from '../dist/core/tokens/unicode-pieces.js';

const require = createRequire(import.meta.url);
mkdirSync('dist/ranks', { recursive: true });
for (const name of ENCODING_NAMES) {
  writeFileSync(`dist/ranks/${name}.bin`, encodeRankTable(require(`js-tiktoken/ranks/${name}`)));
}
writeFileSync('dist/ranks/piece-classes.bin', buildPieceClasses(process.versions.unicode));
