import type { ParsedDocument } from '../../io/jsonl.js';

/** Small helpers every adapter needs to read untrusted JSON without throwing. */

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields of `record` among `keys`, as they are (a line's skeleton keeps these). */
export function pick(record: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) if (key in record) out[key] = record[key];
  return out;
}

/** A value of the same JSON kind as `value`, with nothing in it (a line's skeleton keeps a value's kind, not its text). */
export function sameKind(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (Array.isArray(value)) return [];
  switch (typeof value) {
    case 'object':
      return {};
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return '';
  }
}

/**
 * JSON text of a value, never a throw. `JSON.stringify` recurses and overflows the stack on a value
 * nested some thousands of levels deep (which `JSON.parse` reads fine): such a value is written by
 * an explicit stack instead, to the same text, so its tokens are counted rather than lost.
 */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (error) {
    if (!(error instanceof RangeError)) return '[value that cannot be written as JSON]';
    return deepJson(value);
  }
}

/** JSON.stringify without recursion, for the plain values JSON.parse gives (objects, arrays, scalars). */
export function deepJson(root: unknown): string {
  const out: string[] = [];
  type Frame = { readonly array: readonly unknown[] | undefined; readonly entries: readonly [string, unknown][] | undefined; next: number; wrote: boolean };
  const stack: Frame[] = [];
  // Writes a scalar, or opens a container (pushing its frame); false when the value is to be skipped
  // (undefined, a function: as JSON.stringify leaves them out of objects).
  const open = (value: unknown, inArray: boolean): boolean => {
    if (value !== null && typeof value === 'object') {
      const withToJson = value as { toJSON?: unknown };
      if (typeof withToJson.toJSON === 'function') {
        out.push(JSON.stringify(value) ?? 'null');
        return true;
      }
      if (Array.isArray(value)) {
        out.push('[');
        stack.push({ array: value, entries: undefined, next: 0, wrote: false });
      } else {
        out.push('{');
        stack.push({ array: undefined, entries: Object.entries(value), next: 0, wrote: false });
      }
      return true;
    }
    const text = JSON.stringify(value);
    if (text === undefined) {
      if (inArray) out.push('null');
      return inArray;
    }
    out.push(text);
    return true;
  };
  if (!open(root, false)) return '';
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.array) {
      if (frame.next >= frame.array.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (frame.next > 0) out.push(',');
      const item = frame.array[frame.next++];
      open(item, true);
    } else if (frame.entries) {
      if (frame.next >= frame.entries.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const [key, item] = frame.entries[frame.next++] as [string, unknown];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      if (frame.wrote) out.push(',');
      frame.wrote = true;
      out.push(`${JSON.stringify(key)}:`);
      open(item, false);
    }
  }
  return out.join('');
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A finite number, or 0. */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Makes `id` unique among `ids` (`id~2`, `id~3`…) and records it. */
export function uniqueId(id: string, ids: Set<string>): string {
  let candidate = id;
  for (let n = 2; ids.has(candidate); n++) candidate = `${id}~${n}`;
  ids.add(candidate);
  return candidate;
}

/** How many values the adapters look at to detect a format. */
export const DETECT_SAMPLE = 50;

/** The first values of a JSONL document (glued lines give several), for format detection. */
export function detectionSample(doc: ParsedDocument, limit = DETECT_SAMPLE): unknown[] {
  const sample: unknown[] = [];
  for (const record of doc.records) {
    for (const value of record.values) {
      if (sample.length >= limit) return sample;
      sample.push(value);
    }
  }
  return sample;
}
