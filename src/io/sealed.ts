import { createHash } from 'node:crypto';

/**
 * A JSON cache file as devs-ctx writes it: a first line holding the SHA-1 of the bytes that follow,
 * then those bytes, the JSON. A file read back is used only when the two agree, so what was edited
 * by hand or by a program that does not know the seal (JSON that parses, but not what devs-ctx wrote:
 * `{}` in place of a row) is ignored like a damaged file, never shown or counted on. It guards
 * against accidents, not against forgery: the cache is the user's own. The finished rows and reports
 * of `analyze` and the states it reads grown transcripts on from are kept this way.
 */
const SEAL = 'devs-ctx cache, sha1 ';
const SEAL_BYTES = Buffer.from(SEAL, 'latin1');
/** A SHA-1 in base64url: the first line is the seal's words, these characters and a line feed. */
const DIGEST_CHARS = 27;

function digest(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('base64url');
}

/** The bytes of `value` as a sealed cache file: the seal's line, then the JSON (two parts, so that the JSON is not copied). */
export function sealed(value: unknown): [Buffer, Buffer] {
  return sealedJson(JSON.stringify(value));
}

/** `sealed`, of a value already in JSON (`json` must be valid JSON: it is read back with JSON.parse). */
export function sealedJson(json: string): [Buffer, Buffer] {
  const body = Buffer.from(json);
  return [Buffer.from(`${SEAL}${digest(body)}\n`), body];
}

/** The value of a sealed cache file; throws when the file is not one, or its bytes are not the ones sealed. */
export function unsealed(bytes: Buffer): unknown {
  return JSON.parse(unsealedBytes(bytes).toString('utf8'));
}

/** `unsealed`, as the bytes of the JSON sealed (neither decoded nor parsed). */
export function unsealedBytes(bytes: Buffer): Buffer {
  const end = SEAL.length + DIGEST_CHARS;
  if (!bytes.subarray(0, SEAL.length).equals(SEAL_BYTES) || bytes[end] !== 10) throw new Error('not a sealed cache file');
  const body = bytes.subarray(end + 1);
  if (digest(body) !== bytes.toString('latin1', SEAL.length, end)) throw new Error('a cache file changed since devs-ctx wrote it');
  return body;
}
