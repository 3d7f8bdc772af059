import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sealed, unsealed } from '../src/io/sealed.js';

// A sealed cache file is used only as devs-ctx wrote it: its first line's SHA-1 must be that of the
// bytes after it, whatever they decode to.

const value = { version: 2, files: { '/p/😀-é.jsonl': { row: { turns: 3, text: 'a\uFFFDb', lone: '\uD800' } } } };

test('sealed: a sealed value reads back as it was (non-BMP characters, U+FFFD, a lone surrogate escaped)', () => {
  const bytes = Buffer.concat(sealed(value));
  assert.deepEqual(unsealed(bytes), value);
  assert.match(bytes.subarray(0, bytes.indexOf(10)).toString('latin1'), /^devs-ctx cache, sha1 [\w-]{27}$/);
});

test('sealed: any byte of the JSON changed is refused, also a change that decodes to the same text', () => {
  const bytes = Buffer.concat(sealed(value));
  const body = bytes.indexOf(10) + 1;
  for (let at = body; at < bytes.length; at++) {
    const changed = Buffer.from(bytes);
    changed[at] = (changed[at] as number) ^ 0x20;
    assert.throws(() => unsealed(changed), Error, `byte ${at} changed`);
  }
  // U+FFFD as written (EF BF BD), replaced by one invalid byte: decoded, both are U+FFFD.
  const replacement = bytes.indexOf(Buffer.from('\uFFFD'), body);
  assert.ok(replacement > 0);
  const invalid = Buffer.concat([bytes.subarray(0, replacement), Buffer.from([0xff]), bytes.subarray(replacement + 3)]);
  assert.equal(invalid.subarray(body).toString('utf8'), bytes.subarray(body).toString('utf8'));
  assert.throws(() => unsealed(invalid));
});

test('sealed: plain JSON, a damaged or missing seal line, and nothing at all are refused', () => {
  const [seal, json] = sealed(value);
  for (const bytes of [
    json,
    Buffer.alloc(0),
    seal,
    Buffer.concat([seal, json, Buffer.from('\n')]),
    Buffer.concat([Buffer.from(seal.toString('latin1').toUpperCase()), json]),
    Buffer.concat([seal.subarray(0, seal.length - 1), Buffer.from('\r\n'), json]),
    Buffer.concat([Buffer.from('\uFEFF'), seal, json]),
    Buffer.concat([seal, seal, json]),
  ]) {
    assert.throws(() => unsealed(bytes));
  }
});
