/**
 * Pixel size of a base64-encoded image, read from its header (PNG IHDR, JPEG SOFn, GIF logical
 * screen, WebP VP8/VP8L/VP8X), so image tokens can be estimated by the provider's rule without
 * decoding the image. Only a prefix of the base64 is decoded.
 */

/** How much of the base64 is decoded when looking for a JPEG frame header (EXIF can come first). */
const JPEG_SCAN_BASE64_CHARS = 256 * 1024;
/** Enough for the PNG, GIF and WebP headers. */
const HEADER_BASE64_CHARS = 64;

export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

/** Width and height of a base64 PNG/JPEG/GIF/WebP (a `data:` URL is accepted), or undefined. */
export function imageSize(base64: string): ImageSize | undefined {
  let text = base64;
  if (text.startsWith('data:')) {
    const comma = text.indexOf(',');
    if (comma === -1) return undefined;
    text = text.slice(comma + 1);
  }
  const head = decodePrefix(text, HEADER_BASE64_CHARS);
  if (head.length < 10) return undefined;
  if (isPng(head)) return pngSize(head);
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46 && head[3] === 0x38) return gifSize(head);
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return webpSize(head);
  if (head[0] === 0xff && head[1] === 0xd8) return jpegSize(decodePrefix(text, JPEG_SCAN_BASE64_CHARS));
  return undefined;
}

/** Decodes at most `chars` base64 characters (rounded down to a whole 4-character group). */
function decodePrefix(text: string, chars: number): Buffer {
  const take = Math.min(text.length, chars);
  return Buffer.from(text.slice(0, take - (take % 4)), 'base64');
}

function ascii(bytes: Buffer, start: number, end: number): string {
  return bytes.subarray(start, end).toString('latin1');
}

function positive(width: number, height: number): ImageSize | undefined {
  return width > 0 && height > 0 ? { width, height } : undefined;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function isPng(bytes: Buffer): boolean {
  return PNG_SIGNATURE.every((b, i) => bytes[i] === b);
}

function pngSize(bytes: Buffer): ImageSize | undefined {
  // Signature (8), chunk length (4), "IHDR" (4), width (4, big-endian), height (4).
  if (bytes.length < 24 || ascii(bytes, 12, 16) !== 'IHDR') return undefined;
  return positive(bytes.readUInt32BE(16), bytes.readUInt32BE(20));
}

function gifSize(bytes: Buffer): ImageSize | undefined {
  // "GIF87a"/"GIF89a", then the logical screen width and height (16-bit little-endian).
  return positive(bytes.readUInt16LE(6), bytes.readUInt16LE(8));
}

function webpSize(bytes: Buffer): ImageSize | undefined {
  if (bytes.length < 30) return undefined;
  const chunk = ascii(bytes, 12, 16);
  if (chunk === 'VP8X') {
    // Canvas width-1 and height-1, 24-bit little-endian, after 4 bytes of flags.
    return positive(bytes.readUIntLE(24, 3) + 1, bytes.readUIntLE(27, 3) + 1);
  }
  if (chunk === 'VP8 ') {
    // Frame tag (3), start code 9d 01 2a, then 14-bit width and height.
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
    return positive(bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    // Signature 0x2f, then width-1 (14 bits) and height-1 (14 bits), little-endian bit order.
    if (bytes[20] !== 0x2f) return undefined;
    const bits = bytes.readUInt32LE(21);
    return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  return undefined;
}

function jpegSize(bytes: Buffer): ImageSize | undefined {
  let i = 2;
  while (i + 3 < bytes.length) {
    if (bytes[i] !== 0xff) return undefined;
    const marker = bytes[i + 1] ?? 0;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    // Markers without a length: TEM, RSTn, SOI, EOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) {
      i += 2;
      continue;
    }
    const length = bytes.readUInt16BE(i + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      // Length (2), precision (1), height (2), width (2).
      if (i + 9 > bytes.length) return undefined;
      return positive(bytes.readUInt16BE(i + 7), bytes.readUInt16BE(i + 5));
    }
    if (length < 2) return undefined;
    i += 2 + length;
  }
  return undefined;
}
