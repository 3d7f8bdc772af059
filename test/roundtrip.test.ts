import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { detectFormat, readTranscript } from '../src/formats/index.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import { filesUnder, realdataDir, realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';
import { assertTranscriptInvariants } from './helpers/transcripts.js';

/** [SPEC §4] Reading and writing a transcript that nothing changed gives the same bytes. */
function assertRoundTrip(path: string): void {
  const bytes = readFileSync(path);
  const doc = parseDocument(bytes, { path, keepRaw: true });
  const out = serializeDocument(doc);
  assert.equal(out.length, bytes.length, 'same length');
  assert.ok(out.equals(bytes), 'same bytes');
}

const fixtureFiles = (): string[] => filesUnder(join(repoRoot, 'fixtures'));

const EXPECTED_FORMAT: Record<string, string> = {
  'claude-code': 'claude-code',
  codex: 'codex',
  gemini: 'gemini',
  trajectories: 'openhands',
};

for (const path of realdataFiles()) {
  const name = realdataName(path);
  test(`realdata round trip and format: ${name}`, { skip: realdataSkip }, () => {
    assertRoundTrip(path);
    const top = relative(realdataDir, path).split(sep)[0] ?? '';
    const doc = parseDocument(readFileSync(path), { path });
    assert.equal(detectFormat(doc).adapter.name, EXPECTED_FORMAT[top]);
    // Every turn links to records that exist, ids are unique, no result comes before its call.
    const transcript = readTranscript(doc);
    assert.ok(transcript.entries.length > 0, 'turns were read');
    assertTranscriptInvariants(doc, transcript);
  });
}
test('realdata is present or skipped with a reason', { skip: realdataSkip }, () => {
  assert.ok(realdataFiles().length >= 12, 'the shared real transcripts are all found');
});

for (const path of fixtureFiles()) {
  const name = relative(repoRoot, path);
  test(`fixture round trip and format: ${name}`, () => {
    assertRoundTrip(path);
    const format = relative(join(repoRoot, 'fixtures'), path).split(sep)[0];
    const doc = parseDocument(readFileSync(path), { path });
    if (doc.records.every((r) => r.blank)) return; // empty.jsonl: nothing to detect
    assert.equal(detectFormat(doc).adapter.name, format);
  });
}
