#!/usr/bin/env node
'use strict';
// The installed command runs compiled, bundled JavaScript: `npm run build` (run by `npm ci` via
// prepare) compiles src/ to dist/ and bundles the CLI into dist/cli-bundle/ (one file, compiled from
// V8's code cache made at build time: see scripts/bundle-loader.cjs). This file is CommonJS
// (bin/package.json), so Node starts without its ES module loader, about 5 ms sooner.
const { endWhenDone, main, onOutputError } = require('../dist/cli-bundle/main.cjs');

// A reader that stops early (`devs-ctx prune s.jsonl | head`) closes the pipe: stop quietly, as
// other Unix tools do, instead of crashing on EPIPE. Any other failure to write (a full disk) is
// exit 3 with a message, never success. Files written with -o / --in-place are atomic.
for (const name of ['stdout', 'stderr']) process[name].on('error', (error) => onOutputError(name, error));

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // With nothing left open but the standard streams, end once stdout and stderr have flushed
    // instead of waiting for Node to tear every piece of the process down (src/cli/process-end.ts).
    endWhenDone(code);
  },
  // main() reports every error it expects itself: this is a bug, shown as Node shows an uncaught one.
  (error) => {
    process.stderr.write(`${error instanceof Error && error.stack ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
