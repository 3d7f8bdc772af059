import assert from 'node:assert/strict';
import { test } from 'node:test';
import { preview } from '../src/core/reports/analyze.js';
import { clip, clipLine, headOf, tailOf } from '../src/core/text-cut.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { pinnedRefresh } from '../src/cli/agent-session.js';
import { OutlineCondenser } from '../src/providers/summary-providers.js';
import { runCli } from './helpers/cli.js';

// A cut between the two UTF-16 halves of one character leaves a lone half, which JSON.stringify
// writes as `\ud83d` and strict readers (jq, serde_json) refuse. Cuts never do that.

const EMOJI = '😀';
/** Lone halves of a character (String.prototype.isWellFormed from Node 20). */
const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

test('headOf, tailOf and clip never leave half a character, and cut nothing else', () => {
  for (let before = 0; before < 6; before++) {
    const text = `${'a'.repeat(before)}${EMOJI}${EMOJI}b${EMOJI}`;
    for (let units = 0; units <= text.length + 1; units++) {
      const head = headOf(text, units);
      const tail = tailOf(text, units);
      const clipped = clip(text, units);
      for (const cut of [head, tail, clipped]) assert.ok(wellFormed(cut), `${JSON.stringify(cut)} of ${units} units`);
      // At most one unit short, and only where a character would have been halved.
      assert.ok(text.startsWith(head) && head.length >= Math.min(units, text.length) - 1 && head.length <= units);
      assert.ok(text.endsWith(tail) && tail.length >= Math.min(units, text.length) - 1 && tail.length <= Math.max(units, 0));
      if (wellFormed(text.slice(0, units))) assert.equal(head, text.slice(0, units));
      if (units > 0 && units <= text.length && wellFormed(text.slice(-units))) assert.equal(tail, text.slice(-units));
      assert.ok(clipped.length <= Math.max(units, 1));
    }
  }
});

test('clipLine puts a text on one line (each white-space run one space, trimmed), then clips it', () => {
  assert.equal(clipLine('  a\n\tb  c \r\n', 10), 'a b c');
  assert.equal(clipLine('one\n\ntwo three', 8), 'one two…');
  assert.equal(clipLine(' x😀y ', 2), 'x…');
  assert.equal(clipLine(' x😀y ', 3), 'x…', 'never half of the emoji');
  assert.equal(clipLine(' x😀y ', 4), 'x😀y');
});

test('a preview cut at an emoji has no half of it', () => {
  const content = `${'x'.repeat(58)}${EMOJI}${' more text'.repeat(50)}`;
  assert.equal(preview(content), `${'x'.repeat(58)}…`);
  assert.equal(preview(`${'x'.repeat(57)}${EMOJI}${' more'.repeat(50)}`), `${'x'.repeat(57)}${EMOJI}…`);
});

test('analyze --json: a heaviest turn whose preview is cut at an emoji prints JSON that strict readers take', () => {
  const line = JSON.stringify({ id: 'a', role: 'user', type: 'message', content: `${'x'.repeat(58)}${EMOJI}${' more text'.repeat(50)}` });
  const result = runCli(['analyze', '-', '--json', '--no-cache'], { input: `${line}\n` });
  assert.equal(result.exitCode, 0, result.stderr);
  // No escaped lone half in the text printed, and every string of the parsed report is whole.
  assert.doesNotMatch(result.stdout, /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
  const strings: string[] = [];
  JSON.parse(result.stdout, (_key, value: unknown) => {
    if (typeof value === 'string') strings.push(value);
    return value;
  });
  assert.ok(strings.some((s) => s.startsWith('xxxx')));
  for (const s of strings) assert.ok(wellFormed(s), JSON.stringify(s));
});

test('analyze --json: a junk line quoted in an issue is cut before an emoji, not inside it', () => {
  const input = `${'x'.repeat(59)}${EMOJI}yy\n${JSON.stringify({ id: 't1', role: 'user', type: 'message', content: 'hello' })}\n`;
  const result = runCli(['analyze', '-', '--json', '--no-cache', '--format', 'devs'], { input });
  const strings: string[] = [];
  JSON.parse(result.stdout, (_key, value: unknown) => {
    if (typeof value === 'string') strings.push(value);
    return value;
  });
  assert.ok(
    strings.some((s) => s.includes(`starts with "${'x'.repeat(59)}"`)),
    result.stdout,
  );
  for (const s of strings) assert.ok(wellFormed(s), JSON.stringify(s));
});

test("the offline TAS outline and the agents' pinned refresh cut long lines before an emoji, not inside it", async () => {
  const counter = loadCounter('o200k_base');
  const long = `- ${'x'.repeat(296)}${EMOJI} tail words here`;
  const tas = [`# TAS`, long, ...Array.from({ length: 400 }, (_, i) => `- item ${i} ${'word '.repeat(30)}`)].join('\n');
  const outline = await new OutlineCondenser(counter).condense(tas, 300, 'TAS');
  assert.ok(outline.includes(`- ${'x'.repeat(296)}…`), outline.slice(0, 400));
  assert.ok(wellFormed(outline));
  const refresh = pinnedRefresh([{ kind: 'tas', path: 'TAS.md', text: `${'y'.repeat(198)}${EMOJI}${'z'.repeat(500)}` }], 400);
  assert.ok(refresh.includes(`${'y'.repeat(198)}…`), refresh);
  assert.ok(wellFormed(refresh));
});
