import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { parseDocument, readDocument, serializeDocument, splitGluedValues } from '../src/io/jsonl.js';
import type { RawRecord } from '../src/io/jsonl.js';

const doc = (text: string | Buffer) => parseDocument(Buffer.isBuffer(text) ? text : Buffer.from(text), { path: 'x.jsonl', keepRaw: true });
test('a document read whole keeps the bytes it was read from (`bytes`, the same buffer); its records serialize to them', async () => {
  const bytes = Buffer.from('{"a":1}\r\n\n{"a":2}\n{"a":3}');
  const d = doc(bytes);
  assert.equal(d.bytes, bytes, 'the same buffer');
  assert.deepEqual(serializeDocument(d), bytes);
  // Records of its own (one dropped) serialize as they are, whatever it was read from.
  assert.deepEqual(serializeDocument({ ...d, records: d.records.slice(1) }), bytes.subarray(9));
  // Read without keepRaw, or from a stream, nothing is kept.
  assert.equal(parseDocument(bytes, { path: 'x.jsonl' }).bytes, undefined);
  assert.equal((await readDocument(Readable.from([bytes]), { path: '-', keepRaw: true })).bytes, undefined);
});

test('numbers lines and keeps each line terminator', () => {
  const d = doc('{"a":1}\r\n\n{"a":2}\n{"a":3}');
  assert.deepEqual(
    d.records.map((r) => [r.line, r.eol, r.blank]),
    [
      [1, '\r\n', false],
      [2, '\n', true],
      [3, '\n', false],
      [4, '', false],
    ],
  );
  assert.deepEqual(
    d.records.flatMap((r) => r.values),
    [{ a: 1 }, { a: 2 }, { a: 3 }],
  );
  assert.equal(d.issues.length, 0);
});

test('strips a BOM for parsing and puts it back when writing', () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n')]);
  const d = doc(bytes);
  assert.equal(d.bom, true);
  assert.deepEqual(d.records[0]?.values, [{ a: 1 }]);
  assert.deepEqual(serializeDocument(d), bytes);
});

test('a broken line becomes an issue with its line number; the rest is read', () => {
  const d = doc('{"a":1}\n{"a":\nnot json\n{"a":2}\n');
  assert.deepEqual(
    d.issues.map((i) => [i.line, i.severity]),
    [
      [2, 'error'],
      [3, 'error'],
    ],
  );
  assert.match(d.issues[1]?.reason ?? '', /does not start with \{ or \[/);
  assert.deepEqual(
    d.records.flatMap((r) => r.values),
    [{ a: 1 }, { a: 2 }],
  );
});

test('two objects glued on one line are split and reported', () => {
  const d = doc('{"a":1}{"b":"}{"}\n');
  assert.deepEqual(d.records[0]?.values, [{ a: 1 }, { b: '}{' }]);
  assert.equal(d.issues[0]?.line, 1);
  assert.equal(d.issues[0]?.severity, 'warning');
  assert.match(d.issues[0]?.reason ?? '', /glued/);
});

test('a glued split is only made when every part parses', () => {
  assert.equal(splitGluedValues('{"a":1}{"b":'), undefined);
  assert.equal(splitGluedValues('{"a":1} x {"b":2}'), undefined);
  assert.deepEqual(splitGluedValues('{"a":1} {"b":2}'), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(splitGluedValues('[1]{"x":"\\"}{"}'), [[1], { x: '"}{' }]);
});

test('a pretty-printed JSON document named .jsonl is read as one document', () => {
  const text = JSON.stringify({ sessionId: 's', messages: [{ id: 1 }, { id: 2 }] }, null, 2);
  const d = doc(`${text}\n`);
  assert.equal(d.kind, 'json-document');
  assert.deepEqual(d.document, { sessionId: 's', messages: [{ id: 1 }, { id: 2 }] });
  assert.equal(d.issues.length, 0);
  assert.equal(serializeDocument(d).toString(), `${text}\n`);
});

test('a pretty-printed document is parsed whole, once, not tried line by line (a 66 MB report took 35 s and 2 GB that way)', async () => {
  const text = `${JSON.stringify({ rows: Array.from({ length: 2000 }, (_, i) => ({ file: `s${i}.jsonl`, tokens: i })) }, null, 2)}\n`;
  const parse = JSON.parse;
  let calls = 0;
  JSON.parse = ((...args: Parameters<typeof JSON.parse>) => {
    calls++;
    return parse(...args);
  }) as typeof JSON.parse;
  let whole: ReturnType<typeof doc>;
  let streamed: Awaited<ReturnType<typeof readDocument>>;
  try {
    whole = doc(text);
    streamed = await readDocument(Readable.from([Buffer.from(text.slice(0, 1000)), Buffer.from(text.slice(1000))]), { path: '-', keepRaw: true });
  } finally {
    JSON.parse = parse;
  }
  // Each read: the first line, tried alone, then the whole document.
  assert.equal(calls, 4, `JSON.parse called ${calls} times for ${text.split('\n').length} lines`);
  for (const d of [whole, streamed]) {
    assert.equal(d.kind, 'json-document');
    assert.equal(d.issues.length, 0);
    assert.equal(d.records.length, text.split('\n').length - 1);
    assert.deepEqual(
      d.records.map((r) => r.line),
      d.records.map((_, i) => i + 1),
    );
    assert.equal(serializeDocument(d).toString(), text);
  }
});

test('a JSON document keeps, for each line, the values and blankness that line has read alone (a format may read them)', () => {
  const lines = [
    '[',
    '  {"id":"a","role":"user","type":"message","content":"x"},',
    '  {"id":"b"}',
    '  ,"alone"',
    '  , "a string"',
    '  ,42',
    '  -1.5e3',
    '  ,true',
    '  ,null',
    '  ,false',
    '  , {"k": "v",',
    '  "key": "not alone",',
    '  "n": 1',
    '  }',
    '  ,[1,',
    '  2]',
    '\t \r',
    '',
    '  ,"\u00e9t\u00e9"',
    '  ,{}',
    '  ,[]',
    '  ,',
    '  "s"',
    '  ,',
    '  -7',
    '  ,',
    '  true',
    '  ,',
    '  null',
    '  ,',
    '  [1] ',
    ']',
  ];
  const text = `${lines.join('\n')}\n`.replace('  -1.5e3', '  ,-1.5e3');
  assert.doesNotThrow(() => JSON.parse(text), 'one JSON document');
  const d = doc(text);
  assert.equal(d.kind, 'json-document');
  const each = text.split('\n').slice(0, -1);
  assert.equal(d.records.length, each.length);
  for (const [i, line] of each.entries()) {
    const alone = doc(`${line}\n`).records[0];
    assert.deepEqual([d.records[i]?.values, d.records[i]?.blank], [alone?.values, alone?.blank], `line ${i + 1}: ${line}`);
  }
  assert.equal(d.records.filter((r) => r.values.length > 0).length, 6, 'lines that are values alone');
});

test('a first line that does not parse, then JSONL: every line is read and reported as before, in order', () => {
  const d = doc('{"a":\n{"b":2}\nnot json\n\n{"c":3}\n');
  assert.equal(d.kind, 'jsonl');
  assert.deepEqual(
    d.records.map((r) => r.values),
    [[], [{ b: 2 }], [], [], [{ c: 3 }]],
  );
  assert.deepEqual(
    d.records.map((r) => [r.index, r.line, r.blank]),
    [
      [0, 1, false],
      [1, 2, false],
      [2, 3, false],
      [3, 4, true],
      [4, 5, false],
    ],
  );
  assert.deepEqual(
    d.issues.map((i) => i.line),
    [1, 3],
  );
  assert.equal(serializeDocument(d).toString(), '{"a":\n{"b":2}\nnot json\n\n{"c":3}\n');
});

test('NUL bytes and invalid UTF-8 are reported, never thrown, and written back as they were', () => {
  const bytes = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n{"b":\u0000}\n')]);
  const d = doc(bytes);
  assert.deepEqual(d.records[0]?.values, [{ a: 'x\uFFFD\uFFFD' }]);
  assert.match(d.issues[0]?.reason ?? '', /not valid UTF-8/);
  assert.match(d.issues[1]?.reason ?? '', /NUL/);
  assert.deepEqual(serializeDocument(d), bytes);
});

test('a stream split mid-line and mid-character reads the same as one buffer', async () => {
  const text = '{"a":"héllo 世界"}\r\n{"b":2}\n\n{"c":3}';
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 3) chunks.push(bytes.subarray(i, i + 3));
  const streamed = await readDocument(Readable.from(chunks), { path: '-', keepRaw: true });
  const whole = doc(bytes);
  assert.deepEqual(streamed.records, whole.records);
  assert.deepEqual(serializeDocument(streamed), bytes);
});

test('a line of several megabytes is read whole', async () => {
  const big = JSON.stringify({ content: 'x'.repeat(5 * 1024 * 1024) });
  const bytes = Buffer.from(`{"a":1}\n${big}\n`);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536));
  const d = await readDocument(Readable.from(chunks), { path: '-', keepRaw: true });
  assert.equal(d.records.length, 2);
  assert.equal((d.records[1]?.values[0] as { content: string }).content.length, 5 * 1024 * 1024);
  assert.deepEqual(serializeDocument(d), bytes);
});

test('without keepRaw no bytes are held, and writing back is refused', () => {
  const d = parseDocument(Buffer.from('{"a":1}\n'), { path: 'x' });
  assert.equal(d.records[0]?.raw, undefined);
  assert.equal(d.records[0]?.byteLength, 7);
  assert.throws(() => serializeDocument(d), /keepRaw/);
});

test('a BOM split over several chunks of a stream is still a BOM; a short input that looks like one is kept', async () => {
  const { readDocument: read } = await import('../src/io/jsonl.js');
  const { Readable: R } = await import('node:stream');
  const line = Buffer.from('{"id":"a","role":"system","type":"system","content":"x"}\n');
  const split = await read(R.from([Buffer.from([0xef]), Buffer.from([0xbb]), Buffer.concat([Buffer.from([0xbf]), line])]), { path: '-', keepRaw: true });
  assert.equal(split.bom, true);
  assert.equal(split.records.length, 1);
  assert.deepEqual(split.records[0]?.values, [JSON.parse(line.toString())]);
  const short = await read(R.from([Buffer.from([0xef]), Buffer.from([0xbb])]), { path: '-', keepRaw: true });
  assert.equal(short.bom, false);
  assert.equal(short.totalBytes, 2);
  assert.deepEqual(short.records[0]?.raw, Buffer.from([0xef, 0xbb]));
});

test('lines copied from a document read earlier (`sameAs`, a prune reading back its output) keep that parse when their bytes are the same; other lines are parsed: the records and issues of a plain parse', () => {
  const lines = [
    Buffer.from('{"a":1,"t":"caf\u00e9"}'),
    Buffer.from(''),
    Buffer.from('   '),
    Buffer.from('{"b":[1,2]}{"c":3}'),
    Buffer.from('{broken'),
    Buffer.from('"just a string"'),
    Buffer.from('{"d":"\uFFFD is in the text"}'),
    Buffer.concat([Buffer.from('{"e":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    Buffer.from('{"f":3}\r'),
    Buffer.from('{"g":4}'),
  ];
  const input = doc(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  assert.equal(input.records.length, lines.length);
  // The output: every input line in another order, a new line, and one line whose given source is another line.
  const order = [9, 0, 1, 2, 3, 4, 5, 6, 7, 8];
  const bytes = Buffer.concat([...order.map((k) => Buffer.concat([lines[k] as Buffer, Buffer.from('\n')])), Buffer.from('{"new":true}\n{"g":5}\n')]);
  const sources: (RawRecord | undefined)[] = [...order.map((k) => input.records[k]), undefined, input.records[9]];
  const plain = parseDocument(bytes, { path: 'out.jsonl', keepRaw: true });
  const reused = parseDocument(bytes, { path: 'out.jsonl', keepRaw: true, sameAs: sources });
  assert.deepEqual(reused, plain);
  // Taken as they were: the lines that parsed cleanly alone (one value, valid UTF-8), and only those.
  const taken = reused.records.flatMap((r, k) => (sources[k] !== undefined && r.values === sources[k]?.values ? [k] : []));
  assert.deepEqual(taken, [0, 1, 6, 7, 9]);
  // The glued, broken and invalid UTF-8 lines are reported, at their new line numbers.
  assert.deepEqual(
    reused.issues.map((i) => i.line),
    [5, 6, 9],
  );
  // A JSON document is read as one, whatever lines it is said to copy.
  const pretty = Buffer.from('{\n  "a": 1\n}\n');
  const once = doc(pretty);
  assert.deepEqual(parseDocument(pretty, { path: 'x.jsonl', keepRaw: true, sameAs: once.records }), once);
});
