/**
 * A stable hash of a term's characters (UTF-16 units), the same in every process: FNV-1a, then
 * murmur3's finalizer (FNV's low bits alone collide too often for short words). The offline
 * embedder's buckets and signs are made from it (src/providers/local-embedder.ts).
 */
export function stableHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return finalized(h);
}

/** `stableHash` of the `length` units from `from` in `units` (a term as terms.wat keeps it), without making it a string. */
export function stableHashOfUnits(units: Uint16Array, from: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = from, end = from + length; i < end; i++) h = Math.imul(h ^ (units[i] as number), 0x01000193);
  return finalized(h);
}

function finalized(fnv: number): number {
  let h = fnv;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
