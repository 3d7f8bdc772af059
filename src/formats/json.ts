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
