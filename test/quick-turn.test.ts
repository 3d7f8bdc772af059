import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isTurn, quickTurn, TurnSchema } from '../src/core/turn.js';
import { repoRoot } from './helpers/realdata.js';

/** quickTurn must be zod's answer: the same turn, keys in the same order, or nothing (and isTurn zod's success). */
function assertSameAsZod(value: unknown, where: string): 'quick' | 'zod' | 'rejected' {
  const quick = quickTurn(value);
  const parsed = TurnSchema.safeParse(value);
  assert.equal(isTurn(value), parsed.success, `${where}: isTurn`);
  if (!parsed.success) {
    assert.equal(quick, undefined, `${where}: zod rejects it, quickTurn accepted it`);
    return 'rejected';
  }
  if (quick === undefined) return 'zod';
  assert.deepEqual(Object.keys(quick), Object.keys(parsed.data), `${where}: key order`);
  assert.deepEqual(quick, parsed.data, where);
  assert.notEqual(quick, value, `${where}: a new object, as zod's`);
  return 'quick';
}

test('quickTurn equals TurnSchema.safeParse on every line of every fixture', () => {
  const seen = { quick: 0, zod: 0, rejected: 0 };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.jsonl')) {
        for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch {
            continue;
          }
          seen[assertSameAsZod(value, `${path}:${i + 1}`)]++;
        }
      }
    }
  };
  walk(join(repoRoot, 'fixtures'));
  assert.ok(seen.quick > 50, `the fixtures' native turns take the quick path (${JSON.stringify(seen)})`);
  assert.equal(seen.zod, 0, 'no fixture line needs zod to be accepted');
  assert.ok(seen.rejected > 100, 'other formats are rejected by both');
});

test('quickTurn equals TurnSchema.safeParse on 20,000 generated values, accepting all zod does but a __proto__ key', () => {
  let seed = 7;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const values: readonly unknown[] = [
    '',
    'x',
    'user',
    'assistant',
    'system',
    'tool',
    'message',
    'tool_result',
    'refresh',
    'User',
    0,
    -0,
    1,
    -1,
    1.5,
    2 ** 53,
    2 ** 53 - 1,
    1e300,
    true,
    false,
    null,
    [],
    ['user'],
    {},
    { a: 1 },
  ];
  const good: Record<string, readonly unknown[]> = {
    id: ['t1', 'x'],
    role: ['system', 'user', 'assistant', 'tool'],
    type: ['message', 'tool_call', 'spec', 'summary'],
    content: ['', 'hello'],
    timestamp: ['2026-01-01T00:00:00Z'],
    pinned: [true, false],
    tokenCount: [0, 12],
    node: ['n1'],
  };
  const keys = [...Object.keys(good), 'extra', '1', '10', 'b', '__proto__', 'constructor', 'toString'];
  const seen = { quick: 0, zod: 0, rejected: 0 };
  for (let i = 0; i < 20_000; i++) {
    const fields: string[] = [];
    for (const key of [...keys].sort(() => random() - 0.5)) {
      const required = ['id', 'role', 'type', 'content'].includes(key);
      if (random() < (required ? 0.03 : 0.6)) continue;
      const choices = Object.hasOwn(good, key) ? good[key] : undefined;
      const value = choices !== undefined && random() < 0.85 ? pick(choices) : pick(values);
      fields.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
    }
    // Through JSON, as a transcript line is: a "__proto__" key is then an own property.
    const text = random() < 0.02 ? pick(['[]', 'null', '"turn"', '3']) : `{${fields.join(',')}}`;
    const value: unknown = JSON.parse(text);
    const outcome = assertSameAsZod(value, text);
    seen[outcome]++;
    if (outcome === 'zod') assert.ok(text.includes('"__proto__"'), `${text}: zod accepts it, quickTurn should have`);
  }
  assert.ok(seen.quick > 2_000 && seen.rejected > 2_000, JSON.stringify(seen));
});
