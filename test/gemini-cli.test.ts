import { describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, runCliAsync } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { fakeGeminiForFile } from './helpers/fake-gemini.js';
import type { FakeGemini, Fault } from './helpers/fake-gemini.js';

/**
 * `devs-ctx prune --summarizer gemini` end to end: the built binary, the real @google/genai client,
 * and a local server speaking the Gemini REST API with faults injected [issue 4, SPEC §7].
 */

const KEY = 'test-key-2c9d4e8f1a';
const PLANTED = `ghp_${'x7K2'.repeat(9)}`;
const WINDOW = ['--window', '4000'];
const FIXTURE = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');

const server = fakeGeminiForFile({ apiKey: KEY });

interface Workspace {
  readonly dir: string;
  readonly file: string;
  readonly archive: string;
  readonly env: Record<string, string>;
  readonly original: Buffer;
}

/** A copy of the fixture whose reasoning turn r2 (one a prune drops) holds a planted token. */
function workspace(extraEnv: Record<string, string> = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-gemini-'));
  const lines = readFileSync(FIXTURE, 'utf8').split('\n');
  const planted = lines.map((line) => {
    if (!line.startsWith('{"id":"r2"')) return line;
    const turn = JSON.parse(line) as { content: string };
    turn.content += `\nexport GITHUB_TOKEN=${PLANTED}`;
    return JSON.stringify(turn);
  });
  const file = join(dir, 'session.jsonl');
  writeFileSync(file, planted.join('\n'));
  const archive = join(dir, 'archive.sqlite');
  return {
    dir,
    file,
    archive,
    original: readFileSync(file),
    env: { DEVS_CTX_ARCHIVE: archive, GEMINI_API_KEY: KEY, DEVS_CTX_GEMINI_BASE_URL: server.url, ...extraEnv },
  };
}

interface Report {
  outcome: string;
  summary: { text: string } | null;
  providers: {
    summarizer: string;
    embedder: string;
    requests: number;
    retries: number;
    tokensSent: number;
    tokensReceived: number;
    embeddingTokens: number;
    embeddingsCached: number;
    estimatedCostUsd: number | null;
    redacted: { total: number } | null;
    fallback: { provider: string; reason: string; usedInstead: string }[];
  };
}

const generate = (): FakeGemini['requests'] => server.requests.filter((r) => r.action === 'generateContent');

function assertNoKey(result: { stdout: string; stderr: string }): void {
  assert.ok(!result.stdout.includes(KEY), 'the key is in stdout');
  assert.ok(!result.stderr.includes(KEY), 'the key is in stderr');
}

describe('prune --summarizer gemini', () => {
  test('summarizes with the configured Flash model, reports tokens and cost, and never sends the planted secret', async () => {
    const w = workspace();
    const result = await runCliAsync(['prune', w.file, '--in-place', '--json', '--summarizer', 'gemini', '--embedder', 'local', ...WINDOW], { env: w.env });
    assert.equal(result.exitCode, 0, result.stderr + result.stdout);
    assertNoKey(result);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.outcome, 'pruned');
    assert.equal(report.providers.summarizer, 'gemini:gemini-3.5-flash');
    assert.equal(report.providers.requests, 1);
    assert.ok(report.providers.tokensSent > 0 && report.providers.tokensReceived > 0);
    assert.ok(report.providers.estimatedCostUsd !== null && report.providers.estimatedCostUsd > 0);
    assert.ok((report.providers.redacted?.total ?? 0) >= 1);
    const [sent] = generate();
    assert.ok(sent);
    assert.equal(sent.model, 'gemini-3.5-flash');
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    for (const r of server.requests) assert.ok(!r.rawBody.includes(PLANTED), 'the planted token reached the server');
    // The summary written is the model's answer under the marker, in the transcript itself.
    const written = readFileSync(w.file, 'utf8');
    assert.ok(report.summary?.text.startsWith('[Context Summary]\n'));
    assert.ok(written.includes(JSON.stringify(report.summary?.text).slice(1, -1)));
    assert.match(report.summary?.text ?? '', /summary by gemini-3\.5-flash/);
  });

  test('--model and DEVS_CTX_MODEL choose the model; the flag wins', async () => {
    const w = workspace({ DEVS_CTX_MODEL: 'gemini-2.5-flash' });
    const fromEnv = await runCliAsync(['prune', w.file, '-o', join(w.dir, 'a.jsonl'), '--summarizer', 'gemini', '--embedder', 'local', ...WINDOW], {
      env: w.env,
    });
    assert.equal(fromEnv.exitCode, 0, fromEnv.stderr);
    const fromFlag = await runCliAsync(
      ['prune', w.file, '-o', join(w.dir, 'b.jsonl'), '--summarizer', 'gemini', '--embedder', 'local', '--model', 'gemini-3.1-flash-lite', ...WINDOW],
      { env: w.env },
    );
    assert.equal(fromFlag.exitCode, 0, fromFlag.stderr);
    assert.deepEqual(
      generate().map((r) => r.model),
      ['gemini-2.5-flash', 'gemini-3.1-flash-lite'],
    );
    assert.match(fromFlag.stdout, /summary by gemini:gemini-3\.1-flash-lite/);
    assert.match(fromFlag.stdout, /about \$\d+\.\d{4}/);
  });

  test('with a key set and no flags, Gemini is used [SPEC §7]; without a key, nothing is sent', async () => {
    const w = workspace();
    const withKey = await runCliAsync(['prune', w.file, '-o', join(w.dir, 'a.jsonl'), ...WINDOW], { env: w.env });
    assert.equal(withKey.exitCode, 0, withKey.stderr);
    assert.ok(generate().length === 1 && server.requests.some((r) => r.action === 'batchEmbedContents'));
    server.reset();
    const { GEMINI_API_KEY: _unused, ...noKey } = w.env;
    const offline = await runCliAsync(['prune', w.file, '-o', join(w.dir, 'b.jsonl'), ...WINDOW], { env: noKey });
    assert.equal(offline.exitCode, 0, offline.stderr);
    assert.equal(server.requests.length, 0);
  });

  test('nothing to prune: nothing is sent, not even for embeddings; a dry run writes no archive', async () => {
    const w = workspace();
    // No --window: 2k tokens is far below the default soft limit.
    const result = await runCliAsync(['prune', w.file, '-o', join(w.dir, 'same.jsonl')], { env: w.env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(server.requests.length, 0, 'the transcript was sent with nothing to prune');
    const dry = await runCliAsync(['prune', w.file, '--dry-run', '--embedder', 'gemini', ...WINDOW], { env: w.env });
    assert.equal(dry.exitCode, 0, dry.stderr);
    assert.ok(!existsSync(w.archive), 'a dry run created the archive');
  });

  test('--summarizer gemini with no key is a usage error that says how to set one', () => {
    const w = workspace();
    const { GEMINI_API_KEY: _unused, ...noKey } = w.env;
    const result = runCli(['prune', w.file, '--in-place', '--summarizer', 'gemini', ...WINDOW], { env: noKey });
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /--summarizer gemini needs a Gemini API key/);
    assert.match(result.stderr, /GEMINI_API_KEY/);
    assert.ok(readFileSync(w.file).equals(w.original));
  });

  test('GOOGLE_API_KEY and the config file are read too, and the key never shows in --json errors', async () => {
    const w = workspace();
    const { GEMINI_API_KEY: _unused, ...noKey } = w.env;
    // Readable by you alone, as `init` writes a key: a key is only taken from such a file.
    writeFileSync(join(w.dir, 'devs-ctx.config.json'), JSON.stringify({ geminiApiKey: KEY, embedder: 'local' }), { mode: 0o600 });
    server.failAlways({ kind: 'status', status: 403 }, { action: 'generateContent' });
    const result = await runCliAsync(['prune', 'session.jsonl', '--in-place', '--json', '--summarizer', 'gemini', ...WINDOW], { env: noKey, cwd: w.dir });
    assert.equal(result.exitCode, 5, result.stdout);
    assert.equal(generate()[0]?.headers['x-goog-api-key'], KEY, 'the config file key was used');
    assertNoKey(result);
    const error = JSON.parse(result.stdout) as { error: { code: string; message: string; hint: string } };
    assert.match(error.error.message, /HTTP 403/);
    assert.match(error.error.hint, /API key/);
    server.reset();
    rmSync(join(w.dir, 'devs-ctx.config.json'));
    const google = await runCliAsync(['prune', w.file, '-o', join(w.dir, 'g.jsonl'), '--summarizer', 'gemini', '--embedder', 'local', ...WINDOW], {
      env: { ...noKey, GOOGLE_API_KEY: KEY },
      cwd: w.dir,
    });
    assert.equal(google.exitCode, 0, google.stderr);
    assert.equal(generate()[0]?.headers['x-goog-api-key'], KEY, 'GOOGLE_API_KEY was used');
    assertNoKey(google);
  });
});

test('a config file others can read (a project config that came with a clone) lends no geminiApiKey: it is ignored with a warning, and nothing is sent', async () => {
  const w = workspace();
  const { GEMINI_API_KEY: _unused, ...noKey } = w.env;
  const config = join(w.dir, 'devs-ctx.config.json');
  writeFileSync(config, JSON.stringify({ geminiApiKey: 'A-CLONED-PROJECT-KEY', summarizer: 'gemini', embedder: 'gemini' }));
  chmodSync(config, 0o644);
  server.reset();
  const result = await runCliAsync(['prune', 'session.jsonl', '--dry-run', ...WINDOW], { env: noKey, cwd: w.dir });
  assert.equal(result.exitCode, 2, result.stderr);
  assert.match(
    result.stderr,
    /warning: ignoring "geminiApiKey" in [^\n]*devs-ctx\.config\.json: other users can read or write the file \(mode 644\); a key is read only from a config file only you can read \(chmod 600 it if the key is yours\)/,
  );
  assert.match(result.stderr, /needs a Gemini API key, and none is set/);
  assert.equal(server.requests.length, 0, 'nothing sent');
  assert.doesNotMatch(result.stderr + result.stdout, /A-CLONED-PROJECT-KEY/);
  assert.ok(readFileSync(w.file).equals(w.original));

  // Under umask 077 a clone's config is 0600 and yours: git tracking it still says where it came from.
  chmodSync(config, 0o600);
  for (const args of [
    ['init', '-q'],
    ['add', 'devs-ctx.config.json'],
  ])
    assert.equal(spawnSync('git', args, { cwd: w.dir }).status, 0);
  const tracked = await runCliAsync(['prune', 'session.jsonl', '--dry-run', ...WINDOW], { env: noKey, cwd: w.dir });
  assert.equal(tracked.exitCode, 2, tracked.stderr);
  assert.match(tracked.stderr, /ignoring "geminiApiKey" in [^\n]*: git tracks the file/);
  assert.equal(server.requests.length, 0, 'nothing sent');
});

describe('every failure mode: exit 5, the input byte-identical, nothing archived', () => {
  const cases: { name: string; fault: Fault; always?: boolean; message: RegExp; args?: string[] }[] = [
    // Retry-After: 0 (a gateway's answer): all four attempts at once. What is checked here is the
    // outcome; the backoff itself is checked in gemini-retry and gemini-summarizer's retries.
    { name: 'HTTP 500 on every attempt', fault: { kind: 'status', status: 500, retryAfterSeconds: 0 }, always: true, message: /HTTP 500.*after 4 attempts/ },
    { name: 'HTTP 503 on every attempt', fault: { kind: 'status', status: 503, retryAfterSeconds: 0 }, always: true, message: /HTTP 503.*after 4 attempts/ },
    {
      name: 'HTTP 429 asking to wait longer than allowed',
      fault: { kind: 'status', status: 429, retryAfterSeconds: 3600 },
      always: true,
      message: /asked to wait 3600 s/,
    },
    { name: 'a hung request', fault: { kind: 'hang' }, always: true, message: /no answer within 1 s/, args: ['--timeout', '1'] },
    { name: 'malformed JSON', fault: { kind: 'malformed' }, message: /not valid JSON/ },
    { name: 'empty candidates', fault: { kind: 'empty-candidates' }, message: /was empty/ },
    { name: 'SAFETY', fault: { kind: 'finish', finishReason: 'SAFETY' }, message: /finishReason SAFETY/ },
    { name: 'MAX_TOKENS', fault: { kind: 'finish', finishReason: 'MAX_TOKENS', text: '## Goal\nREQ-201' }, message: /truncated \(finishReason MAX_TOKENS\)/ },
    { name: 'a blocked prompt', fault: { kind: 'prompt-blocked', blockReason: 'OTHER' }, message: /blockReason OTHER/ },
    { name: 'an answer that drops the identifiers', fault: { kind: 'reply', text: '## Goal\nSomething was reconciled.' }, message: /dropped most identifiers/ },
    {
      name: 'an answer larger than its input',
      fault: { kind: 'reply', text: `## Goal\n${'src/ledger/reconcile.ts REQ-201 reconcileBatch1 '.repeat(300)}` },
      message: /larger than the \d+ tokens it summarizes/,
    },
  ];
  for (const { name, fault, always, message, args = [] } of cases) {
    test(name, async () => {
      const w = workspace();
      if (always) server.failAlways(fault, { action: 'generateContent' });
      else server.fail(fault, { action: 'generateContent' });
      const result = await runCliAsync(['prune', w.file, '--in-place', '--summarizer', 'gemini', '--embedder', 'local', ...args, ...WINDOW], { env: w.env });
      assert.equal(result.exitCode, 5, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /nothing was written/);
      assertNoKey(result);
      assert.ok(readFileSync(w.file).equals(w.original), 'the input changed');
      if (existsSync(w.archive)) {
        const recall = JSON.parse(runCli(['recall', 'marmalade', '--archive', w.archive, '--json'], { env: w.env }).stdout) as { hits: unknown[] };
        assert.equal(recall.hits.length, 0, 'nothing was archived');
      }
    });
  }

  test('--fallback extractive: the offline summary is written, and stderr and --json say why', async () => {
    const w = workspace();
    server.failAlways({ kind: 'status', status: 500, retryAfterSeconds: 0 }, { action: 'generateContent' });
    const out = join(w.dir, 'out.jsonl');
    const result = await runCliAsync(['prune', w.file, '-o', out, '--summarizer', 'gemini', '--embedder', 'local', '--fallback', 'extractive', ...WINDOW], {
      env: w.env,
    });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /HTTP 500[\s\S]*used the offline extractive instead \(--fallback extractive\)/);
    assert.ok(readFileSync(out, 'utf8').includes('[Context Summary]'));
    server.reset();
    server.failAlways({ kind: 'finish', finishReason: 'SAFETY' }, { action: 'generateContent' });
    const json = await runCliAsync(
      ['prune', w.file, '-o', join(w.dir, 'out2.jsonl'), '--json', '--summarizer', 'gemini', '--embedder', 'local', '--fallback', 'extractive', ...WINDOW],
      { env: w.env },
    );
    assert.equal(json.exitCode, 0, json.stdout);
    assert.equal(json.stderr, '');
    const report = JSON.parse(json.stdout) as Report;
    assert.equal(report.providers.fallback.length, 1);
    assert.match(report.providers.fallback[0]!.reason, /SAFETY/);
    assert.equal(report.providers.fallback[0]!.usedInstead, 'extractive');
    assert.match(report.summary?.text ?? '', /^\[Context Summary\]\n\d+ earlier turns were removed and archived by devs-ctx\. What they held/);
  });

  test('a 429 with Retry-After, then success: retried once, reported', async () => {
    const w = workspace();
    server.fail({ kind: 'status', status: 429, retryAfterSeconds: 1 }, { action: 'generateContent' });
    const result = await runCliAsync(['prune', w.file, '--in-place', '--json', '--summarizer', 'gemini', '--embedder', 'local', ...WINDOW], { env: w.env });
    assert.equal(result.exitCode, 0, result.stdout);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.providers.retries, 1);
    assert.equal(report.providers.requests, 2);
    const [first, second] = generate();
    assert.ok(second!.receivedAt - first!.receivedAt >= 950);
  });

  test('Ctrl-C while a request is in flight: exit 130, nothing written, nothing archived', async () => {
    const w = workspace();
    server.failAlways({ kind: 'hang' }, { action: 'generateContent' });
    // Ctrl-C once the request is in flight (the server has it and will never answer).
    const result = await runCliAsync(['prune', w.file, '--in-place', '--summarizer', 'gemini', '--embedder', 'local', ...WINDOW], {
      env: w.env,
      interruptWhen: server.received(1),
    });
    assert.equal(result.signal, null, 'it exits by itself, not killed by the signal');
    assert.equal(result.exitCode, 130, result.stderr);
    assert.match(result.stderr, /interrupted/);
    assert.ok(readFileSync(w.file).equals(w.original));
    assert.ok(!existsSync(`${w.file}.devs-ctx.lock`), 'the lock was released');
  });
});

describe('--embedder gemini', () => {
  test('turns are ranked by Gemini embeddings, cached in the archive: a second run embeds nothing again', async () => {
    const w = workspace();
    const first = await runCliAsync(
      ['prune', w.file, '-o', join(w.dir, 'out.jsonl'), '--json', '--embedder', 'gemini', '--summarizer', 'extractive', ...WINDOW],
      { env: w.env },
    );
    assert.equal(first.exitCode, 0, first.stdout + first.stderr);
    const firstReport = JSON.parse(first.stdout) as Report;
    assert.equal(firstReport.providers.embedder, 'gemini:gemini-embedding-001');
    const embedded = server.requests.filter((r) => r.action === 'batchEmbedContents');
    assert.ok(embedded.length >= 1);
    assert.ok(
      embedded.every((r) => !r.rawBody.includes(PLANTED)),
      'the planted token was embedded',
    );
    assert.ok(firstReport.providers.embeddingTokens > 0);
    // Pinned turns (the system prompt, the PRD) are never sent to be embedded.
    const pinned = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .slice(0, 2)
      .map((l) => (JSON.parse(l) as { content: string }).content.slice(0, 40));
    for (const text of pinned)
      assert.ok(
        embedded.every((r) => !r.rawBody.includes(JSON.stringify(text).slice(1, -1))),
        `pinned text was embedded: ${text}`,
      );
    server.reset();
    // A dry run reads the vectors the prune cached, and writes nothing to the archive.
    const archiveBefore = readFileSync(w.archive);
    const second = await runCliAsync(['prune', w.file, '--dry-run', '--json', '--embedder', 'gemini', '--summarizer', 'extractive', ...WINDOW], { env: w.env });
    assert.equal(second.exitCode, 0, second.stdout);
    const report = JSON.parse(second.stdout) as Report;
    // The goal and every turn were embedded before: all from the cache.
    assert.equal(server.requests.length, 0, 'nothing was embedded twice');
    assert.ok(readFileSync(w.archive).equals(archiveBefore), 'the dry run changed the archive');
    assert.ok(report.providers.embeddingsCached > 0);
  });

  test('--fallback extractive ranks with the local embedder when Gemini embeddings fail', async () => {
    const w = workspace();
    // Retry-After: 0, every retry at once, so the four attempts cost no waiting.
    server.failAlways({ kind: 'status', status: 503, retryAfterSeconds: 0 }, { action: 'batchEmbedContents' });
    const result = await runCliAsync(
      ['prune', w.file, '--dry-run', '--json', '--embedder', 'gemini', '--summarizer', 'extractive', '--fallback', 'extractive', ...WINDOW],
      { env: w.env },
    );
    assert.equal(result.exitCode, 0, result.stdout);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.providers.fallback[0]?.usedInstead, 'local-bm25');
    const without = await runCliAsync(['prune', w.file, '--in-place', '--embedder', 'gemini', '--summarizer', 'extractive', ...WINDOW], { env: w.env });
    assert.equal(without.exitCode, 5, without.stderr);
    assert.ok(readFileSync(w.file).equals(w.original));
  });
});

describe('progress on a TTY', () => {
  test('the spinner says "summarizing chunk k of n" while a large removal is summarized in parts, then merged', async () => {
    const { main } = await import('../src/cli/main.js');
    const { PassThrough } = await import('node:stream');
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-gemini-chunks-'));
    const file = join(dir, 'big.jsonl');
    // ~560k tokens: soft urgency; the prune removes ~300k, more than one 200k-token request.
    const filler = 'the reconciler matched ledger rows against bank statements and logged each decision carefully '.repeat(120);
    const lines = [
      JSON.stringify({ id: 'sys', role: 'system', type: 'system', content: 'You are a coding agent.' }),
      JSON.stringify({ id: 'prd', role: 'user', type: 'prd', content: 'PRD: reconcile the ledger.' }),
      ...Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({
          id: `m${i}`,
          role: i % 2 ? 'assistant' : 'user',
          type: 'message',
          content: `step ${i}: edited src/ledger/mod${i % 5}.ts calling reconcileBatch${i % 5}; ${filler}`,
        }),
      ),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    server.failAlways({ kind: 'slow', delayMs: 400 }, { action: 'generateContent' });
    let err = '';
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    stderr.on('data', (d: Buffer) => (err += d.toString()));
    const stdout = Object.assign(new PassThrough(), { isTTY: false });
    stdout.resume();
    const exitCode = await main(['prune', file, '-o', join(dir, 'out.jsonl'), '--summarizer', 'gemini', '--embedder', 'local', '--strategy', 'recency'], {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env: {
        NO_COLOR: '1',
        GEMINI_API_KEY: KEY,
        DEVS_CTX_GEMINI_BASE_URL: server.url,
        DEVS_CTX_ARCHIVE: join(dir, 'archive.sqlite'),
        DEVS_CTX_CACHE_DIR: join(dir, 'cache'),
      },
      cwd: dir,
    });
    assert.equal(exitCode, 0, err);
    const chunks = generate().length - 1;
    assert.ok(chunks >= 2, `expected chunked requests, got ${generate().length}`);
    for (let k = 1; k <= chunks; k++) assert.match(err, new RegExp(`summarizing chunk ${k} of ${chunks}`));
    assert.match(err, new RegExp(`merging ${chunks} chunk summaries`));
    assert.ok(!err.includes(KEY));
  });
});
