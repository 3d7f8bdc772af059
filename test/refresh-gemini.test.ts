import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliAsync } from './helpers/cli.js';
import { fakeGeminiForFile, startFakeGemini } from './helpers/fake-gemini.js';
import { repoRoot } from './helpers/realdata.js';

/** `refresh` condensing a long TAS/PRD with Gemini [issue 5: "condensed by the configured summarizer"]. */

const KEY = 'refresh-key-91c3';
const PLANTED = `AKIA${'Z7Q2'.repeat(4)}`;
// What the fake model answers: a condensed TAS that keeps the requirement ids.
const CONDENSED = '- [TAS-001] Postgres only\n- [TAS-002] no ORM\n- [TAS-003] idempotent webhooks\n- [TAS-004] retries with backoff';

const server = fakeGeminiForFile({ apiKey: KEY, respond: () => CONDENSED });

function workspace(): { dir: string; file: string; tas: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-gemini-'));
  const file = join(dir, 's.jsonl');
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), file);
  const tas = join(dir, 'tas.md');
  const sections = Array.from(
    { length: 4 },
    (_, i) => `## [TAS-00${i + 1}] Decision ${i + 1}\n${'Rationale and history of this decision, in detail. '.repeat(60)}`,
  );
  writeFileSync(tas, `# TAS\nDeploy key: ${PLANTED}\n${sections.join('\n\n')}\n`);
  return { dir, file, tas, env: { GEMINI_API_KEY: KEY, DEVS_CTX_GEMINI_BASE_URL: server.url, DEVS_CTX_CACHE_DIR: join(dir, 'cache') } };
}

describe('refresh --summarizer gemini', () => {
  test('a TAS over budget is condensed by Gemini, once (cached by content), with secrets masked', async () => {
    const w = workspace();
    const args = ['refresh', w.file, '-o', join(w.dir, 'out.jsonl'), '--json', '--tas', w.tas, '--refresh-tokens', '300'];
    const first = await runCliAsync(args, { env: w.env });
    assert.equal(first.exitCode, 0, first.stdout + first.stderr);
    const report = JSON.parse(first.stdout) as { injected: { text: string; condensed: boolean; condenser?: { name: string; requests: number } } };
    assert.equal(report.injected.condensed, true);
    assert.match(report.injected.text, /\[TAS-003\] idempotent webhooks/);
    assert.equal(report.injected.condenser?.name, 'gemini:gemini-3.5-flash');
    const sent = server.requests.filter((r) => r.action === 'generateContent');
    assert.equal(sent.length, 1);
    assert.ok(!sent[0]!.rawBody.includes(PLANTED), 'the deploy key was sent');
    assert.match(sent[0]!.rawBody, /DATA/);
    assert.ok(readFileSync(join(w.dir, 'out.jsonl'), 'utf8').includes('[TAS-003] idempotent webhooks'));
    server.reset();
    const second = await runCliAsync(args, { env: w.env });
    assert.equal(second.exitCode, 0, second.stdout);
    assert.equal(server.requests.length, 0, 'an unchanged TAS is not condensed again');
  });

  test('a failed condensation is exit 5 with nothing written; --fallback extractive uses the outline', async () => {
    const w = workspace();
    const original = readFileSync(w.file);
    server.failAlways({ kind: 'finish', finishReason: 'SAFETY' }, { action: 'generateContent' });
    const failed = await runCliAsync(['refresh', w.file, '--in-place', '--tas', w.tas, '--refresh-tokens', '300'], { env: w.env });
    assert.equal(failed.exitCode, 5, failed.stderr);
    assert.match(failed.stderr, /finishReason SAFETY/);
    assert.ok(readFileSync(w.file).equals(original));
    const fallback = await runCliAsync(['refresh', w.file, '--in-place', '--tas', w.tas, '--refresh-tokens', '300', '--fallback', 'extractive'], {
      env: w.env,
    });
    assert.equal(fallback.exitCode, 0, fallback.stderr);
    assert.match(fallback.stderr, /used the offline outline instead/);
    assert.match(readFileSync(w.file, 'utf8'), /\[CONTEXT REFRESH\]/);
  });

  test('--summarizer extractive stays offline even with a key', async () => {
    const w = workspace();
    const result = await runCliAsync(
      ['refresh', w.file, '-o', join(w.dir, 'o.jsonl'), '--tas', w.tas, '--refresh-tokens', '300', '--summarizer', 'extractive'],
      { env: w.env },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(server.requests.length, 0);
  });
});

describe('replay --summarizer gemini', () => {
  test('offline by default even with a key; with the flag, simulated prunes are summarized by Gemini and the cost is noted', async () => {
    // A model that answers like a summarizer (the server above answers every request with a condensed TAS).
    const summarizer = await startFakeGemini({ apiKey: KEY });
    after(() => summarizer.close());
    const w = { ...workspace(), env: { ...workspace().env, DEVS_CTX_GEMINI_BASE_URL: summarizer.url } };
    const server = summarizer;
    const args = ['replay', join(repoRoot, 'fixtures/devs/replay-webhook-session.jsonl'), '--window', '8000', '--json', '--no-refresh'];
    const offline = await runCliAsync(args, { env: w.env });
    assert.equal(offline.exitCode, 0, offline.stderr);
    assert.equal(server.requests.length, 0, 'a replay sent text without being asked');
    const remote = await runCliAsync([...args, '--summarizer', 'gemini'], { env: w.env });
    assert.equal(remote.exitCode, 0, remote.stderr);
    const report = JSON.parse(remote.stdout) as { prunes: number; notes: string[]; events: { removedTurnCount?: number }[] };
    // Every prune that removed turns wrote a summary, and Gemini wrote each.
    const summaries = report.events.filter((e) => (e.removedTurnCount ?? 0) > 0).length;
    assert.ok(summaries >= 2, `prunes with a summary: ${summaries}`);
    assert.equal(server.requests.filter((r) => r.action === 'generateContent').length, summaries);
    assert.ok(
      report.notes.some((n) => /summaries by gemini:gemini-3\.5-flash.*Gemini requests/.test(n)),
      report.notes.join(' | '),
    );
  });
});
