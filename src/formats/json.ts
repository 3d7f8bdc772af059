import type { ParsedDocument } from '../io/jsonl.js';

/** Small helpers every adapter needs to read untrusted JSON without throwing. */

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON text of a value; a value nested too deeply for the engine gives a placeholder, never a throw. */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '[value nested too deeply to read]';
  }
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
