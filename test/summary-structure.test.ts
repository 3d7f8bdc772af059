import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { summaryBudgetFor, summaryRule } from '../src/core/prune/plan.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { ExtractiveSummarizer, extractFacts } from '../src/providers/extractive-summarizer.js';
import { cleanText, outcomeOf, quotable, readStructure, stripReminders } from '../src/providers/session-structure.js';
import type { SessionStructure } from '../src/providers/session-structure.js';
import { SUMMARY_SECTIONS } from '../src/providers/summary-sections.js';
import { runInProcess } from './helpers/cli.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';

const counter = loadCounter('o200k_base');
const skip = { skip: realdataSkip };

function turnsOf(sub: string): ConversationTurn[] {
  const [path] = realdataFiles(sub);
  assert.ok(path, `a real transcript under ${sub}`);
  return readTranscript(parseDocument(readFileSync(path), { path })).entries.map((e) => e.turn);
}

function fileCounts(structure: SessionStructure, suffix: string) {
  const file = structure.files.find((f) => f.path.endsWith(suffix));
  assert.ok(file, `${suffix} is among the files touched: ${structure.files.map((f) => f.path).join(', ')}`);
  return file.counts;
}

/** What a reader, a reminder or a command wrapper injects: never quoted in a summary. */
function assertNothingInjected(summary: string, name: string): void {
  for (const line of summary.split('\n')) {
    assert.doesNotMatch(line, /(?:^|\s)\d+→/, `${name}: a line-number prefix is quoted: ${line}`);
    assert.doesNotMatch(line, /system-reminder/, `${name}: a system reminder is quoted: ${line}`);
    assert.doesNotMatch(line, /Caveat: The messages below|<command-name>|<local-command-|<bash-stdout>/, `${name}: a command caveat is quoted: ${line}`);
  }
}

describe('the offline summary reads the structure of real transcripts', () => {
  test('user requests: verbatim and in order; interruptions, caveats, skill bodies and slash-command output left out', skip, () => {
    const logging = readStructure(turnsOf('claude-code/04-entire-v2.1.7-malformed-concatenated-line'));
    assert.equal(logging.requests[0]?.text, 'We should add the agent name to any logging');
    assert.match(logging.requests[1]?.text ?? '', /^can we add a simple tests assuming we have tests for logging/);
    assert.equal(logging.requests.at(-1)?.text, 'how can we know which agent is active ?');
    const hive = readStructure(turnsOf('claude-code/07-alignment-hive-v2.0.76-raw-queue-ops'));
    for (const { text } of [...logging.requests, ...hive.requests]) {
      assert.doesNotMatch(text, /^\[Request interrupted|^Caveat:|<command-name>|<local-command-stdout>|^Base directory for this skill/, text);
    }
    assert.match(hive.requests[0]?.text ?? '', /^I'd like to start commiting the extracted session files/);
    // Codex wraps the request in IDE context: the request is what the user typed under it.
    const codex = readStructure(turnsOf('codex/01-agentcmd-v0.40.0-vscode'));
    assert.ok(codex.requests.every((r) => !r.text.startsWith('<environment_context>') && !r.text.startsWith('# Context from my IDE setup')));
    assert.ok(codex.requests.some((r) => r.text === 'Why do we need stats for the team?'));
  });

  test('files touched: read, edited, created and deleted, counted from tool inputs (Claude Code, Codex apply_patch, Gemini, OpenHands)', skip, () => {
    const claude = readStructure(turnsOf('claude-code/04-entire-v2.1.7-malformed-concatenated-line'));
    assert.deepEqual(fileCounts(claude, 'cmd/entire/cli/logging/context_test.go'), { read: 1, edited: 8, created: 0, deleted: 0 });
    assert.deepEqual(fileCounts(claude, 'cmd/entire/cli/logging/logger.go'), { read: 1, edited: 1, created: 0, deleted: 0 });
    const codex = readStructure(turnsOf('codex/01-agentcmd-v0.40.0-vscode'));
    assert.equal(fileCounts(codex, 'settings/teams/components/TeamSheet.tsx').edited, 6);
    assert.ok(fileCounts(codex, 'settings/teams/hooks/useTeamWithStats.ts').created >= 1);
    const gemini = readStructure(turnsOf('gemini/02-entire-legacy-json-pretty-named-jsonl'));
    assert.deepEqual(fileCounts(gemini, 'docs/blue.md'), { read: 0, edited: 0, created: 1, deleted: 1 });
    const openhands = readStructure(turnsOf('trajectories/openhands'));
    assert.ok(fileCounts(openhands, 'src/libponyc/expr/match.c').edited >= 10);
  });

  test('commands run with their outcome and first error line', skip, () => {
    const claude = readStructure(turnsOf('claude-code/04-entire-v2.1.7-malformed-concatenated-line'));
    const lint = claude.commands.find((c) => c.command === 'mise run fmt && mise run lint');
    assert.equal(lint?.outcome, 'exit 1');
    assert.equal(lint?.errorLine, '[lint] ERROR task failed');
    const gemini = readStructure(turnsOf('gemini/01-agentcmd-legacy-json'));
    const pip = gemini.commands.find((c) => c.command === 'pip install RestrictedPython');
    assert.equal(pip?.outcome, 'exit 127');
    assert.match(pip?.errorLine ?? '', /pip: command not found/);
    const codex = readStructure(turnsOf('codex/01-agentcmd-v0.40.0-vscode'));
    const sed = codex.commands.find((c) => c.command === "sed -n '1,200p' 'packages/ui/hooks/use-api-list.ts'");
    assert.equal(sed?.outcome, 'exit 1');
    assert.match(sed?.errorLine ?? '', /No such file or directory/);
    assert.ok(codex.commands.filter((c) => c.outcome === 'ok').length > 50, 'successful runs are ok');
  });

  test('errors and what fixed them: a failed command and the later run of it that passed', () => {
    const turns: ConversationTurn[] = [
      { id: 'c1', role: 'assistant', type: 'tool_call', content: 'Bash {"command":"npm test"}' },
      { id: 'r1', role: 'tool', type: 'tool_result', content: 'Exit code 1\n   12→ noise\nError: expected 2, got 3\n    at sum (src/sum.ts:4:9)' },
      { id: 'c2', role: 'assistant', type: 'tool_call', content: 'Off by one in sum.\nEdit {"file_path":"src/sum.ts","old_string":"a","new_string":"b"}' },
      { id: 'r2', role: 'tool', type: 'tool_result', content: 'The file src/sum.ts has been updated.' },
      { id: 'c3', role: 'assistant', type: 'tool_call', content: 'Bash {"command":"npm test -- --run"}' },
      { id: 'r3', role: 'tool', type: 'tool_result', content: 'ok 3 tests' },
    ];
    const structure = readStructure(turns);
    assert.equal(structure.failures.length, 1);
    assert.equal(structure.failures[0]?.errorLine, 'Error: expected 2, got 3');
    return new ExtractiveSummarizer(counter).summarize({ turns, activeTask: 'fix sum', budgetTokens: 1000 }).then((summary) => {
      assert.match(
        summary,
        /## Errors and what fixed them\n- Bash: npm test — Error: expected 2, got 3 \(turn r1\) → fixed: `npm test -- --run` passed after changing src\/sum\.ts/,
      );
      assert.match(summary, /## Files touched\n- src\/sum\.ts — edited/);
      assert.match(summary, /## Commands run\n- `npm test` → exit 1: Error: expected 2, got 3\n- `npm test -- --run` → ok/);
    });
  });

  test('errors and what came next: without a later run that passed, the first assistant line after the failure, from another turn', async () => {
    const turns: ConversationTurn[] = [
      { id: 'a0', role: 'assistant', type: 'message', content: 'I will run the tests first.' },
      { id: 'c1', role: 'assistant', type: 'tool_call', content: 'Running them now.\nBash {"command":"npm test"}' },
      { id: 'r1', role: 'tool', type: 'tool_result', content: 'Exit code 1\nError: boom in the retry' },
      { id: 'a1', role: 'assistant', type: 'message', content: 'The retry reused the event id, so each retry gets its own.' },
      { id: 'a2', role: 'assistant', type: 'message', content: 'A later line is not the one shown.' },
    ];
    const summary = await new ExtractiveSummarizer(counter).summarize({ turns, activeTask: 'fix the retry', budgetTokens: 1000 });
    // Not the line before the failure, nor the failing call's own, nor a later one.
    assert.match(
      summary,
      /## Errors and what fixed them\n- Bash: npm test — Error: boom in the retry \(turn r1\) → then: The retry reused the event id, so each retry gets its own\./,
    );
  });

  test('files touched under one project are shown relative to it, as people write them', async () => {
    const turns: ConversationTurn[] = [
      { id: 'c1', role: 'assistant', type: 'tool_call', content: 'Read {"file_path":"/home/ana/proj/src/a.ts"}' },
      { id: 'r1', role: 'tool', type: 'tool_result', content: '     1→export const a = 1;' },
      { id: 'c2', role: 'assistant', type: 'tool_call', content: 'Edit {"file_path":"/home/ana/proj/cmd/tool/main.go","old_string":"x","new_string":"y"}' },
      { id: 'r2', role: 'tool', type: 'tool_result', content: 'The file /home/ana/proj/cmd/tool/main.go has been updated.' },
    ];
    const summary = await new ExtractiveSummarizer(counter).summarize({ turns, activeTask: '', budgetTokens: 1000 });
    assert.match(summary, /## Files touched\n- \(paths below are relative to \/home\/ana\/proj\/\)\n- cmd\/tool\/main\.go — edited\n- src\/a\.ts — read/);
    assertNothingInjected(summary, 'files');
  });

  test("outcomes in each agent's shape", () => {
    assert.deepEqual(outcomeOf('<tool_use_error>File has not been read yet.</tool_use_error>'), {
      failed: true,
      label: 'error',
      errorLine: 'File has not been read yet.',
    });
    assert.equal(outcomeOf('{"output":"boom\\n","metadata":{"exit_code":2,"duration_seconds":0.1}}').label, 'exit 2');
    assert.equal(outcomeOf('Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: 0').failed, false);
    assert.equal(outcomeOf('{"error":"Path must be absolute: ."}').errorLine, 'Path must be absolute: .');
    assert.equal(outcomeOf("The user doesn't want to proceed with this tool use.").label, 'rejected by the user');
    assert.equal(outcomeOf('plain output').failed, false);
  });

  test('injected and meta lines are never quoted, whatever they start with; lines that only look alike are', () => {
    const meta = [
      'Caveat: The messages below were generated by the user while running local commands.',
      '[Request interrupted by user for tool use]',
      'Base directory for this skill: /home/u/.claude/skills/x',
      'This session is being continued from a previous conversation that ran out of context.',
      '[devs-ctx: 1,200 tokens of tool output archived]',
      '[Context Summary]',
      '[CONTEXT REFRESH]',
      '<system-reminder>',
      'ran it: <command-name>/compact</command-name>',
      'saw </local-command-stdout> at the end',
      '   12→<user-prompt-submit-hook>',
    ];
    for (const line of meta) assert.equal(quotable(line), undefined, line);
    const plain = [
      'Caveat emptor: the messages below are mine',
      '[Request] interrupted by nobody',
      'Based on the directory for this skill',
      'This session is short',
      '[devs-ctx] is the tool',
      '[Context] Summary',
      'a < b and c > d',
      'Tests pass now.',
    ];
    for (const line of plain) assert.equal(quotable(line), line, line);
    assert.equal(quotable('   155→const x = 1;'), 'const x = 1;');
    assert.equal(cleanText('keep\nCaveat: The messages below x\n  7→also kept\n[CONTEXT REFRESH]'), 'keep\nalso kept');
    assert.equal(stripReminders('a<system-reminder>hidden</system-reminder>b<system-reminder>open'), 'ab');
    const same = 'no reminder here, only <b>tags</b>';
    assert.equal(stripReminders(same), same);
  });

  test('facts read through terminal colour codes, raw or written into JSON, and JSON-escaped line breaks', () => {
    const turns: ConversationTurn[] = [
      { id: 'c', role: 'assistant', type: 'tool_call', content: 'Bash {"command":"npm run build"}' },
      { id: 'r1', role: 'tool', type: 'tool_result', content: 'compiling \x1b[1msrc/app.ts\x1b[0m\n\x1b[31merror: build failed\x1b[0m' },
      { id: 'r2', role: 'tool', type: 'tool_result', content: 'log: \\u001b[32mlib/util.ts\\u001b[0m ok\\nerror: disk full\\ndone' },
    ];
    const facts = extractFacts(turns, ['files', 'errors']);
    assert.deepEqual(facts.files, ['src/app.ts', 'lib/util.ts']);
    assert.deepEqual(
      facts.errors.map((e) => e.replace(/ \(turn .*$/, '')),
      ['error: build failed', 'error: disk full'],
    );
  });

  test('the files named most come first, ties in the order first named, up to 60; fewer are all kept', () => {
    const result = (content: string, i: number): ConversationTurn => ({ id: `r${i}`, role: 'tool', type: 'tool_result', content });
    const twice = Array.from({ length: 10 }, (_, i) => `src/twice${i}.ts`);
    const once = Array.from({ length: 40 }, (_, i) => `lib/once${i}.ts`);
    // Fewer than 60 in all: every one, those named twice first.
    const few = [...once.slice(0, 20), ...twice, ...once.slice(20), ...twice].map(result);
    assert.deepEqual(extractFacts(few, ['files']).files, [...twice, ...once]);
    // More than 60: the three named three times, then the first 57 named once.
    const many = Array.from({ length: 70 }, (_, i) => `docs/n${i}.md`);
    const thrice = ['a/x.ts', 'b/y.ts', 'c/z.ts'];
    const turns = [...many.slice(0, 30), ...thrice, ...thrice, ...many.slice(30), ...thrice].map(result);
    assert.deepEqual(extractFacts(turns, ['files']).files, [...thrice, ...many.slice(0, 57)]);
  });

  test('current state and next step, open TODOs and done: the last message and the latest todo list', () => {
    const turns: ConversationTurn[] = [
      { id: 'u', role: 'user', type: 'message', content: 'add retries' },
      {
        id: 't',
        role: 'assistant',
        type: 'tool_call',
        content:
          'TodoWrite {"todos":[{"content":"Add retry to fetchUser","status":"completed"},{"content":"Document RETRY_LIMIT","status":"in_progress"},{"content":"Release 2.1","status":"pending"}]}',
      },
      { id: 'tr', role: 'tool', type: 'tool_result', content: 'Todos have been modified successfully.' },
      { id: 'm', role: 'assistant', type: 'message', content: 'Retries are in.\nNext I will document RETRY_LIMIT in README.md.' },
    ];
    return new ExtractiveSummarizer(counter).summarize({ turns, activeTask: 'add retries', budgetTokens: 1000 }).then((summary) => {
      assert.match(summary, /## Current state and next step\n- Retries are in\.\n- Next I will document RETRY_LIMIT in README\.md\./);
      assert.match(summary, /## Open TODOs\n- Document RETRY_LIMIT \(in_progress\)\n- Release 2\.1/);
      assert.match(summary, /## Done\n- Add retry to fetchUser/);
      assert.match(summary, /## User requests \(in order\)\n- add retries\n/);
      assert.match(summary, /latest request: turn u/);
    });
  });

  test('identifiers: ranked by how many lines name them (a name said again in one line counts once), ties first seen first, one inside an earlier one left out', async () => {
    const turns: ConversationTurn[] = [
      { id: 'u', role: 'user', type: 'message', content: 'Rename fetchUser to `loadUser` in src/api/user.ts: fetchUser, fetchUser and fetchUser again' },
      { id: 'a1', role: 'assistant', type: 'message', content: 'loadUser now reads RETRY_LIMIT; user.ts is done' },
      { id: 'a2', role: 'assistant', type: 'message', content: 'RETRY_LIMIT stays, and so does `loadUser`' },
    ];
    const summary = await new ExtractiveSummarizer(counter).summarize({ turns, activeTask: '', budgetTokens: 1000 });
    assert.match(summary, /## Identifiers\n- `loadUser`, `RETRY_LIMIT`, `src\/api\/user\.ts`, `fetchUser`\n/);
  });

  for (const path of realdataFiles()) {
    test(`no line-number prefix, system reminder or command caveat is quoted, sections in order: ${realdataName(path)}`, skip, async () => {
      const turns = readTranscript(parseDocument(readFileSync(path), { path })).entries.map((e) => e.turn);
      const removed = turns.slice(2);
      if (removed.length === 0) return;
      const tokens = removed.reduce((sum, t) => sum + counter.count(t.content), 0);
      const summary = await new ExtractiveSummarizer(counter).summarize({
        turns: removed,
        activeTask: '',
        budgetTokens: Math.max(summaryBudgetFor(tokens, summaryRule()), 400),
      });
      assertNothingInjected(summary, realdataName(path));
      const headings = [...summary.matchAll(/^## (.+)$/gm)].map((m) => m[1] ?? '');
      const order = headings.map((h) => SUMMARY_SECTIONS.indexOf(h as (typeof SUMMARY_SECTIONS)[number]));
      assert.ok(
        order.every((i) => i >= 0),
        `only the known sections: ${headings.join(', ')}`,
      );
      assert.deepEqual(
        [...order].sort((a, b) => a - b),
        order,
        'in the shared order',
      );
    });
  }
});

describe('the summary budget follows what a prune removes', () => {
  test('2 % of the removed tokens, at least 1,000 and at most 8,000, always less than what it replaces', () => {
    const rule = summaryRule();
    assert.equal(summaryBudgetFor(91_000, rule), 1820);
    assert.equal(summaryBudgetFor(10_000, rule), 1000);
    assert.equal(summaryBudgetFor(2_000_000, rule), 8000);
    assert.equal(summaryBudgetFor(600, rule), 599, 'never as large as what it replaces');
    assert.equal(summaryBudgetFor(100_000, summaryRule(0.05)), 5000);
    assert.equal(summaryBudgetFor(100_000, 300), 300, 'a fixed reserve stays fixed');
  });

  test('a deep prune of a real session gets a summary sized by what it removed; --summary-share and summaryShare change it', skip, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-summary-budget-'));
    try {
      const [file] = realdataFiles('codex/01-agentcmd-v0.40.0-vscode');
      assert.ok(file);
      const run = async (extra: string[]) => {
        const result = await runInProcess(['prune', file, '--force', '--target', '1', '--no-archive', '--no-cache', '--dry-run', '--json', ...extra], {
          cwd: dir,
        });
        assert.equal(result.exitCode, 0, result.stderr);
        return JSON.parse(result.stdout) as { dropped: { tokens: number }; summary: { tokens: number; text: string } };
      };
      const standard = await run([]);
      assert.ok(standard.summary.tokens > 1000, `more than the floor: ${standard.summary.tokens}`);
      assert.ok(
        standard.summary.tokens <= summaryBudgetFor(standard.dropped.tokens, summaryRule()),
        `${standard.summary.tokens} within 2 % of ${standard.dropped.tokens}`,
      );
      assertNothingInjected(standard.summary.text, 'prune');
      const wider = await run(['--summary-share', '5%']);
      assert.ok(wider.summary.tokens > standard.summary.tokens && wider.summary.tokens <= summaryBudgetFor(wider.dropped.tokens, summaryRule(0.05)));
      writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ summaryShare: 5 }));
      assert.equal((await run([])).summary.tokens, wider.summary.tokens, 'the config key does what the flag does');
      writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ summaryShare: 80 }));
      const bad = await runInProcess(['prune', file, '--force', '--dry-run', '--no-cache'], { cwd: dir });
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /summaryShare.*at most 50/);
      const badFlag = await runInProcess(['prune', file, '--force', '--dry-run', '--no-cache', '--summary-share', 'lots']);
      assert.equal(badFlag.exitCode, 2);
      assert.match(badFlag.stderr, /--summary-share takes a percentage/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
