#!/usr/bin/env node
// The installed command runs compiled, bundled JavaScript: `npm run build` (run by `npm ci` via
// prepare) compiles src/ to dist/ and bundles the CLI into dist/cli-bundle/ (one file to load, not ~50).
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of the bundle on disk (in the OS temp folder), so the
// next start skips most of the compiling; on Node 20 there is no such cache and this does nothing.
module.enableCompileCache?.();
const { main } = await import('../dist/cli-bundle/main.js');

// A reader that stops early (`devs-ctx prune s.jsonl | head`) closes the pipe: stop quietly, as
// other Unix tools do, instead of crashing on EPIPE. Files written with -o / --in-place are atomic.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
