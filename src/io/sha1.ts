import * as crypto from 'node:crypto';

/** Node 20.12 and later hash a string in one call (`crypto.hash`), without a Hash object per text. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;

/** The SHA-1 of a string's UTF-8 bytes, base64url: the token-count cache's keys, the skeletons' block hashes. */
export const sha1 = oneShot
  ? (text: string): string => oneShot('sha1', text, 'base64url')
  : (text: string): string => crypto.createHash('sha1').update(text).digest('base64url');
