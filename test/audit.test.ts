import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readAgentHistory } from '../src/core/agent-history.js';
import { extractIdentifiers } from '../src/core/identifiers.js';
import { runCli } from './helpers/cli.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';

const sample01 = join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', '70d782f7-b303-4e48-9512-6bec16c37abd.jsonl');

interface AuditJson {
  schemaVersion: number;
  format: string;
  compactions: {
    line: number;
    compactedTurns: number;
    tokensBefore: number;
    recordedTokensBefore?: number;
    tokensAfter: number;
    identifiers: number;
    kept: { kind: string; key: string }[];
    lost: { kind: string; key: string; recallQuery: string; turnId: string }[];
    keptShare: number;
  }[];
  totals: { compactions: number; identifiers: number; kept: number; lost: number; keptShare: number | null };
}

const line = (value: unknown): string => JSON.stringify(value);

/** A Claude Code session: work on two files and an error, then a compaction whose summary names only one file. */
function claudeSession(): string {
  const base = { isSidechain: false, userType: 'external', cwd: '/home/dev/app', sessionId: 's1', version: '2.1.20' };
  return [
    line({
      ...base,
      type: 'user',
      parentUuid: null,
      uuid: 'u1',
      timestamp: '2026-03-01T10:00:00Z',
      message: { role: 'user', content: 'Fix the login bug in src/app.ts. Never edit src/db/schema.ts by hand.' },
    }),
    line({
      ...base,
      type: 'assistant',
      parentUuid: 'u1',
      uuid: 'a1',
      timestamp: '2026-03-01T10:00:01Z',
      message: { id: 'm1', role: 'assistant', model: 'x', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test -- login' } }] },
    }),
    line({
      ...base,
      type: 'user',
      parentUuid: 'a1',
      uuid: 'r1',
      timestamp: '2026-03-01T10:00:02Z',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'TypeError: session.token is undefined at src/app.ts:42' }] },
    }),
    line({
      ...base,
      type: 'system',
      subtype: 'compact_boundary',
      parentUuid: null,
      logicalParentUuid: 'r1',
      uuid: 'b1',
      timestamp: '2026-03-01T11:00:00Z',
      content: 'Conversation compacted',
      compactMetadata: { trigger: 'auto', preTokens: 150000 },
    }),
    line({
      ...base,
      type: 'user',
      parentUuid: 'b1',
      uuid: 's1',
      isCompactSummary: true,
      timestamp: '2026-03-01T11:00:00Z',
      message: { role: 'user', content: 'This session is being continued. Summary: fixing login in src/app.ts.' },
    }),
    '',
  ].join('\n');
}

describe('devs-ctx audit', () => {
  it('reports per compaction the identifiers the summary kept and lost, each lost one with its recall query', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-audit-'));
    const file = join(dir, 'session.jsonl');
    writeFileSync(file, claudeSession());
    const result = runCli(['audit', file, '--json']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
    const report = JSON.parse(result.stdout) as AuditJson;
    assert.equal(report.compactions.length, 1);
    const [c] = report.compactions;
    assert.ok(c);
    assert.equal(c.compactedTurns, 3);
    assert.equal(c.recordedTokensBefore, 150000);
    assert.ok(c.tokensBefore > 0 && c.tokensAfter > 0);
    assert.ok(
      c.kept.some((k) => k.kind === 'file' && k.key === 'app.ts'),
      'src/app.ts is in the summary',
    );
    const schema = c.lost.find((l) => l.kind === 'file' && l.key === 'schema.ts');
    assert.ok(schema, 'src/db/schema.ts is not');
    assert.equal(schema.recallQuery, 'schema.ts');
    assert.equal(schema.turnId, 'u1');
    assert.ok(c.lost.some((l) => l.kind === 'error' && /typeerror/.test(l.key)));
    assert.ok(c.lost.some((l) => l.kind === 'command' && l.recallQuery === 'npm test --'));
    assert.ok(c.lost.some((l) => l.kind === 'instruction'));
    assert.equal(report.totals.kept + report.totals.lost, report.totals.identifiers);

    const text = runCli(['audit', file]);
    assert.equal(text.exitCode, 0);
    assert.match(
      text.stdout,
      /Compaction 1 \(line 4 2026-03-01T11:00:00Z, auto\): 3 turns, [\d,]+ tokens \(the agent counted 150,000\) -> summary of [\d,]+ tokens/,
    );
    assert.match(text.stdout, /devs-ctx recall "schema\.ts" --file /);
  });

  it('reads Codex compacted records: the message and the replacement history are what was kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-audit-'));
    const file = join(dir, 'rollout.jsonl');
    const at = (i: number) => `2026-03-01T10:00:0${i}Z`;
    writeFileSync(
      file,
      [
        line({ timestamp: at(0), type: 'session_meta', payload: { id: 'x', cwd: '/w', originator: 'codex_cli_rs', cli_version: '0.146.0' } }),
        line({
          timestamp: at(1),
          type: 'response_item',
          payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'rename parseConfig in lib/config.rs and lib/loader.rs' }] },
        }),
        line({
          timestamp: at(2),
          type: 'response_item',
          payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'cargo test'] }), call_id: 'c1' },
        }),
        line({
          timestamp: at(3),
          type: 'response_item',
          payload: { type: 'function_call_output', call_id: 'c1', output: 'error[E0425]: cannot find function parseConfig' },
        }),
        line({
          timestamp: at(4),
          type: 'compacted',
          payload: {
            message: 'Renaming parseConfig in lib/config.rs.',
            replacement_history: [
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'rename parseConfig in lib/config.rs and lib/loader.rs' }] },
            ],
          },
        }),
        '',
      ].join('\n'),
    );
    const report = JSON.parse(runCli(['audit', file, '--json']).stdout) as AuditJson;
    assert.equal(report.format, 'codex');
    assert.equal(report.compactions.length, 1);
    const [c] = report.compactions;
    assert.ok(
      c?.kept.some((k) => k.key === 'loader.rs'),
      'the replacement history still names lib/loader.rs',
    );
    assert.ok(c?.kept.some((k) => k.key === 'parseconfig'));
    assert.ok(c?.lost.some((l) => l.kind === 'command' && l.recallQuery === 'cargo test'));
  });

  it('reads Gemini CLI compressions: a $set.messages checkpoint with a <state_snapshot> after the turns it replaced', () => {
    const report = JSON.parse(runCli(['audit', join(repoRoot, 'fixtures', 'gemini', 'set-messages-checkpoint.jsonl'), '--json']).stdout) as AuditJson;
    assert.equal(report.format, 'gemini');
    assert.equal(report.compactions.length, 1);
    assert.equal(report.compactions[0]?.line, 5);
    assert.equal(report.compactions[0]?.compactedTurns, 3, 'u1, g1 and the /compress request');
    assert.ok((report.compactions[0]?.tokensAfter ?? 0) > 0);
  });

  it('a session without compactions: says so, exit 0; a missing file: exit 3', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-audit-'));
    const file = join(dir, 'plain.jsonl');
    writeFileSync(file, claudeSession().split('\n').slice(0, 3).join('\n'));
    const none = runCli(['audit', file]);
    assert.equal(none.exitCode, 0);
    assert.match(none.stdout, /no compaction by the agent/);
    assert.equal(runCli(['audit', join(dir, 'missing.jsonl')]).exitCode, 3);
  });

  it("the real sample with two compactions: every identifier is kept or lost, with the agent's own counts", { skip: realdataSkip }, () => {
    const report = JSON.parse(runCli(['audit', sample01, '--json']).stdout) as AuditJson;
    assert.equal(report.compactions.length, 2);
    assert.deepEqual(
      report.compactions.map((c) => c.recordedTokensBefore),
      [176700, 157925],
    );
    for (const c of report.compactions) {
      assert.equal(c.kept.length + c.lost.length, c.identifiers);
      assert.ok(c.identifiers > 0 && c.keptShare < 1, 'a summary of ~2k tokens cannot name everything of ~100k');
      for (const lost of c.lost) assert.ok(lost.recallQuery.length > 0);
    }
  });

  it('identifier extraction stays linear on a huge unbroken line (no regex backtracking blow-up)', () => {
    const text = `${'a'.repeat(1_000_000)} ${'Ab'.repeat(200_000)} ${' x/'.repeat(50_000)} src/app.ts`;
    const history = readAgentHistory([{ index: 0, line: 1, values: [{ type: 'user', uuid: 'u', message: { role: 'user', content: text } }] }], 'claude-code');
    assert.ok(Array.isArray(extractIdentifiers(history.turns)));
  });
});

it("a Claude Code session devs-ctx pruned: its boundary is devs-ctx's prune, not one of the agent's compactions", { skip: realdataSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-audit-pruned-'));
  const source = join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', '70d782f7-b303-4e48-9512-6bec16c37abd.jsonl');
  const env = { DEVS_CTX_ARCHIVE: join(dir, 'a.sqlite') };
  type Audited = { trigger?: string; compactedTurns: number; tokensAfter: number; keptShare: number | null };
  const compactions = (file: string): Audited[] =>
    (JSON.parse(runCli(['audit', file, '--json'], { cwd: dir, env }).stdout) as { compactions: Audited[] }).compactions.map(
      ({ trigger, compactedTurns, tokensAfter, keptShare }) => ({ ...(trigger !== undefined ? { trigger } : {}), compactedTurns, tokensAfter, keptShare }),
    );
  const before = compactions(source);
  assert.equal(runCli(['prune', source, '--force', '--target', '60000', '-o', join(dir, 'p.jsonl')], { cwd: dir, env }).exitCode, 0);
  // The agent's compactions, each with its own summary (the one devs-ctx re-linked after its boundary), and no other.
  assert.deepEqual(compactions(join(dir, 'p.jsonl')), before);
  // And analyze's account of the session's life: the agent compacted as often as before the prune.
  const lifetime = (file: string): unknown => (JSON.parse(runCli(['analyze', file, '--json'], { cwd: dir, env }).stdout) as { lifetime: unknown }).lifetime;
  assert.deepEqual(lifetime(join(dir, 'p.jsonl')), lifetime(source));
});
