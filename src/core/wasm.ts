import { Buffer } from 'node:buffer';

/**
 * The part of WebAssembly's JavaScript interface this project uses (TypeScript declares it only with
 * the DOM's types, which this package does not load); the global is Node's own.
 */
export interface WasmModule {
  readonly __brand: 'WebAssembly.Module';
}
/** A module's memory: its bytes (a new buffer once it has grown). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
};

/** Modules compiled in this thread, by their bytes in base64; null: this Node runs no WebAssembly. */
const compiled = new Map<string, WasmModule | null>();

/**
 * The WebAssembly module of these bytes (in base64), compiled once per thread; undefined when this
 * Node runs no WebAssembly (`node --jitless`, `--no-expose-wasm`).
 */
export function compileWasm(base64: string): WasmModule | undefined {
  let module = compiled.get(base64);
  if (module === undefined) {
    try {
      module = new WebAssembly.Module(Buffer.from(base64, 'base64'));
    } catch {
      module = null;
    }
    compiled.set(base64, module);
  }
  return module ?? undefined;
}

/**
 * A memory of `pages` pages of 64 KiB, or undefined when it cannot be had: a module's memory reserves
 * gigabytes of address space on 64-bit systems, which a limit on it (a `ulimit -v` under about 12 GB,
 * as on some shared machines) refuses while Node itself runs.
 */
export function wasmMemory(pages: number): WasmMemory | undefined {
  try {
    return new WebAssembly.Memory({ initial: pages });
  } catch {
    return undefined;
  }
}

/** `module` instantiated over `memory` (imported as env.memory): its exports. */
export function instantiateWasm(module: WasmModule, memory: WasmMemory): unknown {
  return new WebAssembly.Instance(module, { env: { memory } }).exports;
}

/** Bytes in a page of WebAssembly memory. */
export const WASM_PAGE_BYTES = 65536;
