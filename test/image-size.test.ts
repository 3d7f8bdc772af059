import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageSize } from '../src/formats/shared/image-size.js';

const b64 = (...parts: (number[] | Buffer)[]): string => Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p)))).toString('base64');
const u16be = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const u16le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff];
const u32be = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const u24le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff];
const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const zeros = (n: number): number[] => new Array<number>(n).fill(0);

const png = (w: number, h: number): string =>
  b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], u32be(13), ascii('IHDR'), u32be(w), u32be(h), [8, 6, 0, 0, 0], zeros(8));

/** SOI, an APP1 segment of `appBytes` (as EXIF would be), then a baseline SOF0 frame header. */
const jpeg = (w: number, h: number, appBytes = 16, marker = 0xc0): string =>
  b64(
    [0xff, 0xd8],
    [0xff, 0xe1],
    u16be(appBytes + 2),
    zeros(appBytes),
    [0xff, marker],
    u16be(17),
    [8],
    u16be(h),
    u16be(w),
    [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
    zeros(8),
  );

const gif = (w: number, h: number): string => b64(ascii('GIF89a'), u16le(w), u16le(h), [0xf7, 0, 0], zeros(8));

const riff = (chunk: string, body: number[]): string => b64(ascii('RIFF'), zeros(4), ascii('WEBP'), ascii(chunk), u32be(0), body, zeros(8));
const webpVp8x = (w: number, h: number): string => riff('VP8X', [...zeros(4), ...u24le(w - 1), ...u24le(h - 1)]);
const webpVp8 = (w: number, h: number): string => riff('VP8 ', [0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a, ...u16le(w), ...u16le(h)]);
const webpVp8l = (w: number, h: number): string => {
  const bits = ((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14);
  return riff('VP8L', [0x2f, bits & 0xff, (bits >>> 8) & 0xff, (bits >>> 16) & 0xff, (bits >>> 24) & 0xff]);
};

const cases: [string, string, { width: number; height: number } | undefined][] = [
  ['PNG IHDR', png(640, 480), { width: 640, height: 480 }],
  ['PNG as a data: URL', `data:image/png;base64,${png(3, 2)}`, { width: 3, height: 2 }],
  ['JPEG SOF0 after an APP1 segment', jpeg(300, 200), { width: 300, height: 200 }],
  ['JPEG progressive (SOF2) after a 60 KB EXIF block', jpeg(4032, 3024, 60_000, 0xc2), { width: 4032, height: 3024 }],
  ['GIF logical screen', gif(17, 9), { width: 17, height: 9 }],
  ['WebP VP8X canvas', webpVp8x(1920, 1080), { width: 1920, height: 1080 }],
  ['WebP VP8 (lossy)', webpVp8(320, 240), { width: 320, height: 240 }],
  ['WebP VP8L (lossless)', webpVp8l(500, 400), { width: 500, height: 400 }],
  ['not an image', Buffer.from('hello, this is plain text and not an image at all').toString('base64'), undefined],
  ['empty', '', undefined],
  ['PNG cut before IHDR', png(640, 480).slice(0, 12), undefined],
  ['PNG with zero width', png(0, 10), undefined],
  ['JPEG without a frame header', b64([0xff, 0xd8, 0xff, 0xe0], u16be(4), [0, 0], [0xff, 0xd9], zeros(8)), undefined],
  ['bad data: URL', 'data:image/png;base64', undefined],
];

for (const [name, input, expected] of cases) {
  test(`imageSize: ${name}`, () => {
    assert.deepEqual(imageSize(input), expected);
  });
}
