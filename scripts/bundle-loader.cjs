'use strict';
// dist/cli-bundle/loader.cjs (copied there by scripts/bundle.mjs): compiles one bundle of the CLI
// with V8's code cache and runs it as a CommonJS module. With the cache, V8 deserializes the
// bytecode `npm run build` compiled (scripts/build-code-cache.mjs) instead of parsing about a
// megabyte of JavaScript and compiling each function on first call: a command starts about 35 ms
// sooner, and so does each worker thread.
//
// The cache file is a SHA-256 of the bundle and the cache together, then the cache. It is used only
// when that digest holds: the cache is of these very bytes (V8's own check compares the source's
// length only) and undamaged (V8 does not check a cache's contents, and a damaged one aborts the
// process). V8 itself rejects a cache made by another version of V8 or under other flags. Without a
// usable cache the bundle is compiled as any script. Nothing is written here.
const { readFileSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { dirname, join } = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

const DIGEST_BYTES = 32;

/** The bundle `name` compiled (with its code cache when there is a matching one), not yet run. */
function compile(name, options = {}) {
  const file = join(__dirname, `${name}.bundle.cjs`);
  const bytes = readFileSync(file);
  let cachedData;
  if (options.cache !== false) {
    try {
      const cache = readFileSync(join(__dirname, `${name}.v8cache`));
      const payload = cache.subarray(DIGEST_BYTES);
      if (payload.length > 0 && digest(bytes, payload).equals(cache.subarray(0, DIGEST_BYTES))) cachedData = payload;
    } catch {
      // no cache: compile
    }
  }
  // The bundle is ASCII (scripts/bundle.mjs), so latin1 reads it as UTF-8 would, faster.
  const script = new vm.Script(Module.wrap(bytes.toString('latin1')), {
    filename: file,
    cachedData,
    // import() of the packages left outside the bundle (the MCP SDK, @google/genai).
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ?? ((specifier) => import(specifier)),
  });
  return { file, bytes, script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

function digest(bytes, payload) {
  return createHash('sha256').update(bytes).update(payload).digest();
}

/** What `<name>.v8cache` holds for a compiled bundle (after it ran, it holds what it compiled). */
function cacheFile({ bytes, script }) {
  const payload = script.createCachedData();
  return Buffer.concat([digest(bytes, payload), payload]);
}

/** Runs a compiled bundle as a CommonJS module: its exports. */
function run({ file, script }) {
  const module = { exports: {}, filename: file, id: file, loaded: false };
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file));
  module.loaded = true;
  return module.exports;
}

/** The exports of the bundle `name`, compiled with its code cache when it has one. */
function load(name) {
  return run(compile(name));
}

module.exports = { compile, run, load, cacheFile };
