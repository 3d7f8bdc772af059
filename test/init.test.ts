import { realdataDir, realdataSkip } from './helpers/realdata.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigFileSchema } from '../src/core/config.js';
import { runInProcess } from './helpers/cli.js';
import { hasScript, keys, runInPty, runInTerminal } from './helpers/tty-session.js';

/**
 * `devs-ctx init` [issue 6, item 1]: the wizard driven through its real prompts (an in-process
 * terminal, and a real pseudo-terminal around the binary), and the same answers from flags.
 */

const DEFAULT_PINNED = ['system', 'prd', 'tas', 'requirements', 'spec', 'plan'];
const SECRET = 'AIzaSyTEST-not-a-real-key-0123456789abcd';

function folder(): string {
  return mkdtempSync(join(tmpdir(), 'devs-ctx-init-'));
}

function readConfig(dir: string, name = 'devs-ctx.config.json'): unknown {
  const value: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  ConfigFileSchema.parse(value); // what analyze and prune will accept
  return value;
}

describe('devs-ctx init without a terminal', () => {
  test('--yes writes the defaults, a config every command accepts', async () => {
    const dir = folder();
    const result = await runInProcess(['init', '--yes'], { cwd: dir });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(readConfig(dir), { window: 1_000_000, pinnedTypes: DEFAULT_PINNED, strategy: 'relevance', summarizer: 'extractive', embedder: 'local' });
    assert.match(result.stdout, /^Wrote .*devs-ctx\.config\.json:\n\{\n {2}"window": 1000000,/);
    assert.equal(result.stderr, '');
    // The written file is the one analyze finds and reads.
    const analyze = await runInProcess(['analyze', join(process.cwd(), 'fixtures/devs/basic-session.jsonl'), '--json'], { cwd: dir });
    assert.equal((JSON.parse(analyze.stdout) as { limits: { soft: number } }).limits.soft, 500_000);
  });

  test('--yes proposes the window of the model found in the transcripts (Claude Code: 200k)', { skip: realdataSkip }, async () => {
    const dir = folder();
    const session = join(realdataDir, 'claude-code/01-entire-v2.1.20-compaction+microcompact/70d782f7-b303-4e48-9512-6bec16c37abd.jsonl');
    const result = await runInProcess(['init', '--yes', '--transcripts', session], { cwd: dir });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal((readConfig(dir) as { window: number }).window, 200_000);
    assert.match(result.stdout + result.stderr, /claude-opus-4-5-20251101 in Claude Code/);
    // A Codex rollout records its window.
    const codexDir = folder();
    const rollout = join(realdataDir, 'codex/01-agentcmd-v0.40.0-vscode/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl');
    const codex = await runInProcess(['init', '--yes', '--transcripts', rollout], { cwd: codexDir });
    assert.equal(codex.exitCode, 0, codex.stderr);
    assert.equal((readConfig(codexDir) as { window: number }).window, 272_000);
  });

  test('every question has a flag', async () => {
    const dir = folder();
    const result = await runInProcess(
      [
        'init',
        '--transcripts',
        'a.jsonl,logs/{x,y}/*.jsonl',
        '--transcripts',
        'b.jsonl',
        '--window',
        '200k',
        '--pinned-types',
        'system, tas,spec',
        '--strategy',
        'recency',
        '--summarizer',
        'extractive',
        '--archive',
        '.devs-ctx/archive.sqlite',
      ],
      { cwd: dir },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(readConfig(dir), {
      transcripts: ['a.jsonl', 'logs/{x,y}/*.jsonl', 'b.jsonl'],
      window: 200_000,
      pinnedTypes: ['system', 'tas', 'spec'],
      strategy: 'recency',
      summarizer: 'extractive',
      embedder: 'local',
      archive: '.devs-ctx/archive.sqlite',
    });
    assert.match(result.stdout, /note: a\.jsonl does not exist yet/);
    const limits = await runInProcess(['analyze', join(process.cwd(), 'fixtures/devs/basic-session.jsonl'), '--json'], { cwd: dir });
    assert.deepEqual((JSON.parse(limits.stdout) as { limits: { soft: number; hard: number } }).limits.soft, 100_000);
  });

  test('a transcript outside the folder is written, with a note that the hook will leave it out', async () => {
    const dir = folder();
    const result = await runInProcess(['init', '--yes', '--transcripts', '~/.claude/projects/app/*.jsonl,../other/s.jsonl,inside/*.jsonl'], { cwd: dir });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual((readConfig(dir) as { transcripts: string[] }).transcripts, ['~/.claude/projects/app/*.jsonl', '../other/s.jsonl', 'inside/*.jsonl']);
    const notes = result.stdout.split('\n').filter((l) => /outside this folder/.test(l));
    assert.equal(notes.length, 2, result.stdout);
    assert.match(notes[0] ?? '', /~\/\.claude\/projects\/app\/\*\.jsonl is outside this folder: .*"allowTranscriptsOutsideRepository": true .*--transcript/);
  });

  test('limits instead of a window, --config names the file, --json reports it', async () => {
    const dir = folder();
    const result = await runInProcess(
      ['init', '--soft-limit', '300k', '--hard-limit', '450k', '--pinned-types', 'none', '--config', 'ctx.json', '--yes', '--json'],
      { cwd: dir },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { schemaVersion: number; path: string; replaced: boolean; config: unknown };
    assert.equal(report.schemaVersion, 1);
    assert.equal(report.path, join(dir, 'ctx.json'));
    assert.equal(report.replaced, false);
    assert.deepEqual(report.config, readConfig(dir, 'ctx.json'));
    assert.deepEqual(readConfig(dir, 'ctx.json'), {
      softLimit: 300_000,
      hardLimit: 450_000,
      pinnedTypes: [],
      strategy: 'relevance',
      summarizer: 'extractive',
      embedder: 'local',
    });
    assert.equal(result.stderr, '');
  });

  test('missing answers without --yes: a usage error naming the flags, nothing written', async () => {
    const dir = folder();
    const result = await runInProcess(['init', '--window', '200k'], { cwd: dir });
    assert.equal(result.exitCode, 2);
    for (const flag of ['--transcripts', '--pinned-types', '--strategy', '--summarizer', '--archive', '--yes'])
      assert.ok(result.stderr.includes(flag), `${flag} in ${result.stderr}`);
    assert.ok(!result.stderr.includes('--window'));
    assert.equal(existsSync(join(dir, 'devs-ctx.config.json')), false);
  });

  test('bad answers are usage errors: a soft limit above the hard one, an unknown turn type', async () => {
    const dir = folder();
    const limits = await runInProcess(['init', '--soft-limit', '900k', '--yes'], { cwd: dir });
    assert.equal(limits.exitCode, 2);
    assert.match(limits.stderr, /soft limit \(900000.*must be below the hard limit \(800000/);
    const types = await runInProcess(['init', '--pinned-types', 'system,docs', '--yes'], { cwd: dir });
    assert.equal(types.exitCode, 2);
    assert.match(types.stderr, /"docs" is not a turn type/);
    assert.equal(existsSync(join(dir, 'devs-ctx.config.json')), false);
  });

  test('an existing config is kept (exit 2) unless --force replaces it', async () => {
    const dir = folder();
    const path = join(dir, 'devs-ctx.config.json');
    writeFileSync(path, '{ "window": 128000 }\n');
    const kept = await runInProcess(['init', '--yes'], { cwd: dir });
    assert.equal(kept.exitCode, 2);
    assert.match(kept.stderr, /already exists; nothing was written\n {2}hint: pass --force/);
    assert.equal(readFileSync(path, 'utf8'), '{ "window": 128000 }\n');
    const replaced = await runInProcess(['init', '--yes', '--force', '--strategy', 'recency'], { cwd: dir });
    assert.equal(replaced.exitCode, 0, replaced.stderr);
    assert.match(replaced.stdout, /\(replaced\)/);
    assert.equal((readConfig(dir) as { strategy: string }).strategy, 'recency');
  });

  test('--config naming a folder or a full disk: exit 3, said once', async () => {
    const dir = folder();
    mkdirSync(join(dir, 'a-folder'));
    for (const [config, reason] of [
      [join(dir, 'a-folder'), 'it is a folder'],
      ['/dev/full', 'the disk is full'],
    ] as const) {
      if (!existsSync(config)) continue;
      const result = await runInProcess(['init', '--yes', '--force', '--config', config], { cwd: dir });
      assert.equal(result.exitCode, 3, result.stderr);
      assert.match(result.stderr, new RegExp(`^devs-ctx: ${config}: cannot write: ${reason}; nothing was changed\n`));
    }
  });

  test('gemini without a key: says how to set one, and the config is still written', async () => {
    const dir = folder();
    const result = await runInProcess(['init', '--summarizer', 'gemini', '--yes'], { cwd: dir });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /No Gemini API key is set.*export GEMINI_API_KEY=/);
    assert.deepEqual(readConfig(dir), { window: 1_000_000, pinnedTypes: DEFAULT_PINNED, strategy: 'relevance', summarizer: 'gemini', embedder: 'gemini' });
  });
});

describe('devs-ctx init on a terminal', () => {
  test('the answers to the prompts become the config', async () => {
    const dir = folder();
    const run = await runInTerminal(['init'], { cwd: dir }, async (t) => {
      await t.waitFor('Which transcripts');
      t.press('sessions/*.jsonl', keys.enter);
      await t.waitFor('context window');
      t.press(keys.down, keys.down, keys.enter); // 200k
      await t.waitFor('never pruned');
      t.press(keys.down, keys.down, keys.down, keys.down, keys.down, keys.space, keys.enter); // untick "plan"
      await t.waitFor('remove first');
      t.press(keys.down, keys.enter); // recency
      await t.waitFor('Who writes the summary');
      t.press(keys.enter); // offline: no key is set
      await t.waitFor('archived');
      t.press(keys.down, keys.enter); // next to the config
      await t.waitFor('Next:');
    });
    assert.equal(run.exitCode, 0, run.screen);
    assert.deepEqual(readConfig(dir), {
      transcripts: ['sessions/*.jsonl'],
      window: 200_000,
      pinnedTypes: ['system', 'prd', 'tas', 'requirements', 'spec'],
      strategy: 'recency',
      summarizer: 'extractive',
      embedder: 'local',
      archive: '.devs-ctx/archive.sqlite',
    });
    assert.match(run.screen, /Wrote devs-ctx\.config\.json/);
    assert.match(run.screen, /"archive": "\.devs-ctx\/archive\.sqlite"/);
    assert.match(run.screen, /keep \.devs-ctx out of version control/);
  });

  test('flags answer their questions; only the rest is asked', async () => {
    const dir = folder();
    const run = await runInTerminal(
      ['init', '--transcripts', 's.jsonl', '--window', '128k', '--pinned-types', 'system', '--strategy', 'relevance', '--archive', 'a.sqlite'],
      { cwd: dir },
      async (t) => {
        await t.waitFor('Who writes the summary');
        t.press(keys.down, keys.enter); // gemini
        await t.waitFor('Next:');
      },
    );
    assert.equal(run.exitCode, 0, run.screen);
    assert.ok(!run.screen.includes('Which transcripts'));
    assert.match(run.screen, /No Gemini API key is set/);
    assert.equal((readConfig(dir) as { summarizer: string }).summarizer, 'gemini');
  });

  test('a custom window and hand-set limits are asked for as numbers, and checked', async () => {
    const dir = folder();
    const run = await runInTerminal(
      ['init', '--transcripts', '', '--pinned-types', 'system', '--strategy', 'recency', '--summarizer', 'extractive', '--archive', 'a.sqlite'],
      { cwd: dir },
      async (t) => {
        await t.waitFor('context window');
        t.press(keys.up, keys.enter); // the last option: set the limits myself
        await t.waitFor('Soft limit');
        t.press(keys.clearLine, '300k', keys.enter);
        await t.waitFor('Hard limit');
        t.press(keys.clearLine, '200k', keys.enter);
        await t.waitFor('must be above the soft limit');
        t.press(keys.clearLine, '450k', keys.enter);
        await t.waitFor('Next:');
      },
    );
    assert.equal(run.exitCode, 0, run.screen);
    const config = readConfig(dir) as Record<string, unknown>;
    assert.equal(config['softLimit'], 300_000);
    assert.equal(config['hardLimit'], 450_000);
    assert.equal(config['window'], undefined);
    assert.equal(config['transcripts'], undefined);
  });

  test('Ctrl-C and Esc cancel: exit 130, nothing written', async () => {
    for (const key of [keys.ctrlC, keys.escape]) {
      const dir = folder();
      const run = await runInTerminal(['init'], { cwd: dir }, async (t) => {
        await t.waitFor('Which transcripts');
        t.press('x.jsonl', keys.enter);
        await t.waitFor('context window');
        t.press(key);
      });
      assert.equal(run.exitCode, 130, run.screen);
      assert.match(run.stderr, /cancelled; nothing was written/);
      assert.equal(existsSync(join(dir, 'devs-ctx.config.json')), false);
    }
  });

  test('an existing config: asks first; no keeps it (130), yes replaces it', async () => {
    const dir = folder();
    const path = join(dir, 'devs-ctx.config.json');
    writeFileSync(path, '{ "window": 128000 }\n');
    const flags = [
      '--transcripts',
      's.jsonl',
      '--window',
      '400k',
      '--pinned-types',
      'system',
      '--strategy',
      'recency',
      '--summarizer',
      'extractive',
      '--archive',
      'a.sqlite',
    ];
    const kept = await runInTerminal(['init', ...flags], { cwd: dir }, async (t) => {
      await t.waitFor('already exists. Replace it?');
      t.press(keys.enter); // the default is no
    });
    assert.equal(kept.exitCode, 130);
    assert.equal(readFileSync(path, 'utf8'), '{ "window": 128000 }\n');
    const replaced = await runInTerminal(['init', ...flags], { cwd: dir }, async (t) => {
      await t.waitFor('already exists. Replace it?');
      t.press('y');
      await t.waitFor('Next:');
    });
    assert.equal(replaced.exitCode, 0, replaced.screen);
    assert.equal((readConfig(dir) as { window: number }).window, 400_000);
    // --force does not ask.
    const forced = await runInTerminal(['init', ...flags, '--force', '--window', '200k'], { cwd: dir }, async (t) => {
      await t.waitFor('Next:');
    });
    assert.equal(forced.exitCode, 0);
    assert.ok(!forced.screen.includes('Replace it?'));
    assert.equal((readConfig(dir) as { window: number }).window, 200_000);
  });

  test('with a Gemini key: found, never printed, and not stored unless --store-api-key', async () => {
    const dir = folder();
    const env = { GEMINI_API_KEY: SECRET };
    const run = await runInTerminal(
      ['init', '--transcripts', '', '--window', '1M', '--pinned-types', 'system', '--strategy', 'relevance', '--archive', 'a.sqlite'],
      { cwd: dir, env },
      async (t) => {
        await t.waitFor('Who writes the summary');
        t.press(keys.enter); // gemini is the default when a key is set
        await t.waitFor('Next:');
      },
    );
    assert.equal(run.exitCode, 0, run.screen);
    assert.match(run.screen, /Gemini key found in GEMINI_API_KEY \(not shown\)/);
    assert.ok(!run.screen.includes(SECRET));
    assert.ok(!readFileSync(join(dir, 'devs-ctx.config.json'), 'utf8').includes(SECRET));
    assert.equal((readConfig(dir) as { summarizer: string }).summarizer, 'gemini');

    const stored = await runInProcess(['init', '--yes', '--force', '--store-api-key', '--json'], { cwd: dir });
    assert.equal(stored.exitCode, 2, 'no key in this environment');
    const withKey = await runInTerminal(['init', '--yes', '--force', '--store-api-key'], { cwd: dir, env }, async (t) => {
      await t.waitFor('stored in the file');
    });
    assert.equal(withKey.exitCode, 0, withKey.screen);
    assert.ok(!withKey.screen.includes(SECRET));
    assert.match(withKey.screen, /"geminiApiKey": "\(hidden\)"/);
    assert.equal((readConfig(dir) as { geminiApiKey: string }).geminiApiKey, SECRET);
    assert.equal(statSync(join(dir, 'devs-ctx.config.json')).mode & 0o777, 0o600);
  });
});

test('--store-api-key into a config git tracks: exit 2, the file unchanged (the next commit would publish the key)', async () => {
  const dir = folder();
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } });
  git('init', '-q');
  const first = await runInProcess(['init', '--yes'], { cwd: dir });
  assert.equal(first.exitCode, 0, first.stderr);
  git('add', 'devs-ctx.config.json');
  const before = readFileSync(join(dir, 'devs-ctx.config.json'), 'utf8');
  const stored = await runInProcess(['init', '--yes', '--force', '--store-api-key'], { cwd: dir, env: { GEMINI_API_KEY: SECRET } });
  assert.equal(stored.exitCode, 2, stored.stderr);
  assert.match(stored.stderr, /devs-ctx\.config\.json is tracked by git: a key stored there would be committed/);
  assert.ok(!stored.stderr.includes(SECRET));
  assert.equal(readFileSync(join(dir, 'devs-ctx.config.json'), 'utf8'), before);
});

describe('devs-ctx init in a real pseudo-terminal', { skip: hasScript() ? false : 'needs `script` (util-linux) for a pseudo-terminal' }, () => {
  test('Enter through every question writes the defaults; Ctrl-C exits 130', async () => {
    const dir = folder();
    const run = await runInPty(['init'], { cwd: dir }, async (t) => {
      for (const question of ['Which transcripts', 'context window', 'never pruned', 'remove first', 'Who writes the summary', 'archived']) {
        await t.waitFor(question);
        t.press(keys.enter);
      }
      await t.waitFor('Next:');
    });
    assert.equal(run.exitCode, 0, run.screen);
    assert.deepEqual(readConfig(dir), { window: 1_000_000, pinnedTypes: DEFAULT_PINNED, strategy: 'relevance', summarizer: 'extractive', embedder: 'local' });

    const other = folder();
    const cancelled = await runInPty(['init'], { cwd: other }, async (t) => {
      await t.waitFor('Which transcripts');
      t.press(keys.ctrlC);
    });
    assert.equal(cancelled.exitCode, 130, cancelled.screen);
    assert.equal(existsSync(join(other, 'devs-ctx.config.json')), false);
  });
});

test('init --config naming a folder or a link to nothing: exit 3, and the hint names no flag init does not have', async () => {
  const dir = folder();
  mkdirSync(join(dir, 'd'));
  symlinkSync(join(dir, 'nowhere', 'x.json'), join(dir, 'dangling.json'));
  for (const config of ['d', 'dangling.json']) {
    const result = await runInProcess(['init', '--yes', '--force', '--config', config], { cwd: dir });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.match(result.stderr, /hint: name/);
    assert.doesNotMatch(result.stderr, /-o\b/);
  }
});

test('limits that do not fit together: the message names the answers (--soft-limit, --hard-limit), not a config file that is not written', async () => {
  const dir = folder();
  const result = await runInProcess(['init', '--yes', '--soft-limit', '900', '--hard-limit', '100'], { cwd: dir });
  assert.equal(result.exitCode, 2);
  assert.match(result.stderr, /the soft limit \(900, from --soft-limit\) must be below the hard limit \(100, from --hard-limit\)/);
  assert.ok(!existsSync(join(dir, 'devs-ctx.config.json')));
});

test('init --archive: a URL with an @ in a parameter and no password is taken; one with a password, however written, is refused', async () => {
  const dir = folder();
  const fine = await runInProcess(['init', '--yes', '--force', '--archive', 'postgres://devs_ctx@db.internal:5432/team?application_name=ci@laptop'], {
    cwd: dir,
  });
  assert.equal(fine.exitCode, 0, fine.stderr);
  for (const url of ['postgres://u:pa/ss@h/db', 'postgres://u:p@ss@h/db', 'postgres://u@h/db?password=x']) {
    const refused = await runInProcess(['init', '--yes', '--force', '--archive', url], { cwd: dir });
    assert.equal(refused.exitCode, 2, url);
  }
});
