'use strict';
// dist/cli-bundle/loader.cjs (copied there by scripts/bundle.mjs): compiles one bundle of the CLI
// with V8's code cache and runs it as a CommonJS module. With the cache, V8 deserializes the
// bytecode `npm run build` compiled (scripts/build-code-cache.mjs) instead of parsing about a
// megabyte of JavaScript and compiling each function on first call: a command starts about 35 ms
// sooner, and so does each worker thread.
//
// The cache file is a SHA-256 of the bundle, the cache and the Node that made it (version, V8
// version, architecture), then the cache. It is used only when that digest holds: the cache is of
// these very bytes (V8's own check compares the source's length only), undamaged (V8 does not check
// a cache's contents, and a damaged one aborts the process), and made by this Node (V8's version
// check does not see Node's own patches to V8). V8 itself rejects a cache made under other flags
// (`NODE_OPTIONS=--max-old-space-size=…`). Without a usable cache the bundle is compiled as any
// script, or, on a Node with a compile cache of its own (22.1 and later), required with that one on.
// Nothing is written here.
const { readFileSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { dirname, join } = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

const DIGEST_BYTES = 32;
const NODE = `${process.version} ${process.versions.v8} ${process.arch}`;

function digest(bytes, payload) {
  return createHash('sha256').update(bytes).update(payload).update(NODE).digest();
}

/** The code cache of `bytes` (bundle `name`) made by this Node, when there is an undamaged one. */
function cachedDataFor(name, bytes) {
  try {
    const cache = readFileSync(join(__dirname, `${name}.v8cache`));
    const payload = cache.subarray(DIGEST_BYTES);
    return payload.length > 0 && digest(bytes, payload).equals(cache.subarray(0, DIGEST_BYTES)) ? payload : undefined;
  } catch {
    return undefined;
  }
}

function compileBytes(file, bytes, cachedData) {
  // UTF-8: esbuild escapes what is not ASCII in strings, not in regular expressions or comments.
  const script = new vm.Script(Module.wrap(bytes.toString('utf8')), { filename: file, cachedData });
  return { file, bytes, script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

/** The bundle `name`: its path and bytes. */
function bundle(name) {
  const file = join(__dirname, `${name}.bundle.cjs`);
  return { file, bytes: readFileSync(file) };
}

/** The bundle `name` compiled (with its code cache when there is a usable one), not yet run. */
function compile(name, options = {}) {
  const { file, bytes } = bundle(name);
  return compileBytes(file, bytes, options.cache === false ? undefined : cachedDataFor(name, bytes));
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
  const { file, bytes } = bundle(name);
  const cachedData = cachedDataFor(name, bytes);
  if (cachedData === undefined && typeof Module.enableCompileCache === 'function') {
    Module.enableCompileCache();
    return require(file);
  }
  return run(compileBytes(file, bytes, cachedData));
}

module.exports = { compile, run, load, cacheFile };
