import { closeSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { openRegularFile, readFully } from './fd.js';

/**
 * Counts by key in one binary file that is used as it is read: a lookup probes a hash table in the
 * file's bytes, so opening a cache of 200,000 counts costs a file read (about 11 MB), not the 370 ms
 * of parsing a JSON object of 200,000 properties into a Map that every `analyze` with a turn to count
 * paid on a full cache; and a file of 1 MiB or more is read in parts, its slots at once and each entry
 * when a look-up reaches it (TableParts). A save writes the tables as they were read and the new
 * entries after them.
 * Keys are Latin-1 strings of at most 255 characters (a text's SHA-1 in base64url is 27); any other
 * key is held for this run only, never written.
 *
 * A large table is not rewritten for the few counts a run adds: they go, with copies of the entries
 * the run used (their marks), into a small second table in `<file>.recent`, which is rewritten whole
 * on each such save and read with the main one (checked first). Once it holds an eighth of the main
 * table's entries, or the two would pass `maxEntries`, a save merges it into the main file and
 * removes it. Every entry checks itself, so the two files need not agree: a key in both has the same
 * count in both (a count is its text's). Two runs at once may lose what one of them added (the other
 * rewrites or merges what it read), never make a count wrong.
 *
 * Least recently used counts are dropped, by run: every open is a new generation, and a hit marks
 * its entry with it. A save that would pass `maxEntries` drops the entries of the oldest generations
 * (the earliest in the file first within one, new entries last) down to 90 % of it, so the next
 * runs add to the file again instead of each rewriting it. Like every cache here it is an
 * optimisation: a missing or foreign file reads as empty, a damaged entry as missing (each is checked
 * as it is read), and a failed save is ignored.
 *
 * A file is of one `tag` (the token counter's version: see TokenCountCache): a file of another tag
 * reads as empty, and is replaced at the next save.
 *
 * Layout (little-endian, 4-byte aligned): magic u32 'DCTC', version u32, slots u32 (a power of two,
 * at least twice the entries), entries u32, generation u32, key bytes u32, tag u32, u32 zero; slots
 * i32[slots] (open addressing by the key's FNV-1a, linear probing, -1 empty); entries
 * i32[entries × 6] (count, generation, key offset, key length, the key's FNV-1a, a check of the
 * other four: an entry whose check fails, a zeroed page's among them, is missing); the keys' bytes.
 */
const MAGIC = 0x43544344;
const VERSION = 1;
const HEADER_WORDS = 8;
const ENTRY_WORDS = 6;
const MAX_KEY_CHARS = 255;
const MIN_SLOTS = 16;
/** A main table of this many entries or more takes a run's new counts in the recent file. */
const RECENT_MIN_MAIN = 16_384;
/** The recent file is merged into the main one past this share of the main table's entries. */
const RECENT_MAX_SHARE = 1 / 8;

/** The file as read: typed views on its bytes. */
interface Table {
  readonly generation: number;
  readonly slots: Int32Array;
  /** [count, generation, key offset, key length, key hash, check] per entry; generations are updated in place by hits. */
  readonly entries: Int32Array;
  readonly keys: Uint8Array;
  readonly size: number;
  /** A table read in parts: its entries and keys, zeros until read (see TableParts). */
  readonly parts?: TableParts;
}

/** A table read in parts reads the rest whole past one entry read for this many of its file's bytes. */
const BYTES_PER_PART_READ = 4096;
/** A main file at least this large is read in parts (see TableParts); a smaller one whole. */
let inPartsFrom = 1 << 20;

/**
 * Main files from this many bytes on are read in parts (1 MiB unless set).
 * @public test/count-cache-in-parts.test.ts runs every cache test on caches read in parts.
 */
export function readInPartsFrom(bytes: number): void {
  inPartsFrom = bytes;
}

/** Closes the file of a table read in parts that is collected before it was read whole. */
const closeWhenCollected = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // closed with the process
  }
});

/**
 * The entries and keys of a table read in parts: each entry (24 bytes) and its key's bytes are read
 * from the open file the first time a look-up reaches the entry, and the rest whole when a save
 * rewrites the table or after many reads. A full cache is about 11 MB (17–19 ms to read here), and
 * most runs look up a few counts in it (a hook, a status line's re-run after one session grew).
 * Until read, an entry is zeros, which its check reads as missing; one that cannot be read stays so.
 * The file stays open while the table is used, so a file another run replaced meanwhile is still the
 * one read: its slots and its entries agree.
 */
class TableParts {
  #fd: number | undefined;
  /** The whole read failed: the table holds only what was read before (a save must not write it out). */
  #failed = false;
  /** Per entry: 1 once read (or tried). */
  readonly #done: Uint8Array;
  #reads = 0;
  /** The entries read whole, in order (their marks are kept when the rest is read). */
  readonly #read: number[] = [];
  readonly #maxReads: number;

  constructor(
    fd: number,
    private readonly table: { readonly entries: Int32Array; readonly keys: Uint8Array; readonly size: number },
    private readonly at: { readonly entries: number; readonly keys: number },
    fileBytes: number,
  ) {
    this.#fd = fd;
    this.#done = new Uint8Array(table.size);
    this.#maxReads = Math.ceil(fileBytes / BYTES_PER_PART_READ);
    closeWhenCollected.register(this, fd, this);
  }

  /** Entry `entry` and its key's bytes, read unless they were. */
  entry(entry: number): void {
    const fd = this.#fd;
    if (fd === undefined || this.#done[entry] === 1) return;
    if (this.#reads >= this.#maxReads) {
      this.all();
      return;
    }
    this.#done[entry] = 1;
    this.#reads++;
    if (this.#readEntry(fd, entry)) this.#read.push(entry);
    else this.table.entries.fill(0, entry * ENTRY_WORDS, (entry + 1) * ENTRY_WORDS);
  }

  /** Reads entry `entry`'s words and, when it is sound, its key's bytes; false when either is not there. */
  #readEntry(fd: number, entry: number): boolean {
    const { entries, keys } = this.table;
    const e = entry * ENTRY_WORDS;
    try {
      const words = new Uint8Array(entries.buffer, entries.byteOffset + e * 4, ENTRY_WORDS * 4);
      if (readFully(fd, words, this.at.entries + e * 4) < words.length || !sound(entries, e, keys.length)) return false;
      const offset = entries[e + 2] as number;
      const length = entries[e + 3] as number;
      return readFully(fd, keys.subarray(offset, offset + length), this.at.keys + offset) === length;
    } catch {
      return false;
    }
  }

  /** Every entry and key, the rest read whole (the marks of those read kept); false when the file could not be read, then or before. */
  all(): boolean {
    const fd = this.#fd;
    if (fd === undefined) return !this.#failed;
    this.#fd = undefined;
    this.#failed = true;
    closeWhenCollected.unregister(this);
    const { entries, keys } = this.table;
    const marks = this.#read.map((entry) => entries[entry * ENTRY_WORDS + 1] as number);
    try {
      const bytes = new Uint8Array(entries.buffer, entries.byteOffset, entries.byteLength);
      if (readFully(fd, bytes, this.at.entries) < bytes.length || readFully(fd, keys, this.at.keys) < keys.length) return false;
    } catch {
      return false;
    } finally {
      closeSync(fd);
      for (const [k, entry] of this.#read.entries()) entries[entry * ENTRY_WORDS + 1] = marks[k] as number;
    }
    this.#failed = false;
    return true;
  }
}

/** FNV-1a of a key's characters (its Latin-1 bytes), as a 32-bit integer. */
function fnv(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

function storable(key: string): boolean {
  if (key.length > MAX_KEY_CHARS) return false;
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0xff) return false;
  return true;
}

/** Where a file's slots, entries and keys start, for `slots` slots and `size` entries. */
function offsets(slots: number, size: number): { slotsAt: number; entriesAt: number; keysAt: number } {
  const slotsAt = HEADER_WORDS * 4;
  const entriesAt = slotsAt + slots * 4;
  return { slotsAt, entriesAt, keysAt: entriesAt + size * ENTRY_WORDS * 4 };
}

function slotsFor(entries: number): number {
  let slots = MIN_SLOTS;
  while (slots < entries * 2) slots *= 2;
  return slots;
}

/** What a file's header says, or undefined when it is no table of this code and `tag` in a file of `length` bytes (a cut or padded one). */
function headerOf(header: Uint32Array, tag: number, length: number): { slots: number; size: number; generation: number; keyBytes: number } | undefined {
  const [magic, version, slots, size, generation, keyBytes, fileTag] = header as unknown as [number, number, number, number, number, number, number];
  if (magic !== MAGIC || version !== VERSION || fileTag !== tag || slots < MIN_SLOTS || (slots & (slots - 1)) !== 0 || slots < 2 * size) return undefined;
  return offsets(slots, size).keysAt + keyBytes === length ? { slots, size, generation, keyBytes } : undefined;
}

/** The table in `data`, or undefined when it is not one (another format, version or tag, a cut or padded file). */
function decode(data: Uint8Array, tag: number): Table | undefined {
  if (data.byteLength < HEADER_WORDS * 4) return undefined;
  // Typed views need 4-byte alignment: copy once when the bytes start elsewhere.
  const bytes = data.byteOffset % 4 === 0 ? data : new Uint8Array(data);
  const header = headerOf(new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS), tag, bytes.byteLength);
  if (header === undefined) return undefined;
  const { slots, size, generation } = header;
  const { slotsAt, entriesAt, keysAt } = offsets(slots, size);
  return {
    generation,
    slots: new Int32Array(bytes.buffer, bytes.byteOffset + slotsAt, slots),
    entries: new Int32Array(bytes.buffer, bytes.byteOffset + entriesAt, size * ENTRY_WORDS),
    keys: bytes.subarray(keysAt),
    size,
  };
}

/** The check word of an entry: FNV-1a over its count, key offset, key length and key hash (never 0 for an all-zero entry). */
function check(count: number, offset: number, length: number, hash: number): number {
  return mix(mix(mix(mix(0x811c9dc5, count), offset), length), hash) | 0;
}

/** FNV-1a of one 32-bit word, by halves. */
function mix(h: number, word: number): number {
  return Math.imul(Math.imul(h ^ (word & 0xffff), 0x01000193) ^ (word >>> 16), 0x01000193);
}

/** Whether entry `e` (its first word) is as written: its check holds, and its key lies inside the keys' bytes. */
function sound(entries: Int32Array, e: number, keyBytes: number): boolean {
  const count = entries[e] as number;
  const offset = entries[e + 2] as number;
  const length = entries[e + 3] as number;
  if (entries[e + 5] !== check(count, offset, length, entries[e + 4] as number)) return false;
  return count >= 0 && offset >= 0 && length >= 0 && length <= MAX_KEY_CHARS && offset + length <= keyBytes;
}

/**
 * Whether the slots can be taken as they are with `more` entries added: every entry of the table in
 * exactly one slot, every other slot free (a damaged table is placed anew).
 */
function reusable(slots: Int32Array, size: number, more: number): boolean {
  const seen = new Uint8Array(size);
  let free = 0;
  for (let slot = 0; slot < slots.length; slot++) {
    const entry = slots[slot] as number;
    if (entry === -1) free++;
    else if (entry < 0 || entry >= size || seen[entry] === 1) return false;
    else seen[entry] = 1;
  }
  return free === slots.length - size && free > more;
}

/** Puts entry `entry` (with key hash `hash`) into the first free slot of its probe sequence. */
function place(slots: Int32Array, entry: number, hash: number): void {
  const mask = slots.length - 1;
  let slot = hash & mask;
  while ((slots[slot] as number) !== -1) slot = (slot + 1) & mask;
  slots[slot] = entry;
}

export class CountStore {
  /** Counts new this run (not in the file), oldest first. */
  private readonly added = new Map<string, number>();
  /**
   * The same counts as a save writes them: those whose keys are storable, with each key's hash,
   * found as each is set (a batch's main thread sets them while its workers count, and has nothing
   * else to do then; done at the save, it cost 15–25 ms of every first run's end).
   */
  private readonly toSave: Added & { readonly hashes: number[] } = { keys: [], counts: [], hashes: [] };
  /** The main table's entries (their first words) this run used, in order: copied into the recent file with their new mark. */
  private readonly usedInMain: number[] = [];
  /** This run's generation: one more than the files'. */
  private readonly generation: number;

  private constructor(
    /** No file: a store in memory only, never saved. */
    readonly file: string | undefined,
    private readonly maxEntries: number,
    private readonly table: Table | undefined,
    private readonly recent: Table | undefined,
    private readonly tag: number,
  ) {
    // Only the files there are: a missing one is no generation 0 (past 2^31, 0 would count as newer).
    const last = table === undefined ? (recent?.generation ?? 0) : recent === undefined ? table.generation : newer(table.generation, recent.generation);
    this.generation = (last + 1) | 0;
  }

  /** `tag`: what the counts are of (a file of another tag is not read; see the layout above). */
  static open(file: string | undefined, maxEntries: number, tag = 0): CountStore {
    return file === undefined
      ? new CountStore(file, maxEntries, undefined, undefined, tag)
      : new CountStore(file, maxEntries, readTable(file, tag, true), readTable(recentFile(file), tag), tag);
  }

  /** Entries held: in the files and new this run (a count the recent file copied from the main one is counted twice until they merge). */
  get size(): number {
    return (this.table?.size ?? 0) + (this.recent?.size ?? 0) + this.added.size;
  }

  has(key: string): boolean {
    return this.added.has(key) || find(this.recent, key) >= 0 || find(this.table, key) >= 0;
  }

  /** A hit marks the entry as used by this run, which keeps it from eviction longer. */
  get(key: string): number | undefined {
    const added = this.added.get(key);
    if (added !== undefined) return added;
    const recent = this.recent;
    const r = find(recent, key);
    if (r >= 0 && recent !== undefined) {
      recent.entries[r + 1] = this.generation;
      return recent.entries[r];
    }
    const table = this.table;
    const e = find(table, key);
    if (e < 0 || table === undefined) return undefined;
    if (table.entries[e + 1] !== this.generation) this.usedInMain.push(e);
    table.entries[e + 1] = this.generation;
    return table.entries[e];
  }

  /** Stores the count of a key not held yet (a key's count never changes: it is its text's). */
  set(key: string, count: number): void {
    if (!Number.isInteger(count) || count < 0 || count > 0x7fffffff || this.has(key)) return;
    this.added.set(key, count);
    if (!storable(key)) return;
    this.toSave.keys.push(key);
    this.toSave.counts.push(count);
    this.toSave.hashes.push(fnv(key));
  }

  /** Writes the file (atomically) when a count was added this run; false when it could not. */
  save(): boolean {
    if (this.file === undefined) return true;
    const added = this.toSave;
    if (added.keys.length === 0) return true;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      const main = this.table?.size ?? 0;
      const recent = (this.recent?.size ?? 0) + this.usedInMain.length + added.keys.length;
      if (main >= RECENT_MIN_MAIN && recent <= main * RECENT_MAX_SHARE && main + recent <= this.maxEntries) {
        try {
          writeFileAtomic(recentFile(this.file), this.recentTable(added), { durable: false, cache: true });
          return true;
        } catch {
          // The recent file cannot be written (a folder of that name, …): merge into the main one instead.
        }
      }
      // The main table rewritten: all of it, when it was read in parts.
      if (this.table?.parts?.all() === false) return false;
      const merged = this.mergeRecent(added);
      writeFileAtomic(this.file, main + merged.keys.length > this.maxEntries ? this.evicted(merged) : this.extended(merged), { durable: false, cache: true });
      // Merged in (or foreign: another version's, unread): its counts are in the main file or not ours.
      rmSync(recentFile(this.file), { force: true });
      return true;
    } catch {
      return false;
    }
  }

  /** The recent file's table: its sound entries, copies of the main table's entries this run used, and the new ones. */
  private recentTable(added: Added): Buffer {
    const copies: Copy[] = [];
    const recent = this.recent;
    if (recent !== undefined) {
      for (let i = 0; i < recent.size; i++) if (sound(recent.entries, i * ENTRY_WORDS, recent.keys.length)) copies.push({ from: recent, e: i * ENTRY_WORDS });
    }
    const table = this.table;
    if (table !== undefined) for (const e of this.usedInMain) copies.push({ from: table, e });
    let keyBytes = keyBytesOf(added.keys);
    for (const { from, e } of copies) keyBytes += from.entries[e + 3] as number;
    const { file, bytes, keys } = layout(copies.length + added.keys.length, keyBytes, this.generation, this.tag);
    let at = 0;
    for (const [entry, { from, e }] of copies.entries()) at = copyEntry(file, keys, entry, from, e, at);
    keys.write(added.keys.join(''), at, 'latin1');
    putNewEntries(file, copies.length, added, this.generation, at);
    return bytes;
  }

  /**
   * The counts to add to the main table when the recent file merges into it: the recent file's sound
   * entries that the main table lacks (with their marks), then this run's. One it has takes its mark.
   */
  private mergeRecent(added: Added): Added {
    const recent = this.recent;
    if (recent === undefined) return added;
    const merged: Added = { keys: [], counts: [], generations: [] };
    for (let i = 0; i < recent.size; i++) {
      const r = i * ENTRY_WORDS;
      if (!sound(recent.entries, r, recent.keys.length)) continue;
      const offset = recent.entries[r + 2] as number;
      const key = Buffer.from(recent.keys.buffer, recent.keys.byteOffset + offset, recent.entries[r + 3] as number).toString('latin1');
      const e = find(this.table, key);
      if (e >= 0 && this.table !== undefined) this.table.entries[e + 1] = newer(this.table.entries[e + 1] as number, recent.entries[r + 1] as number);
      else {
        merged.keys.push(key);
        merged.counts.push(recent.entries[r] as number);
        merged.generations?.push(recent.entries[r + 1] as number);
      }
    }
    for (const [k, key] of added.keys.entries()) {
      merged.keys.push(key);
      merged.counts.push(added.counts[k] as number);
      merged.generations?.push(this.generation);
    }
    return merged;
  }

  /**
   * The file's tables as they are (with this run's marks), the new entries added: the file's parts,
   * in order. Its entries and keys are written from where they were read, not copied into a new
   * buffer first (a full cache is 11 MB: the copy cost about 5 ms of every save).
   */
  private extended(added: Added): Uint8Array[] {
    const table = this.table;
    const old = table?.size ?? 0;
    const oldKeyBytes = table?.keys.length ?? 0;
    const more = added.keys.length;
    const size = old + more;
    const slots = new Int32Array(slotsFor(size));
    // The slots as they are when they are sound and the new entries fit; else placed anew.
    if (table !== undefined && table.slots.length === slots.length && reusable(table.slots, old, more)) slots.set(table.slots);
    else {
      slots.fill(-1);
      for (let entry = 0; entry < old; entry++) place(slots, entry, table?.entries[entry * ENTRY_WORDS + 4] as number);
    }
    const part: Layout = { slots, entries: new Int32Array(more * ENTRY_WORDS), entryBase: old };
    // The new keys' bytes in one piece (Latin-1: a byte a character), after the file's own.
    const newKeys = Buffer.from(added.keys.join(''), 'latin1');
    putNewEntries(part, old, added, this.generation, oldKeyBytes);
    return [
      header(slots.length, size, this.generation, oldKeyBytes + newKeys.length, this.tag),
      bytesOf(slots),
      bytesOf(table?.entries ?? part.entries.subarray(0, 0)),
      bytesOf(part.entries),
      table?.keys ?? newKeys.subarray(0, 0),
      newKeys,
    ];
  }

  /**
   * The entries left once the oldest are dropped down to 90 % of `maxEntries`: the file's and the
   * added ones together, ordered by the generation of their last use, then by place (the file's
   * entries in file order, then the added ones).
   */
  private evicted(added: Added): Buffer {
    const table = this.table;
    const source = table?.entries ?? new Int32Array(0);
    const sourceKeys = table?.keys ?? new Uint8Array(0);
    const live: number[] = [];
    for (let i = 0; i < (table?.size ?? 0); i++) if (sound(source, i * ENTRY_WORDS, sourceKeys.length)) live.push(i);
    // Candidate c: the file's live entry c, or added entry c - live.length.
    const generationOf = (c: number): number =>
      c < live.length ? (source[(live[c] as number) * ENTRY_WORDS + 1] as number) : (added.generations?.[c - live.length] ?? this.generation);
    const order = oldestFirst(live.length + added.keys.length, generationOf, this.generation);
    const kept = order.slice(Math.max(0, order.length - (this.maxEntries - Math.floor(this.maxEntries / 10))));
    let keyBytes = 0;
    for (const c of kept)
      keyBytes += c < live.length ? (source[(live[c] as number) * ENTRY_WORDS + 3] as number) : (added.keys[c - live.length] as string).length;
    const { file, bytes, keys } = layout(kept.length, keyBytes, this.generation, this.tag);
    const from = { entries: source, keys: sourceKeys };
    let at = 0;
    for (const [entry, c] of kept.entries()) {
      if (c < live.length) {
        at = copyEntry(file, keys, entry, from, (live[c] as number) * ENTRY_WORDS, at);
        continue;
      }
      keys.write(added.keys[c - live.length] as string, at, 'latin1');
      at = putAdded(file, entry, added, c - live.length, this.generation, at);
    }
    return bytes;
  }
}

/** The table in `path`, or undefined when there is none or it is not one. `inParts`: a large one is read in parts (TableParts). */
function readTable(path: string, tag: number, inParts = false): Table | undefined {
  try {
    const { fd, size } = openRegularFile(path);
    let kept = false;
    try {
      if (inParts && size >= inPartsFrom) {
        const table = tableInParts(fd, size, tag);
        kept = table !== undefined;
        return table;
      }
      const bytes = Buffer.allocUnsafe(size);
      return decode(bytes.subarray(0, readFully(fd, bytes)), tag);
    } finally {
      if (!kept) closeSync(fd);
    }
  } catch {
    return undefined; // no cache yet, or an unreadable one: start empty
  }
}

/**
 * The table in the open file `fd` of `fileBytes` bytes, read in parts (its header and slots now, its
 * entries and keys as look-ups reach them: TableParts, which keeps the file open); undefined when it
 * is not one.
 */
function tableInParts(fd: number, fileBytes: number, tag: number): Table | undefined {
  const head = new Uint32Array(HEADER_WORDS);
  if (readFully(fd, new Uint8Array(head.buffer)) < head.byteLength) return undefined;
  const header = headerOf(head, tag, fileBytes);
  if (header === undefined) return undefined;
  const { slots: slotCount, size, generation, keyBytes } = header;
  const { slotsAt, entriesAt, keysAt } = offsets(slotCount, size);
  const slots = new Int32Array(slotCount);
  if (readFully(fd, new Uint8Array(slots.buffer), slotsAt) < slots.byteLength) return undefined;
  const entries = new Int32Array(size * ENTRY_WORDS);
  const keys = new Uint8Array(keyBytes);
  const parts = new TableParts(fd, { entries, keys, size }, { entries: entriesAt, keys: keysAt }, fileBytes);
  return { generation, slots, entries, keys, size, parts };
}

function recentFile(file: string): string {
  return `${file}.recent`;
}

/** The later of two generations (counted as eviction counts ages: a generation that wrapped past 2^31 is still the later). */
function newer(a: number, b: number): number {
  return ((b - a) | 0) > 0 ? b : a;
}

/** The first word of `key`'s entry in `table`, or -1 (also for a damaged entry or table). */
function find(table: Table | undefined, key: string): number {
  if (table === undefined || table.size === 0 || !storable(key)) return -1;
  const { slots, entries, keys, size } = table;
  const mask = slots.length - 1;
  const hash = fnv(key);
  // At most one probe a slot: a damaged table with no free slot still ends.
  for (let probe = 0, slot = hash & mask; probe < slots.length; probe++, slot = (slot + 1) & mask) {
    const entry = slots[slot] as number;
    if (entry < 0 || entry >= size) return -1;
    table.parts?.entry(entry);
    const e = entry * ENTRY_WORDS;
    if (entries[e + 4] !== hash || entries[e + 3] !== key.length || !sound(entries, e, keys.length)) continue;
    const offset = entries[e + 2] as number;
    let i = 0;
    while (i < key.length && keys[offset + i] === key.charCodeAt(i)) i++;
    if (i === key.length) return e;
  }
  return -1;
}

/** An entry of another table (its first word `e`) to write into a new one, words and key bytes. */
interface Copy {
  readonly from: Pick<Table, 'entries' | 'keys'>;
  readonly e: number;
}

/** Writes entry `e` of `from` as entry `entry` of `file` (its key's bytes at `at` in `keys`); returns where the next key goes. */
function copyEntry(file: Layout, keys: Buffer, entry: number, from: Copy['from'], e: number, at: number): number {
  const { entries } = from;
  const offset = entries[e + 2] as number;
  const length = entries[e + 3] as number;
  keys.set(from.keys.subarray(offset, offset + length), at);
  putEntry(file, entry, entries[e] as number, entries[e + 1] as number, at, length, entries[e + 4] as number);
  return at + length;
}

/**
 * Candidates 0 … n - 1, oldest first: by how many runs ago they were last used (counted back from
 * `generation`, so a generation that wrapped past 2^31 is still older), then by number.
 */
function oldestFirst(n: number, generationOf: (c: number) => number, generation: number): number[] {
  const age = (c: number): number => (generation - generationOf(c)) >>> 0;
  if (n >= 2 ** 21) return Array.from({ length: n }, (_, c) => c).sort((a, b) => age(b) - age(a) || a - b);
  // (age, number) as one number, oldest first when sorted up (both fit exactly below 2^53): no comparator call per step.
  const order = new Float64Array(n);
  for (let c = 0; c < n; c++) order[c] = (0xffffffff - age(c)) * 2 ** 21 + c;
  order.sort();
  return Array.from(order, (v) => v % 2 ** 21);
}

/** The slots of a file being written, and its entries from entry `entryBase` on (0 for a whole file). */
interface Layout {
  readonly slots: Int32Array;
  readonly entries: Int32Array;
  readonly entryBase: number;
}

/** The counts a save adds, in the order they were added: keys[k]'s count is counts[k]. */
interface Added {
  readonly keys: string[];
  readonly counts: number[];
  /** Each one's last use, when not all are this run's (counts merged in from the recent file). */
  readonly generations?: number[];
  /** Each key's hash (`fnv`), when known ahead. */
  readonly hashes?: number[];
}

/** The bytes of `keys` (Latin-1: a byte a character). */
function keyBytesOf(keys: readonly string[]): number {
  let bytes = 0;
  for (const key of keys) bytes += key.length;
  return bytes;
}

/** The header of a file of `slots` slots, `size` entries and `keyBytes` bytes of keys. */
function header(slots: number, size: number, generation: number, keyBytes: number, tag: number): Uint8Array {
  const words = new Uint32Array(HEADER_WORDS);
  words.set([MAGIC, VERSION, slots, size, generation >>> 0, keyBytes, tag >>> 0]);
  return bytesOf(words);
}

function bytesOf(view: Int32Array | Uint32Array): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** A whole file for `size` entries and `keyBytes` bytes of keys: the header written, every slot free. */
function layout(size: number, keyBytes: number, generation: number, tag: number): { readonly file: Layout; readonly bytes: Buffer; readonly keys: Buffer } {
  const slots = slotsFor(size);
  const { slotsAt, entriesAt, keysAt } = offsets(slots, size);
  const bytes = Buffer.alloc(keysAt + keyBytes);
  bytes.set(header(slots, size, generation, keyBytes, tag));
  const file: Layout = {
    slots: new Int32Array(bytes.buffer, bytes.byteOffset + slotsAt, slots).fill(-1),
    entries: new Int32Array(bytes.buffer, bytes.byteOffset + entriesAt, size * ENTRY_WORDS),
    entryBase: 0,
  };
  return { file, bytes, keys: bytes.subarray(keysAt, keysAt + keyBytes) };
}

/**
 * Writes the entries of `added` (their keys' bytes already at `at` and after, in order) as the file's
 * entries from `first` on, and gives each its slot.
 */
function putNewEntries(file: Layout, first: number, added: Added, generation: number, at: number): void {
  for (let k = 0; k < added.keys.length; k++) at = putAdded(file, first + k, added, k, generation, at);
}

/** Writes added entry `k` as entry `entry` of `file` (its key's bytes already at `at`); returns where the next key goes. */
function putAdded(file: Layout, entry: number, added: Added, k: number, generation: number, at: number): number {
  const key = added.keys[k] as string;
  putEntry(file, entry, added.counts[k] as number, added.generations?.[k] ?? generation, at, key.length, added.hashes?.[k] ?? fnv(key));
  return at + key.length;
}

/** Writes entry `entry`'s words (its key already at `at`), with its check, and gives it a slot. */
function putEntry(file: Layout, entry: number, count: number, generation: number, at: number, length: number, hash: number): void {
  const e = (entry - file.entryBase) * ENTRY_WORDS;
  const { entries } = file;
  entries[e] = count;
  entries[e + 1] = generation;
  entries[e + 2] = at;
  entries[e + 3] = length;
  entries[e + 4] = hash;
  entries[e + 5] = check(count, at, length, hash);
  place(file.slots, entry, hash);
}
