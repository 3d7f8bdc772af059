// Bundles the CLI into dist/cli-bundle/, one CommonJS file per entry (the CLI, the batch analyze
// worker, the count worker), run by `npm run build` after tsc. Each entry is three files:
//   <name>.bundle.cjs  the whole entry, every module of ours and the small dependencies inlined;
//   <name>.cjs         what is started (the bin requires main.cjs, a Worker runs the others): it has
//                      loader.cjs compile the bundle with V8's code cache;
//   <name>.v8cache     that cache, written by scripts/build-code-cache.mjs (optional: without it the
//                      bundle is compiled as any script).
// CommonJS, not ES modules: V8's code cache is open to scripts on every Node 20 (node:vm), not to
// modules, and one file per entry leaves the ES module loader nothing to resolve and fetch.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const out = 'dist/cli-bundle';
const entries = {
  main: 'dist/cli/main.js',
  'analyze-worker': 'dist/cli/batch/analyze-worker.js',
  'count-worker': 'dist/cli/count-worker.js',
};

mkdirSync(out, { recursive: true });
// A code cache belongs to the bundle it was made from: none may outlive a new bundle.
for (const name of readdirSync(out)) rmSync(join(out, name), { force: true });

/**
 * Packages loaded on demand, or large and rarely needed, stay outside: required from node_modules
 * at run time. One left outside and imported with import() (the MCP SDK, @google/genai) is
 * required instead, through its CommonJS build: code compiled from a V8 code cache cannot call
 * import() on Node 20 (it loses the callback that resolves it), and both packages publish one.
 */
const EXTERNAL = ['js-tiktoken', '@pydantic/genai-prices', 'better-sqlite3', 'pg', '@google/genai', '@modelcontextprotocol/sdk'];
const isExternal = (path) => EXTERNAL.some((name) => path === name || path.startsWith(`${name}/`));
const requireExternals = {
  name: 'require-externals',
  setup(build) {
    build.onResolve({ filter: /^[@a-z]/ }, (args) => {
      if (!isExternal(args.path)) return undefined;
      if (args.kind === 'dynamic-import') return { path: args.path, namespace: 'require-external' };
      return { path: args.path, external: true };
    });
    build.onLoad({ filter: /.*/, namespace: 'require-external' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      resolveDir: process.cwd(),
    }));
  },
};

/**
 * zod/mini re-exports its JSON-schema generator and the index of every locale (as z.locales). An ES module
 * bundle shook them out; modules that load lazily (each command is imported on demand) are kept
 * whole in a CommonJS bundle, with what they re-export. Nothing here uses them: they are left out.
 */
const ZOD_UNUSED = /^(\.\/(to-json-schema|json-schema)|\.\.\/locales\/index)\.js$/;
const leaveOutZodExtras = {
  name: 'leave-out-zod-extras',
  setup(build) {
    build.onResolve({ filter: ZOD_UNUSED }, (args) =>
      /node_modules\/zod\/v4\/(core\/index|mini\/external)\.js$/.test(args.importer) ? { path: args.path, namespace: 'zod-unused' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-unused' }, () => ({ contents: '' }));
  },
};

/**
 * commander requires node:child_process as it loads, for subcommands that are programs of their own
 * (devs-ctx has none): a stand-in requires it on first use instead, which is never (about 2.5 ms of
 * every start, loading child_process and what it needs).
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /node_modules\/commander\//.test(args.importer) ? { path: 'child_process', namespace: 'lazy-child-process' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
    }));
  },
};

/**
 * jsonc-parser's `main` is a UMD build whose factory requires its own files by relative paths
 * esbuild cannot follow: its ES module build (`module`) is bundled instead.
 */
const jsoncParserEsm = {
  name: 'jsonc-parser-esm',
  setup(build) {
    build.onResolve({ filter: /^jsonc-parser$/ }, () => ({ path: join(process.cwd(), 'node_modules', 'jsonc-parser', 'lib', 'esm', 'main.js') }));
  },
};

await build({
  entryPoints: Object.entries(entries).map(([name, file]) => ({ in: file, out: `${name}.bundle` })),
  outdir: out,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  plugins: [requireExternals, leaveOutZodExtras, lazyChildProcess, jsoncParserEsm],
  // The sources find their files (build id, rank tables, workers, package.json) from import.meta.url:
  // in the bundle that is the bundle's own URL, one level below dist/ as dist/cli/ is.
  define: { 'import.meta.url': '__devsCtxUrl' },
  banner: { js: "const __devsCtxUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

// Code compiled from a V8 code cache cannot call import() on Node 20: none may be left.
for (const name of Object.keys(entries)) {
  if (/\bimport\(/.test(readFileSync(join(out, `${name}.bundle.cjs`), 'utf8'))) throw new Error(`${name}: the bundle calls import()`);
}
copyFileSync('scripts/bundle-loader.cjs', join(out, 'loader.cjs'));
for (const name of Object.keys(entries)) {
  writeFileSync(join(out, `${name}.cjs`), `'use strict';\nmodule.exports = require('./loader.cjs').load(${JSON.stringify(name)});\n`);
}
