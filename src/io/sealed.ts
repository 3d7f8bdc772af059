import { sha1 } from './sha1.js';

/**
 * A JSON cache file as devs-ctx writes it: a first line holding the SHA-1 of the JSON that follows,
 * then the JSON. A file read back is used only when the two agree, so what was edited by hand or
 * written by another program (JSON that parses, but not what devs-ctx wrote: `{}` in place of a row)
 * is ignored like a damaged file, never shown or counted on. The finished rows and reports of
 * `analyze` and the states it reads grown transcripts on from are kept this way.
 */
const SEAL = 'devs-ctx cache, sha1 ';

/** The bytes of `value` as a sealed cache file. */
export function sealed(value: unknown): Buffer {
  const body = JSON.stringify(value);
  return Buffer.from(`${SEAL}${sha1(body)}\n${body}`);
}

/** The value of a sealed cache file; throws when the file is not one, or its JSON is not what was sealed. */
export function unsealed(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  const end = text.indexOf('\n');
  if (end < 0 || !text.startsWith(SEAL)) throw new Error('not a sealed cache file');
  const body = text.slice(end + 1);
  if (sha1(body) !== text.slice(SEAL.length, end)) throw new Error('a cache file changed since devs-ctx wrote it');
  return JSON.parse(body);
}
