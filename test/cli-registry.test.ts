import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { CommandDefinition } from '../src/cli/command.js';
import { parseOptions, schemaOf } from '../src/cli/parse-options.js';
import { COMMANDS } from '../src/cli/registry/index.js';
import { AGENT_NAMES, EMBEDDER_NAMES, ENCODING_NAMES, PRUNE_STRATEGIES, SUMMARIZER_NAMES } from '../src/core/names.js';
import { FORMAT_NAMES } from '../src/core/transcript.js';
import { UsageError } from '../src/core/errors.js';
import { cliEnv, runCli, runInProcess } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';

/** Every command with its full name (`hook install`), subcommands included. */
function everyCommand(definitions: readonly CommandDefinition[] = COMMANDS, parent = ''): { path: string; definition: CommandDefinition }[] {
  return definitions.flatMap((definition) => {
    const path = `${parent}${definition.name}`;
    return [{ path, definition }, ...everyCommand(definition.subcommands ?? [], `${path} `)];
  });
}

test('registry: every command is registered once, in the order --help lists them, and every leaf can run', () => {
  const paths = everyCommand().map((c) => c.path);
  assert.deepEqual(paths, [
    'analyze',
    'prune',
    'restore',
    'recall',
    'archive',
    'archive copy',
    'refresh',
    'replay',
    'audit',
    'mcp',
    'hook',
    'hook install',
    'hook uninstall',
    'hook status',
    'hook run',
    'agent-hook',
    'init',
  ]);
  for (const { path, definition } of everyCommand()) {
    const leaf = (definition.subcommands ?? []).length === 0;
    assert.equal(definition.run !== undefined, leaf, `${path}: a command runs, or has subcommands`);
  }
  const help = runCli(['--help']);
  assert.equal(help.exitCode, 0);
  const listed = [...help.stdout.matchAll(/^ {2}([a-z-]+)(?: \[options\]| \[command\]| <|\s)/gm)].map((m) => m[1]);
  assert.deepEqual(
    listed.filter((name) => name !== 'help'),
    COMMANDS.map((c) => c.name),
  );
});

test("registry: each subcommand's --help lists its own flags, from its definition", () => {
  for (const { path, definition } of everyCommand()) {
    if (definition.run === undefined) continue;
    const help = runCli([...path.split(' '), '--help']);
    assert.equal(help.exitCode, 0, path);
    for (const flag of definition.options ?? []) assert.ok(help.stdout.includes(flag.option.flags), `${path} --help shows ${flag.option.flags}`);
  }
});

test("options: a flag's key is the one commander parses it under, and every command's flags have distinct keys but for a --no- pair", () => {
  for (const { path, definition } of everyCommand()) {
    const seen = new Map<string, string>();
    for (const flag of definition.options ?? []) {
      assert.equal(flag.key, flag.option.attributeName(), `${path} ${flag.option.flags}`);
      const before = seen.get(flag.key);
      // `--archive <path|url>` and `--no-archive` set one value.
      if (before !== undefined) assert.ok(flag.option.negate || before.startsWith('--no-'), `${path}: ${before} and ${flag.option.flags} share ${flag.key}`);
      seen.set(flag.key, flag.option.flags);
    }
    // With no flags given, every command's options validate (nothing is required but what commander requires).
    const required = (definition.options ?? []).filter((f) => f.option.mandatory).map((f) => f.key);
    if (required.length === 0 && path !== 'archive copy') assert.doesNotThrow(() => schemaOf(definition.options ?? []).parse({}), path);
  }
});

test('options: the choices commander offers and the values zod accepts come from one tuple', () => {
  const tuples: Record<string, readonly string[]> = {
    format: FORMAT_NAMES,
    encoding: ENCODING_NAMES,
    strategy: PRUNE_STRATEGIES,
    summarizer: SUMMARIZER_NAMES,
    embedder: EMBEDDER_NAMES,
    agent: AGENT_NAMES,
  };
  let checked = 0;
  for (const { path, definition } of everyCommand()) {
    for (const flag of definition.options ?? []) {
      const choices = flag.option.argChoices;
      if (choices === undefined) continue;
      const tuple = tuples[flag.key];
      if (tuple !== undefined) assert.deepEqual(choices, [...tuple], `${path} ${flag.option.flags}`);
      const schema = flag.schema(z);
      for (const value of choices) assert.equal(schema.safeParse(value).success, true, `${path} ${flag.option.flags} ${value}`);
      assert.equal(schema.safeParse('not-a-choice').success, false, `${path} ${flag.option.flags} refuses other values`);
      checked++;
    }
  }
  assert.ok(checked >= 20, `${checked} choice flags checked`);
});

test('options: every bad flag is reported in one usage error, not only the first', () => {
  const prune = COMMANDS.find((c) => c.name === 'prune')?.options ?? [];
  assert.throws(
    () => parseOptions(prune, { target: 'lots', summaryShare: '80', timeout: '-1' }, 'prune'),
    (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.match(error.message, /^3 invalid options: /);
      assert.match(error.message, /--target lots: expected a positive number of tokens/);
      assert.match(error.message, /--summary-share must be more than 0 and at most 50/);
      assert.match(error.message, /--timeout must be more than 0 seconds/);
      assert.equal(error.hint, 'see devs-ctx prune --help');
      return true;
    },
  );
  // One bad flag: its message alone, as before.
  assert.throws(() => parseOptions(prune, { target: 'lots' }, 'prune'), {
    message: '--target lots: expected a positive number of tokens such as 200000, 200k or 1M',
  });
  // Values are converted as the commands use them.
  assert.deepEqual(parseOptions(prune, { target: '100k', summaryShare: '3%', archive: false, cache: true }, 'prune'), {
    target: 100_000,
    summaryShare: 3,
    archive: false,
    cache: true,
  });
});

test("options: a flag zod rejects in its own words keeps zod's English wording", () => {
  const options = (name: string) => everyCommand().find((c) => c.path === name)?.definition.options ?? [];
  assert.throws(() => parseOptions(options('restore'), { event: '' }, 'restore'), { message: '--event: Too small: expected string to have >=1 characters' });
  assert.throws(() => parseOptions(options('init'), { transcripts: 'a.jsonl' }, 'init'), {
    message: '--transcripts: Invalid input: expected array, received string',
  });
  assert.throws(() => parseOptions(options('analyze'), { encoding: 'p50k' }, 'analyze'), {
    message: '--encoding: Invalid option: expected one of "o200k_base"|"cl100k_base"',
  });
  assert.throws(() => parseOptions(options('prune'), { archive: 5 }, 'prune'), { message: '--archive: Invalid input' });
  // The built CLI, in a process of its own: this file loads classic zod, whose first schema sets English for every zod here.
  const cli = runCli(['restore', 'x.jsonl', '--event', '']);
  assert.equal(cli.exitCode, 2);
  assert.equal(cli.stderr, 'devs-ctx: --event: Too small: expected string to have >=1 characters\n  hint: see devs-ctx restore --help\n');
});

test('CLI: several bad flags are all named, exit 2, as text and as JSON', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-flags-'));
  const file = join(dir, 's.jsonl');
  writeFileSync(file, readFileSync(join(repoRoot, 'fixtures', 'devs', 'basic-session.jsonl')));
  const args = ['analyze', file, '--jobs', '0', '--window', '12', '--soft-limit', 'x'];
  const text = await runInProcess(args);
  assert.equal(text.exitCode, 2);
  assert.equal(text.stdout, '');
  assert.match(text.stderr, /^devs-ctx: 3 invalid options: /);
  for (const pattern of [
    /--jobs 0: expected a whole number of worker threads from 1 to 256/,
    /--window 12: a window of 12 tokens is too small/,
    /--soft-limit x: expected a positive number/,
  ]) {
    assert.match(text.stderr, pattern);
  }
  assert.match(text.stderr, /hint: see devs-ctx analyze --help/);
  const json = await runInProcess([...args, '--ndjson']);
  assert.equal(json.exitCode, 2);
  const error = (JSON.parse(json.stdout) as { error: { exitCode: number; message: string } }).error;
  assert.equal(error.exitCode, 2);
  assert.match(error.message, /--jobs 0.*--window 12.*--soft-limit x/);
});

/** Runs the compiled main() (dist/, one file per module) and lists the modules of dist/ and node_modules/ it loaded. */
function modulesLoaded(args: readonly string[], cwd: string): { code: number | null; loaded: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-trace-'));
  const trace = join(dir, 'trace.txt');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(trace)}, result.url + '\\n');
  return result;
}`,
  );
  writeFileSync(trace, '');
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const script = `const { main } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'cli', 'main.js')).href)}); process.exitCode = await main(${JSON.stringify(args)});`;
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', script], {
    cwd,
    env: cliEnv(),
    encoding: 'utf8',
  });
  const root = pathToFileURL(join(repoRoot, '/')).href;
  const loaded = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith(root))
    .map((url) => url.slice(root.length));
  return { code: run.status, loaded: [...new Set(loaded)] };
}

test('the CLI bundle carries zod/mini and its English messages only: no classic zod, no other locale, no JSON-schema generation', () => {
  const dir = join(repoRoot, 'dist', 'cli-bundle');
  const zodModules = new Set<string>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cjs'))) {
    // esbuild heads each bundled module with its path.
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/^\/\/ (node_modules\/zod\/\S+)$/gm)) zodModules.add(match[1] as string);
  }
  assert.ok(zodModules.has('node_modules/zod/v4/mini/schemas.js'), [...zodModules].join(' '));
  assert.ok(zodModules.has('node_modules/zod/v4/locales/en.js'));
  assert.deepEqual(
    [...zodModules].filter((m) => m.includes('/classic/') || (m.includes('/locales/') && !m.endsWith('/en.js')) || m.includes('json-schema')),
    [],
  );
});

test('lazy loading: --version and --help load no command module and not zod; a command loads its own module only', () => {
  const heavy = (loaded: readonly string[]) =>
    loaded.filter((m) => m.startsWith('dist/cli/commands/') || m.startsWith('node_modules/zod/') || m === 'dist/cli/shared.js');
  for (const args of [['--version'], ['--help'], ['prune', '--help'], ['hook', 'install', '--help']]) {
    const { code, loaded } = modulesLoaded(args, repoRoot);
    assert.equal(code, 0, args.join(' '));
    assert.ok(loaded.includes('dist/cli/registry/index.js'), `${args.join(' ')}: the trace sees main's imports`);
    assert.deepEqual(heavy(loaded), [], `${args.join(' ')} loads no command module`);
  }
  const run = modulesLoaded(['analyze', join('fixtures', 'devs', 'basic-session.jsonl'), '--json'], repoRoot);
  assert.ok(run.code === 0 || run.code === 10 || run.code === 11, `analyze ran (exit ${run.code})`);
  assert.ok(run.loaded.includes('dist/cli/commands/analyze.js'), 'analyze runs its module');
  assert.deepEqual(
    run.loaded.filter((m) => m.startsWith('dist/cli/commands/') && m !== 'dist/cli/commands/analyze.js' && m !== 'dist/cli/commands/analyze-batch.js'),
    [],
    'and no other command module',
  );
});
