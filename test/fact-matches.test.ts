import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { FILE_PATH, IDENTIFIER, filePathsIn, identifiersIn } from '../src/providers/fact-matches.js';
import { filesUnder, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';

// The offline summary finds paths and identifiers without running their expressions over every
// character: it must find exactly what `matchAll` finds, in order.

const all = (pattern: RegExp, text: string): string[] => [...text.matchAll(pattern)].map((m) => m[0]);

function check(text: string, label: string): void {
  assert.deepEqual(filePathsIn(text), all(FILE_PATH, text), `${label} (paths)`);
  assert.deepEqual(identifiersIn(text), all(IDENTIFIER, text), `${label} (identifiers)`);
}

test('paths and identifiers: the same as matchAll at the edges', () => {
  const cases = [
    '',
    '.',
    '...',
    'see src/core/a.ts and ./x/y.json, ~/p/q.md or ../up.md; README.md. end.',
    'a..b/c.ts //d/e.f .hidden/x.y @scope/pkg/index.js c++/x.hpp a-b/c_d.e+f x.tsx.bak foo.ts.',
    'https://example.com/a/b.html?x=1 cursor.com/a.svg e.g. i.e. v1.2.3 3.14 file.TS',
    'parseConfigFile MAX_RETRY_COUNT snake_case _lead trail_ HTTPServer XMLHttpRequest a_B aB Ab AB A_ __ x1Y2 café_Bar naïveCase',
    'tab\tsep/a.ts\nnew/line.md\r\nwin\\path\\x.ts "quoted/p.json" (paren/x.md) [br/y.ts] {cb/z.ts} <a/b.ts>',
    `${'word '.repeat(500)}deep/${'nested/'.repeat(50)}file.ts ${'x'.repeat(300)}.md`,
    'émoji 😀/a.ts 東京/b.md a/東京.ts',
    // Runs whose only dots end a sentence or stand before no letter or digit hold no path; a digit after one may start an extension.
    'Done. Next step. a/b. c/d.e dir/file.7z x.-y/z.1 v2. ./ ../ .. ~/. a./b .md.',
  ];
  for (const text of cases) check(text, JSON.stringify(text.slice(0, 50)));
});

test('paths and identifiers: the same as matchAll on the fixtures, whole and line by line', () => {
  for (const path of filesUnder(`${repoRoot}fixtures`)) {
    const text = readFileSync(path, 'utf8');
    check(text, path);
    for (const line of text.split('\n')) check(line, path);
  }
});

test('paths and identifiers: the same as matchAll on the real transcripts, whole and line by line', { skip: realdataSkip }, () => {
  const files = realdataFiles();
  assert.ok(files.length >= 10);
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    check(text, path);
    // As the summary reads them: JSON strings decoded.
    check(text.replace(/\\n/g, '\n').replace(/\\"/g, '"'), path);
    for (const line of text.split('\n')) check(line, path);
  }
});
