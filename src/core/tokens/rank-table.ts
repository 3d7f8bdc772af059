/** The shape of js-tiktoken's rank modules (`js-tiktoken/ranks/o200k_base`). */
export interface RankSource {
  readonly pat_str: string;
  readonly bpe_ranks: string;
}

/**
 * A BPE rank table in a compact binary form that needs no parsing: `npm run build` writes one per
 * encoding from js-tiktoken's own ranks (scripts/build-ranks.mjs → dist/ranks/<name>.bin), and a
 * counter reads it whole and uses it as it is. Building js-tiktoken's table (base64-decoding 200,000
 * tokens into a Map) costs about 100 ms on an idle core; this costs a file read.
 *
 * Layout (little-endian, sections 4-byte aligned):
 *   magic u32 'DBPE', version u32, n u32 (max rank + 1), slots u32 (a power of two), byte length u32,
 *   pattern length u32, the split pattern (UTF-8), offsets u32[n + 1] (token r is bytes[offsets[r],
 *   offsets[r + 1]); a rank with no token is empty), slots i32[slots] (an open-addressing hash table of
 *   ranks by FNV-1a of the token bytes, linear probing, -1 empty), the token bytes.
 */
const MAGIC = 0x45504244; // 'DBPE'
const VERSION = 1;
const HEADER_BYTES = 24;

function fnv(bytes: ArrayLike<number>, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

/** Encodes js-tiktoken's rank source (`bpe_ranks`: lines of `<ignored> <offset> <base64 token>…`). */
export function encodeRankTable(source: RankSource): Uint8Array {
  const tokens: (Uint8Array | undefined)[] = [];
  let byteLength = 0;
  for (const line of source.bpe_ranks.split('\n')) {
    if (line === '') continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1] ?? '', 10);
    for (let i = 2; i < fields.length; i++) {
      const latin1 = atob(fields[i] as string);
      const bytes = new Uint8Array(latin1.length);
      for (let k = 0; k < latin1.length; k++) bytes[k] = latin1.charCodeAt(k);
      const rank = offset + i - 2;
      if (tokens[rank] !== undefined) throw new Error(`rank ${rank} appears twice`);
      tokens[rank] = bytes;
      byteLength += bytes.length;
    }
  }
  const n = tokens.length;
  let slots = 1;
  while (slots < n * 2) slots *= 2;
  const pattern = new TextEncoder().encode(source.pat_str);
  const patternPadded = (pattern.length + 3) & ~3;
  const offsetsAt = HEADER_BYTES + patternPadded;
  const slotsAt = offsetsAt + (n + 1) * 4;
  const bytesAt = slotsAt + slots * 4;
  const out = new Uint8Array(bytesAt + byteLength);
  const view = new DataView(out.buffer);
  for (const [i, value] of [MAGIC, VERSION, n, slots, byteLength, pattern.length].entries()) view.setUint32(i * 4, value, true);
  out.set(pattern, HEADER_BYTES);
  const table = new Int32Array(slots).fill(-1);
  let at = 0;
  for (let rank = 0; rank < n; rank++) {
    view.setUint32(offsetsAt + rank * 4, at, true);
    const token = tokens[rank];
    if (token === undefined) continue;
    out.set(token, bytesAt + at);
    at += token.length;
    for (let slot = fnv(token, 0, token.length) & (slots - 1); ; slot = (slot + 1) & (slots - 1)) {
      if (table[slot] === -1) {
        table[slot] = rank;
        break;
      }
    }
  }
  view.setUint32(offsetsAt + n * 4, at, true);
  for (let slot = 0; slot < slots; slot++) view.setInt32(slotsAt + slot * 4, table[slot] as number, true);
  return out;
}

/** A rank table read from its binary form: the lookups BPE needs, straight on the bytes. */
export class RankTable {
  readonly pattern: string;
  /** The highest rank that has a token. */
  readonly maxRank: number;
  readonly #offsets: Uint32Array;
  readonly #slots: Int32Array;
  readonly #mask: number;
  readonly #bytes: Uint8Array;

  private constructor(pattern: string, offsets: Uint32Array, slots: Int32Array, bytes: Uint8Array) {
    this.pattern = pattern;
    this.#offsets = offsets;
    this.#slots = slots;
    this.#mask = slots.length - 1;
    this.#bytes = bytes;
    let max = offsets.length - 2;
    while (max > 0 && offsets[max] === offsets[max + 1]) max--;
    this.maxRank = max;
  }

  /** Reads the binary form (as `encodeRankTable` makes it); throws on anything else. */
  static decode(data: Uint8Array): RankTable {
    // Typed views need 4-byte alignment: copy once when the bytes start elsewhere.
    const bytes = data.byteOffset % 4 === 0 ? data : data.slice();
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength < HEADER_BYTES || view.getUint32(0, true) !== MAGIC || view.getUint32(4, true) !== VERSION) {
      throw new Error('not a devs-ctx rank table (or one of another version)');
    }
    const [n, slots, byteLength, patternLength] = [8, 12, 16, 20].map((at) => view.getUint32(at, true)) as [number, number, number, number];
    const offsetsAt = HEADER_BYTES + ((patternLength + 3) & ~3);
    const slotsAt = offsetsAt + (n + 1) * 4;
    const bytesAt = slotsAt + slots * 4;
    if (bytesAt + byteLength !== bytes.byteLength || (slots & (slots - 1)) !== 0) throw new Error('a damaged rank table');
    const pattern = new TextDecoder().decode(bytes.subarray(HEADER_BYTES, HEADER_BYTES + patternLength));
    return new RankTable(
      pattern,
      new Uint32Array(bytes.buffer, bytes.byteOffset + offsetsAt, n + 1),
      new Int32Array(bytes.buffer, bytes.byteOffset + slotsAt, slots),
      bytes.subarray(bytesAt),
    );
  }

  static fromSource(source: RankSource): RankTable {
    return RankTable.decode(encodeRankTable(source));
  }

  /** The table's three parts, as it uses them (bpe-merge.ts copies them into WebAssembly's memory). */
  parts(): { readonly offsets: Uint32Array; readonly slots: Int32Array; readonly bytes: Uint8Array } {
    return { offsets: this.#offsets, slots: this.#slots, bytes: this.#bytes };
  }

  /** The rank of the bytes s[from, to) (a latin1 string: one char per byte), or -1 when no token. */
  rank(s: string, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    const slots = this.#slots;
    const offsets = this.#offsets;
    const bytes = this.#bytes;
    const length = to - from;
    for (let slot = (h >>> 0) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const r = slots[slot] as number;
      if (r < 0) return -1;
      const start = offsets[r] as number;
      if ((offsets[r + 1] as number) - start !== length) continue;
      let i = 0;
      while (i < length && bytes[start + i] === s.charCodeAt(from + i)) i++;
      if (i === length) return r;
    }
  }
}
