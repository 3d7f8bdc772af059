import { isRecord, type JsonObject } from './json.js';

/**
 * The text of an OpenAI-style content list, joined by newlines: a string as it is, a part that is a
 * string as it is, an object part's `text` (or `refusal`). `media` sees every object part, so the
 * format can turn its images, files and encrypted parts into blobs (Chat Completions and the
 * Responses API name them differently). Anything that is not a string or a list has no text.
 */
export function contentPartsText(content: unknown, media: (part: JsonObject) => void): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') {
      texts.push(part);
      continue;
    }
    if (!isRecord(part)) continue;
    const text = typeof part['text'] === 'string' ? part['text'] : typeof part['refusal'] === 'string' ? part['refusal'] : undefined;
    if (text !== undefined) texts.push(text);
    media(part);
  }
  return texts.join('\n');
}
