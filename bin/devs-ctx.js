#!/usr/bin/env node
// The installed command runs compiled JavaScript: `npm run build` (run by `npm ci` via prepare) makes dist/.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
