import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limitsFromWindow, parseConfigFile, parseUserConfig, resolveSettings } from '../src/core/config.js';
import { InputError, UsageError } from '../src/core/errors.js';
import { parseTokenAmount } from '../src/core/token-amount.js';
import { sessionLimits } from '../src/core/session-context.js';
import { findConfigFile, loadConfig, MAX_CONFIG_BYTES } from '../src/io/config.js';

test('defaults are 500k / 800k with o200k_base', () => {
  const s = resolveSettings({ flags: {}, env: {} });
  assert.equal(s.softLimitTokens, 500_000);
  assert.equal(s.hardLimitTokens, 800_000);
  assert.equal(s.encoding, 'o200k_base');
  assert.equal(s.limitSource, 'default');
});

test('--window sets soft 50 % and hard 80 % (1M gives the seed limits)', () => {
  assert.deepEqual(limitsFromWindow(1_000_000), { soft: 500_000, hard: 800_000 });
  const s = resolveSettings({ flags: { window: 200_000 }, env: {} });
  assert.deepEqual([s.softLimitTokens, s.hardLimitTokens], [100_000, 160_000]);
});

test('precedence: flags over environment over config file over defaults', () => {
  const file = { path: 'devs-ctx.config.json', config: { softLimit: 300_000, hardLimit: 900_000 } };
  const env = { DEVS_SOFT_LIMIT: '400000', DEVS_HARD_LIMIT: '850000' };
  assert.deepEqual(pick(resolveSettings({ flags: {}, env: {}, file })), [300_000, 900_000]);
  assert.deepEqual(pick(resolveSettings({ flags: {}, env, file })), [400_000, 850_000]);
  assert.deepEqual(pick(resolveSettings({ flags: { softLimit: 100_000 }, env, file })), [100_000, 850_000]);
  assert.deepEqual(pick(resolveSettings({ flags: { window: 200_000 }, env, file })), [100_000, 160_000]);
});

test('DEVS_PRUNE_THRESHOLD is the hard limit’s older name; DEVS_HARD_LIMIT wins over it', () => {
  assert.equal(resolveSettings({ flags: {}, env: { DEVS_PRUNE_THRESHOLD: '700000' } }).hardLimitTokens, 700_000);
  assert.equal(resolveSettings({ flags: {}, env: { DEVS_PRUNE_THRESHOLD: '700000', DEVS_HARD_LIMIT: '750000' } }).hardLimitTokens, 750_000);
});

test('a bad environment value is ignored when a flag overrides it; the source names the variable used', () => {
  assert.equal(resolveSettings({ flags: { softLimit: 1000, hardLimit: 2000 }, env: { DEVS_SOFT_LIMIT: 'lots', DEVS_HARD_LIMIT: 'x' } }).softLimitTokens, 1000);
  const s = resolveSettings({ flags: {}, env: { DEVS_HARD_LIMIT: '', DEVS_PRUNE_THRESHOLD: '700000' } });
  assert.equal(s.hardLimitTokens, 700_000);
  assert.match(s.limitSource, /hard from DEVS_PRUNE_THRESHOLD/);
});

test('bad environment values and inverted limits are usage errors that say what to do', () => {
  assert.throws(
    () => resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: 'lots' } }),
    (e: unknown) => e instanceof UsageError && /DEVS_SOFT_LIMIT=lots/.test(e.message) && e.exitCode === 2,
  );
  assert.throws(() => resolveSettings({ flags: { softLimit: 900_000, hardLimit: 800_000 }, env: {} }), /must be below the hard limit/);
  // One limit alone: checked once the model's window is known (here none: the seeds' 800k).
  assert.throws(() => sessionLimits(resolveSettings({ flags: { softLimit: 900_000 }, env: {} }), undefined), /must be below the hard limit \(800000\)/);
});

test('a bad config value names the file, the key and the allowed values', () => {
  assert.throws(
    () => parseConfigFile('/p/devs-ctx.config.json', { pinnedTypes: ['system', 'nope'] }),
    (e: unknown) => e instanceof UsageError && /\/p\/devs-ctx.config.json/.test(e.message) && /pinnedTypes\.1/.test(e.message) && /plan/.test(e.message),
  );
  assert.throws(() => parseConfigFile('c.json', { softlimit: 5 }), /unknown key "softlimit"; allowed keys: .*softLimit/);
  assert.throws(() => parseConfigFile('c.json', { hardLimit: -1 }), /key "hardLimit"/);
  assert.throws(() => parseConfigFile('c.json', { encoding: 'p50k' }), /must be one of o200k_base, cl100k_base/);
});

test('the config file is found by walking up from the working directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'devs-ctx-config-'));
  const deep = join(root, 'a', 'b');
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(root, 'devs-ctx.config.json'), JSON.stringify({ window: 200_000 }));
  assert.equal(findConfigFile(deep), join(root, 'devs-ctx.config.json'));
  assert.deepEqual(loadConfig({ cwd: deep })?.config, { window: 200_000 });
  writeFileSync(join(root, 'a', 'other.json'), '{ not json');
  assert.throws(() => loadConfig({ cwd: deep, explicitPath: '../other.json' }), /not valid JSON/);
  assert.throws(
    () => loadConfig({ cwd: deep, explicitPath: 'missing.json' }),
    (e: unknown) => e instanceof Error && 'exitCode' in e && e.exitCode === 3,
  );
});

test('token amounts accept 200000, 200_000, 200k, 1M, 1.5m', () => {
  const table: Array<[string, number | undefined]> = [
    ['200000', 200_000],
    ['200_000', 200_000],
    ['200k', 200_000],
    ['1M', 1_000_000],
    ['1.5m', 1_500_000],
    ['0', undefined],
    ['-5', undefined],
    ['abc', undefined],
    ['1e6', undefined],
    ['', undefined],
  ];
  for (const [raw, expected] of table) assert.equal(parseTokenAmount(raw), expected, raw);
});

function pick(s: { softLimitTokens: number; hardLimitTokens: number }): [number, number] {
  return [s.softLimitTokens, s.hardLimitTokens];
}

test('prune keys: strategy, target and archive are accepted; a bad strategy names the allowed values', () => {
  assert.deepEqual(parseConfigFile('c.json', { strategy: 'recency', target: 100_000, archive: 'archive.sqlite' }), {
    strategy: 'recency',
    target: 100_000,
    archive: 'archive.sqlite',
  });
  assert.throws(() => parseConfigFile('c.json', { strategy: 'newest' }), /c\.json: key "strategy" must be one of relevance, recency/);
  assert.throws(() => parseConfigFile('c.json', { target: 0 }), /key "target"/);
});

test('config errors name what each key expects (archive, timeout, geminiApiKey are not token counts)', () => {
  const expect = (value: Record<string, unknown>, pattern: RegExp): void =>
    assert.throws(
      () => parseConfigFile('c.json', value),
      (e: unknown) => e instanceof UsageError && pattern.test(e.message) && !/tokens/.test(e.message),
      JSON.stringify(value),
    );
  expect({ archive: 5 }, /key "archive" .*expected a path to the SQLite archive/);
  expect({ archive: '' }, /key "archive" .*expected a path/);
  expect({ timeout: 'soon' }, /key "timeout" .*expected a number of seconds above 0/);
  expect({ timeout: 0 }, /key "timeout" .*seconds/);
  // What a timer holds at most: 1e7 seconds overflowed the request timer (an internal error, exit 1).
  expect({ timeout: 1e7 }, /key "timeout" .*at most 2147483/);
  expect({ geminiApiKey: '' }, /key "geminiApiKey" .*expected the Gemini API key/);
  expect({ geminiApiKey: 42 }, /key "geminiApiKey" .*Gemini API key/);
  assert.throws(() => parseConfigFile('c.json', { softLimit: 'x' }), /expected a positive whole number of tokens/);
});

test("config errors keep zod's English wording of what was wrong", () => {
  const message = (parse: () => unknown): string => {
    try {
      parse();
    } catch (error) {
      return error instanceof UsageError ? error.message : String(error);
    }
    return 'accepted';
  };
  assert.equal(
    message(() => parseConfigFile('c.json', { hardLimit: -1 })),
    'c.json: key "hardLimit" Too small: expected number to be >0 (expected a positive whole number of tokens)',
  );
  assert.equal(
    message(() => parseConfigFile('c.json', { window: 1.5 })),
    'c.json: key "window" Invalid input: expected int, received number (expected a positive whole number of tokens)',
  );
  assert.equal(
    message(() => parseConfigFile('c.json', { summaryShare: 60 })),
    'c.json: key "summaryShare" Too big: expected number to be <=50 (expected a percentage of the removed tokens, more than 0 and at most 50 (e.g. 3))',
  );
  assert.equal(
    message(() => parseConfigFile('c.json', { geminiBaseUrl: 'nope' })),
    'c.json: key "geminiBaseUrl" Invalid URL',
  );
  assert.equal(
    message(() => parseConfigFile('c.json', [])),
    'c.json: Invalid input: expected object, received array (expected a JSON object)',
  );
  assert.equal(
    message(() => parseConfigFile('c.json', { transcripts: [''] })),
    'c.json: key "transcripts.0" Too small: expected string to have >=1 characters (expected an array of paths or globs, relative to the config file)',
  );
  assert.equal(
    message(() => parseUserConfig('u.json', { geminiBaseUrl: '' })),
    'u.json: key "geminiBaseUrl" Too small: expected string to have >=1 characters (expected an https URL)',
  );
  assert.equal(
    message(() => parseUserConfig('u.json', { allowProjectArchive: 'yes' })),
    'u.json: key "allowProjectArchive" Invalid input: expected boolean, received string (expected true or false)',
  );
});

test('DEVS_SOFT_LIMIT and friends take exactly the forms the flags take', () => {
  assert.equal(resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: '500k', DEVS_HARD_LIMIT: '1M' } }).softLimitTokens, 500_000);
  assert.equal(resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: '500k', DEVS_HARD_LIMIT: '1.5m' } }).hardLimitTokens, 1_500_000);
  assert.equal(resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: '400_000' } }).softLimitTokens, 400_000);
  for (const bad of ['0x10', '1e6', '0b11', '-5', '0', 'Infinity']) {
    assert.throws(
      () => resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: bad } }),
      (e: unknown) => e instanceof UsageError && e.message.includes(`DEVS_SOFT_LIMIT=${bad}`),
      bad,
    );
    assert.equal(parseTokenAmount(bad), undefined, `the flags refuse ${bad} too`);
  }
});

test('a config file: a UTF-8 BOM is fine; a symlink loop, a device, or one over 1 MB is an error at once', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-config-read-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'devs-ctx.config.json'), `\uFEFF${JSON.stringify({ window: 4000 })}`);
  assert.deepEqual(loadConfig({ cwd: dir })?.config, { window: 4000 });

  const loop = join(dir, 'loop');
  mkdirSync(loop);
  symlinkSync(join(loop, 'devs-ctx.config.json'), join(loop, 'devs-ctx.config.json'));
  assert.throws(
    () => loadConfig({ cwd: loop }),
    (e: unknown) => e instanceof InputError && /devs-ctx\.config\.json: ELOOP \(a symlink loop\)/.test(e.message),
  );

  assert.throws(
    () => loadConfig({ cwd: dir, explicitPath: '/dev/zero' }),
    (e: unknown) => e instanceof InputError && /cannot read config \/dev\/zero: not a regular file/.test(e.message),
  );
  const big = join(dir, 'big.json');
  writeFileSync(big, `{"window": 4000${' '.repeat(MAX_CONFIG_BYTES)}}`);
  assert.throws(
    () => loadConfig({ cwd: dir, explicitPath: big }),
    (e: unknown) => e instanceof InputError && /more than a config may hold \(1,048,576\)/.test(e.message),
  );
});
