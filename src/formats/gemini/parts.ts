import type { OpaqueBlob } from '../types.js';
import { isRecord, type JsonObject, safeJson } from '../shared/json.js';

/** The text and blobs of a Gemini part list: what the reader makes a turn of, and what a line's skeleton tells apart. */
export interface PartsText {
  readonly text: string;
  readonly blobs: OpaqueBlob[];
}

/** Text of a `PartListUnion` (string, part, or list of strings and parts); inline data becomes blobs. */
export function partsText(content: unknown): PartsText {
  const texts: string[] = [];
  const blobs: OpaqueBlob[] = [];
  const visit = (part: unknown): void => {
    if (typeof part === 'string') {
      texts.push(part);
      return;
    }
    if (Array.isArray(part)) {
      part.forEach(visit);
      return;
    }
    if (!isRecord(part)) return;
    if (part['thought'] === true) return;
    if (typeof part['text'] === 'string') texts.push(part['text']);
    const inline = part['inlineData'];
    if (isRecord(inline)) blobs.push(blobOf(inline, typeof inline['data'] === 'string' ? inline['data'].length : 0));
    const file = part['fileData'];
    if (isRecord(file)) blobs.push(blobOf(file, 0));
    if (isRecord(part['functionCall'])) texts.push(safeJson(part['functionCall']));
    if (isRecord(part['functionResponse'])) texts.push(functionResponseText(part['functionResponse']));
  };
  visit(content);
  return { text: texts.join('\n'), blobs };
}

function blobOf(data: JsonObject, base64Length: number): OpaqueBlob {
  const mediaType = typeof data['mimeType'] === 'string' ? data['mimeType'] : undefined;
  return {
    kind: mediaType?.startsWith('image/') ? 'image' : 'document',
    provider: 'gemini',
    base64Length,
    ...(mediaType !== undefined ? { mediaType } : {}),
  };
}

/** `response.output` when it is text, else the response as JSON (errors: `{"error": …}`). */
function functionResponseText(functionResponse: JsonObject): string {
  const response = functionResponse['response'];
  if (isRecord(response) && typeof response['output'] === 'string') return response['output'];
  return safeJson(response ?? null);
}
