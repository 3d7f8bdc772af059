import { InvalidTranscriptError, UnknownFormatError } from '../core/errors.js';
import type { ParsedDocument } from '../io/jsonl.js';
import { claudeCodeAdapter } from './claude-code/read.js';
import { codexAdapter } from './codex/read.js';
import { devsAdapter } from './devs/read.js';
import { geminiAdapter } from './gemini/read.js';
import { openaiChatAdapter } from './openai-chat/read.js';
import { openhandsAdapter } from './openhands/read.js';
import { claudeCodeWriter } from './claude-code/write.js';
import { codexWriter } from './codex/write.js';
import { devsWriter } from './devs/write.js';
import { geminiWriter } from './gemini/write.js';
import { openaiChatWriter } from './openai-chat/write.js';
import { openhandsWriter } from './openhands/write.js';
import { FORMAT_NAMES } from './types.js';
import { DETECT_SAMPLE, detectionSample } from './shared/json.js';
import type { FormatAdapter, FormatName, FormatWriter, Transcript } from './types.js';

export type { FormatAdapter, FormatName, Transcript, TranscriptEntry } from './types.js';
export { FORMAT_NAMES } from './types.js';

/** Every adapter, in the order ties are broken (the native format first). */
export const ADAPTERS: readonly FormatAdapter[] = [devsAdapter, claudeCodeAdapter, codexAdapter, geminiAdapter, openaiChatAdapter, openhandsAdapter];

/** Every format's writer (the other half of its adapter): edit → lines, and a refresh appended. */
const WRITERS: Readonly<Record<FormatName, FormatWriter>> = {
  devs: devsWriter,
  'claude-code': claudeCodeWriter,
  codex: codexWriter,
  gemini: geminiWriter,
  'openai-chat': openaiChatWriter,
  openhands: openhandsWriter,
};

export function writerFor(name: FormatName): FormatWriter {
  return WRITERS[name];
}

export function adapterFor(name: FormatName): FormatAdapter {
  const adapter = ADAPTERS.find((a) => a.name === name);
  if (!adapter) throw new Error(`no adapter registered for ${name}`);
  return adapter;
}

export interface Detection {
  readonly adapter: FormatAdapter;
  readonly score: number;
}

/** Picks the adapter most sure of the document; an unrecognised document is an invalid transcript. */
export function detectFormat(doc: ParsedDocument): Detection {
  let best: Detection | undefined;
  for (const adapter of ADAPTERS) {
    const score = adapter.detect(doc);
    if (score > 0 && (!best || score > best.score)) best = { adapter, score };
  }
  if (!best) {
    const parsed = doc.records.some((r) => r.values.length > 0) || doc.kind === 'json-document';
    if (parsed)
      throw new UnknownFormatError(
        `${doc.path}: not a transcript format devs-ctx knows`,
        `known formats: ${FORMAT_NAMES.join(', ')}; pass --format to force one`,
      );
    throw new InvalidTranscriptError(`${doc.path}: nothing in it parses as JSON`, 'is this a JSONL transcript? each line should be one JSON object');
  }
  return best;
}

/**
 * Whether lines appended to `doc` cannot change which format it is detected as: every adapter has
 * seen all of the document its `detect` reads (most read the first DETECT_SAMPLE values).
 */
export function detectionSettled(doc: ParsedDocument): boolean {
  const sampleFull = detectionSample(doc).length >= DETECT_SAMPLE;
  return ADAPTERS.every((adapter) => (adapter.detectionSettled ? adapter.detectionSettled(doc) : sampleFull));
}

/**
 * Reads a parsed document as a transcript, with the forced format or the detected one. A forced
 * format that finds nothing in a document it does not recognise is an invalid transcript, not an
 * empty one: the error names the format the document looks like.
 */
export function readTranscript(doc: ParsedDocument, format?: FormatName): Transcript {
  if (!format) return detectFormat(doc).adapter.read(doc);
  const adapter = adapterFor(format);
  const transcript = adapter.read(doc);
  if (transcript.entries.length === 0 && adapter.detect(doc) === 0) {
    let looksLike: string | undefined;
    try {
      looksLike = detectFormat(doc).adapter.name;
    } catch {
      looksLike = undefined;
    }
    throw new InvalidTranscriptError(
      `${doc.path}: no ${format} turns in this file${looksLike ? `; it looks like ${looksLike}` : ''}`,
      looksLike ? `try --format ${looksLike}, or leave --format out to detect it` : 'leave --format out to detect the format',
    );
  }
  return transcript;
}
