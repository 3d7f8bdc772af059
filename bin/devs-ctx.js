#!/usr/bin/env node
// The installed command runs compiled, bundled JavaScript: `npm run build` (run by `npm ci` via
// prepare) compiles src/ to dist/ and bundles the CLI into dist/cli-bundle/ (one file, compiled from
// V8's code cache made at build time: see scripts/bundle-loader.cjs).
import { createRequire } from 'node:module';

const { main } = createRequire(import.meta.url)('../dist/cli-bundle/main.cjs');

// A reader that stops early (`devs-ctx prune s.jsonl | head`) closes the pipe: stop quietly, as
// other Unix tools do, instead of crashing on EPIPE. Files written with -o / --in-place are atomic.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
