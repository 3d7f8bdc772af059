#!/usr/bin/env node
// The installed command runs compiled, bundled JavaScript: `npm run build` (run by `npm ci` via
// prepare) compiles src/ to dist/ and bundles the CLI into dist/cli-bundle/ (one file to load, not ~50).
import { main } from '../dist/cli-bundle/main.js';

process.exitCode = await main(process.argv.slice(2));
