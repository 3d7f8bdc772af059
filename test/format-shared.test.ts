import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentPartsText } from '../src/formats/shared/content-parts.js';
import { lastAssistantPending, unpairedToolIds } from '../src/formats/shared/tool-pairing.js';

const never = (): boolean => false;

test('tool pairing: an answer before its call is unpaired when the call must come earlier, not when it may be anywhere', () => {
  const turns = [
    { calls: [], answers: ['a'] },
    { calls: ['a'], answers: [] },
  ];
  assert.deepEqual(unpairedToolIds(turns, { callBefore: 'earlier', pending: never }), [{ kind: 'answer', id: 'a', at: 0 }]);
  assert.deepEqual(unpairedToolIds(turns, { callBefore: 'anywhere', pending: never }), []);
});

test('tool pairing: a call and its answer in one turn pair; answers come first, then calls, each in turn order', () => {
  const turns = [
    { calls: ['x'], answers: ['x'] },
    { calls: ['b', 'c'], answers: [] },
    { calls: [], answers: ['z'] },
  ];
  assert.deepEqual(unpairedToolIds(turns, { callBefore: 'earlier', pending: never }), [
    { kind: 'answer', id: 'z', at: 2 },
    { kind: 'call', id: 'b', at: 1 },
    { kind: 'call', id: 'c', at: 1 },
  ]);
});

test('tool pairing: the calls of the last assistant turn may still be running', () => {
  const turns = [
    { calls: ['a'], answers: [] },
    { calls: [], answers: [] },
    { calls: ['b'], answers: [] },
    { calls: [], answers: [] },
  ];
  const pending = lastAssistantPending(['assistant', 'user', 'assistant', 'user']);
  assert.deepEqual(unpairedToolIds(turns, { callBefore: 'earlier', pending }), [{ kind: 'call', id: 'a', at: 0 }]);
});

test('content parts: strings, text and refusal parts joined by newlines; media parts are handed over', () => {
  const media: unknown[] = [];
  const text = contentPartsText(['plain', { type: 'text', text: 'typed' }, { refusal: 'no' }, { type: 'image', url: 'x' }, 7], (part) => media.push(part));
  assert.equal(text, 'plain\ntyped\nno');
  assert.deepEqual(media, [{ type: 'text', text: 'typed' }, { refusal: 'no' }, { type: 'image', url: 'x' }]);
  assert.equal(
    contentPartsText('as is', () => assert.fail('no parts')),
    'as is',
  );
  assert.equal(
    contentPartsText(null, () => assert.fail('no parts')),
    '',
  );
  assert.equal(
    contentPartsText({ text: 'one object' }, () => assert.fail('no parts')),
    '',
  );
});
