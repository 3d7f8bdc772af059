import { isRecord, type JsonObject } from '../shared/json.js';

/** A rollout line `{timestamp, type, payload}` (timestamp is not checked: newer builds trim it). */
export function isEnvelope(value: unknown): value is JsonObject & { type: string } {
  return isRecord(value) && typeof value['type'] === 'string' && 'payload' in value;
}
