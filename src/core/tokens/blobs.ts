import type { OpaqueBlob } from '../transcript.js';

/**
 * Provider rules for content that is not text to tokenize (SPEC §5: "images and opaque blobs are
 * estimated by the provider's rule, not tokenized as text"). Pure arithmetic over what the transcript
 * tells us (pixel size when the header could be read, the base64 length otherwise).
 */

/** Tokens an opaque blob is estimated to take in the context window. */
export function estimateBlobTokens(blob: OpaqueBlob): number {
  if (blob.recordedTokens !== undefined && blob.recordedTokens >= 0) return blob.recordedTokens;
  switch (blob.kind) {
    case 'image':
      return imageTokens(blob.provider, blob.width, blob.height);
    case 'document':
      return documentTokens(blob.provider, decodedBytes(blob.base64Length));
    case 'encrypted':
      return encryptedTokens(decodedBytes(blob.base64Length));
    default:
      return blob.kind satisfies never;
  }
}

/** Bytes behind a base64 payload of `base64Length` characters (padding ignored). */
export function decodedBytes(base64Length: number): number {
  return Math.floor((Math.max(0, base64Length) * 3) / 4);
}

function imageTokens(provider: OpaqueBlob['provider'], width?: number, height?: number): number {
  const known = width !== undefined && height !== undefined && width > 0 && height > 0;
  switch (provider) {
    case 'anthropic':
      return known ? anthropicImageTokens(width, height) : ANTHROPIC_IMAGE_MAX;
    case 'openai':
      return known ? openaiImageTokens(width, height) : OPENAI_IMAGE_MAX;
    case 'gemini':
      return known ? geminiImageTokens(width, height) : GEMINI_IMAGE_UNKNOWN;
    default:
      return provider satisfies never;
  }
}

// --- Anthropic -----------------------------------------------------------------------------------
// docs.anthropic.com/en/docs/build-with-claude/vision ("Calculate image costs"): tokens =
// (width px * height px) / 750. An image whose long edge exceeds 1568 px, or that would exceed about
// 1,600 tokens (~1.15 megapixels; 1092x1092 is their ~1,590 example), is first scaled down keeping its
// aspect ratio. So an image costs at most ~1,600 tokens, which is also the estimate for an unknown size.
const ANTHROPIC_LONG_EDGE = 1568;
const ANTHROPIC_MAX_PIXELS = 1_200_000; // 1,600 tokens * 750
export const ANTHROPIC_IMAGE_MAX = 1600;

export function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(1, ANTHROPIC_LONG_EDGE / Math.max(width, height), Math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)));
  const w = Math.max(1, Math.floor(width * scale));
  const h = Math.max(1, Math.floor(height * scale));
  return Math.min(ANTHROPIC_IMAGE_MAX, Math.ceil((w * h) / 750));
}

// --- OpenAI --------------------------------------------------------------------------------------
// platform.openai.com/docs/guides/images-vision ("Calculating costs", GPT-4o family, detail "high",
// which "auto" uses for anything larger than 512 px): scale to fit within 2048 x 2048, then scale so
// the shortest side is 768 px (only down), count the 512 px tiles; 170 tokens per tile plus 85.
// Unknown size: the largest a high-detail image can cost, 768 x 2048 = 2 x 4 tiles = 1,445.
export const OPENAI_IMAGE_MAX = 85 + 170 * 8;

export function openaiImageTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortest = Math.min(1, 768 / Math.min(w, h));
  w = Math.round(w * shortest);
  h = Math.round(h * shortest);
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

// --- Gemini --------------------------------------------------------------------------------------
// ai.google.dev/gemini-api/docs/tokens ("Multimodal tokens", Gemini 2.0+): an image with both sides
// <= 384 px is 258 tokens; a larger one is cropped and scaled into 768 x 768 tiles of 258 tokens each.
// Unknown size: a 1920 x 1080 screenshot, the typical image in a coding session: 3 x 2 tiles = 1,548.
const GEMINI_TILE_TOKENS = 258;
export const GEMINI_IMAGE_UNKNOWN = GEMINI_TILE_TOKENS * 6;

export function geminiImageTokens(width: number, height: number): number {
  if (width <= 384 && height <= 384) return GEMINI_TILE_TOKENS;
  return GEMINI_TILE_TOKENS * Math.ceil(width / 768) * Math.ceil(height / 768);
}

// --- Documents (PDF) -----------------------------------------------------------------------------
// No provider counts a PDF by its bytes; they count pages, which a transcript does not record. Pages
// are estimated as one per 75 KB of PDF (a typical text page with fonts; at least one page), then:
// - Anthropic (build-with-claude/pdf-support): each page is sent as an image plus its extracted text,
//   "typically 1,500 - 3,000 tokens per page"; the midpoint, 2,250, is used.
// - Gemini (ai.google.dev/gemini-api/docs/document-processing): "each document page is equivalent to
//   258 tokens".
// - OpenAI (platform.openai.com/docs/guides/pdf-files): the page image and its text go to the model;
//   a letter page at high detail is 768 x 994 = 4 tiles = 765 tokens, plus ~750 tokens of text: 1,515.
const PDF_BYTES_PER_PAGE = 75_000;
const DOCUMENT_TOKENS_PER_PAGE = { anthropic: 2250, openai: 1515, gemini: 258 } as const;

function estimatePdfPages(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / PDF_BYTES_PER_PAGE));
}

function documentTokens(provider: OpaqueBlob['provider'], bytes: number): number {
  return estimatePdfPages(bytes) * DOCUMENT_TOKENS_PER_PAGE[provider];
}

// --- Encrypted -----------------------------------------------------------------------------------
// Encrypted reasoning (Codex `encrypted_content`, Anthropic redacted thinking) has no published rule.
// When the file does not record its tokens: a fixed envelope of ~700 bytes that carries no reasoning,
// then ~4.3 bytes per token. Fitted on a real Codex 0.40 rollout, where each item's
// reasoning_output_tokens ≈ 0.234 × decoded bytes − 179 (an empty reasoning still has ~700 bytes).
const ENCRYPTED_ENVELOPE_BYTES = 700;
const ENCRYPTED_BYTES_PER_TOKEN = 4.3;

function encryptedTokens(bytes: number): number {
  return Math.ceil(Math.max(0, bytes - ENCRYPTED_ENVELOPE_BYTES) / ENCRYPTED_BYTES_PER_TOKEN);
}
