import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { devsCtxRunner } from '../src/cli/commands/agent-install.js';
import { cliEnv, runCli, runCliAsync } from './helpers/cli.js';
import { startPostgres } from './helpers/postgres.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';

const bin = join(repoRoot, 'bin', 'devs-ctx.js');

/** Defects a hostile review of issues 13, 15, 17 and 19 found, each with the test that failed before its fix. */

describe('agent hook commands quote their paths for the shell', () => {
  it('a devs-ctx installed under a folder named like a command substitution runs no code and gets its own path', () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-quote-')));
    const dir = join(root, `a$(touch PWNED)\`touch PWNED2\`"'b $HOME`);
    mkdirSync(dir);
    const bin = join(dir, 'devs-ctx.js');
    writeFileSync(bin, 'console.log(JSON.stringify(process.argv.slice(1)))\n');
    const command = `${devsCtxRunner(bin).prefix} agent-hook pre-compact --agent claude-code`;
    const result = spawnSync('sh', ['-c', command], { cwd: root, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [bin, 'agent-hook', 'pre-compact', '--agent', 'claude-code']);
    assert.equal(existsSync(join(root, 'PWNED')), false);
    assert.equal(existsSync(join(root, 'PWNED2')), false);
  });
});

describe('devs-ctx mcp with an archive it cannot open', () => {
  it('says why (never "no archive yet") and never shows the PostgreSQL password', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-mcp-pg-')));
    // A server that hangs up on every connection: the archive is there but cannot be opened.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const url = `postgres://agent:s3cretpw@127.0.0.1:${port}/team`;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp'],
      cwd: home,
      env: cliEnv({ HOME: home, DEVS_CTX_ARCHIVE_URL: url }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'devs-ctx-test', version: '1' });
    try {
      await client.connect(transport);
      const recall = (await client.callTool({ name: 'recall', arguments: { query: 'archive' } })) as { content: { text: string }[] };
      const recallText = recall.content.map((c) => c.text).join('\n');
      assert.doesNotMatch(recallText, /s3cretpw/);
      assert.doesNotMatch(recallText, /yet: nothing was pruned/);
      assert.match(recallText, new RegExp(`could not be opened.*agent:\\*\\*\\*@127\\.0\\.0\\.1:${port}/team`));
      const turn = (await client.callTool({ name: 'get_turn', arguments: { turnId: 'some-turn' } })) as { isError?: boolean; content: { text: string }[] };
      assert.equal(turn.isError, true);
      const turnText = turn.content.map((c) => c.text).join('\n');
      assert.doesNotMatch(turnText, /s3cretpw/);
      assert.match(turnText, /could not be opened/);
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('agent-hook never blocks the agent, even on arguments it does not know', () => {
  // Exit 2 blocks Claude Code's PreCompact and any Gemini CLI hook: a hook written by another
  // devs-ctx version, or edited by hand, must not stop the agent's compaction.
  for (const args of [
    ['agent-hook', 'pre-compact', '--agent', 'claude-code', '--from-a-newer-version'],
    ['agent-hook', 'pre-compact'],
    ['agent-hook', 'post-compact', '--agent', 'codex', 'extra'],
  ]) {
    it(`${args.slice(1).join(' ')}: the reason on stderr, exit 0`, () => {
      const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-hook-args-')));
      const result = runCli(args, { cwd: home, env: { HOME: home }, input: '{}' });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.match(result.stderr, /error: .*\n.*the agent goes on/);
      assert.equal(result.stdout, '');
    });
  }
  it('gemini: still a JSON object on stdout, as Gemini CLI parses it', () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-hook-args-')));
    const result = runCli(['agent-hook', 'pre-compact', '--agent', 'gemini', '--json'], { cwd: home, env: { HOME: home }, input: '{}' });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), {});
    assert.match(result.stderr, /unknown option '--json'/);
  });
});

describe('hook install --agent (project scope) writes only inside the project', () => {
  function project(): { home: string; root: string } {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-confine-')));
    const root = join(home, 'cloned');
    mkdirSync(join(root, '.git'), { recursive: true });
    return { home, root };
  }

  it('codex: a config.toml linked to ~/.gitconfig is refused (exit 3), nothing written anywhere', () => {
    const { home, root } = project();
    const gitconfig = join(home, '.gitconfig');
    writeFileSync(gitconfig, '[user]\n\tname = me\n');
    mkdirSync(join(root, '.codex'));
    symlinkSync('../../.gitconfig', join(root, '.codex', 'config.toml'));
    const result = runCli(['hook', 'install', '--agent', 'codex'], { cwd: root, env: { HOME: home } });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.match(result.stderr, /config\.toml: a link to .*\.gitconfig, outside the project/);
    assert.equal(readFileSync(gitconfig, 'utf8'), '[user]\n\tname = me\n');
    assert.equal(existsSync(join(root, '.codex', 'hooks.json')), false, 'no file written before the refusal');
  });

  it('claude-code: a .claude folder linked outside, or a dangling .mcp.json link, is refused', () => {
    const { home, root } = project();
    mkdirSync(join(home, 'elsewhere'));
    symlinkSync(join(home, 'elsewhere'), join(root, '.claude'));
    const linkedDir = runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: root, env: { HOME: home } });
    assert.equal(linkedDir.exitCode, 3, linkedDir.stderr);
    assert.equal(existsSync(join(home, 'elsewhere', 'settings.json')), false);
    assert.equal(existsSync(join(root, '.mcp.json')), false);

    const other = project();
    symlinkSync(join(other.home, 'nothing-here.json'), join(other.root, '.mcp.json'));
    const dangling = runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: other.root, env: { HOME: other.home } });
    assert.equal(dangling.exitCode, 3, dangling.stderr);
    assert.match(dangling.stderr, /\.mcp\.json: a link to nothing/);
    assert.equal(existsSync(join(other.home, 'nothing-here.json')), false);
  });

  it('gemini: a settings.json linked to another file inside the project is fine', () => {
    const { home, root } = project();
    mkdirSync(join(root, '.gemini'));
    mkdirSync(join(root, 'config'));
    writeFileSync(join(root, 'config', 'gemini.json'), '{"theme":"dark"}\n');
    symlinkSync('../config/gemini.json', join(root, '.gemini', 'settings.json'));
    const result = runCli(['hook', 'install', '--agent', 'gemini'], { cwd: root, env: { HOME: home } });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(readFileSync(join(root, 'config', 'gemini.json'), 'utf8'), /PreCompress/);
  });
});

describe('hook install --agent codex says the hooks need trusting', () => {
  it('names /hooks, since Codex silently skips a hook nobody trusted', () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-codex-trust-')));
    mkdirSync(join(home, 'p', '.git'), { recursive: true });
    const result = runCli(['hook', 'install', '--agent', 'codex'], { cwd: join(home, 'p'), env: { HOME: home } });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /open \/hooks in Codex and trust/);
  });
});

describe('gemini agent hooks with the archive on PostgreSQL', () => {
  it('PreCompress then BeforeAgent re-grounds, and nothing is written under a folder named after the URL', async (t) => {
    const { url } = await startPostgres(t);
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-gemini-pg-')));
    const project = join(home, 'project');
    mkdirSync(join(project, '.git'), { recursive: true });
    const transcript = join(project, 'session.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'gemini', 'tool-calls-paired.jsonl'), transcript);
    const env = { HOME: home, DEVS_CTX_ARCHIVE_URL: url };
    const input = (event: string): string =>
      JSON.stringify({
        session_id: 'gemini-pg-1',
        transcript_path: transcript,
        cwd: project,
        hook_event_name: event,
        timestamp: '2026-05-07T10:00:00.000Z',
        ...(event === 'PreCompress' ? { trigger: 'auto' } : { prompt: 'go on' }),
      });
    const pre = await runCliAsync(['agent-hook', 'pre-compact', '--agent', 'gemini'], { cwd: project, env, input: input('PreCompress') });
    assert.equal(pre.exitCode, 0, pre.stderr);
    assert.doesNotMatch(pre.stderr, /goes on/, 'archived, not failed');
    assert.deepEqual(readdirSync(project).sort(), ['.git', 'session.jsonl'], 'no postgres:/… folder in the project');
    const after = await runCliAsync(['agent-hook', 'post-compact', '--agent', 'gemini'], { cwd: project, env, input: input('BeforeAgent') });
    assert.equal(after.exitCode, 0, after.stderr);
    const output = JSON.parse(after.stdout) as { hookSpecificOutput?: { additionalContext?: string } };
    assert.match(output.hookSpecificOutput?.additionalContext ?? '', /compacted/);
  });
});

describe('the offline summary never quotes injected lines, its Goal included', { skip: realdataSkip }, () => {
  it("real Claude Code session 07 (last user line is /exit's <local-command-stdout>): no such line in the [Context Summary]", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-goal-')));
    const input = join(realdataDir, 'claude-code', '07-alignment-hive-v2.0.76-raw-queue-ops', '6f2580aa-3095-45b7-8d4e-dd8cac7eeffe.jsonl');
    const out = join(dir, 'out.jsonl');
    const result = runCli(['prune', input, '--force', '--target', '1', '--no-archive', '-o', out], { cwd: dir, env: { HOME: dir } });
    assert.equal(result.exitCode, 0, result.stderr);
    const summary = readFileSync(out, 'utf8')
      .split('\n')
      .filter((line) => line.includes('[Context Summary]'))
      .map((line) => JSON.stringify(JSON.parse(line)))
      .join('\n');
    assert.match(summary, /## Goal/);
    assert.doesNotMatch(summary, /local-command-|command-name|system-reminder|Caveat: The messages below/);
  });
});

describe('init --archive never stores (or prints) a PostgreSQL password', () => {
  for (const url of [
    'postgres://agent:s3cretpw@db.internal/team',
    'postgres://agent@db.internal/team?password=s3cretpw',
    'postgresql://agent@db.internal/team?sslmode=require&sslpassword=s3cretpw',
  ]) {
    it(url.replace('s3cretpw', '…'), () => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-init-pw-')));
      const result = runCli(['init', '--yes', '--archive', url], { cwd: dir, env: { HOME: dir } });
      assert.equal(result.exitCode, 2, result.stderr);
      assert.doesNotMatch(result.stdout + result.stderr, /s3cretpw/);
      assert.match(result.stderr, /would hold the database password/);
      assert.equal(existsSync(join(dir, 'devs-ctx.config.json')), false);
    });
  }
});

describe('hook install --agent codex never makes config.toml invalid', () => {
  function codexProject(toml: string): { home: string; root: string; path: string } {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-toml-')));
    const root = join(home, 'p');
    mkdirSync(join(root, '.git'), { recursive: true });
    mkdirSync(join(root, '.codex'));
    writeFileSync(join(root, '.codex', 'config.toml'), toml);
    return { home, root, path: join(root, '.codex', 'config.toml') };
  }

  it("a devs-ctx server declared as a key of [mcp_servers] is the user's: no second table (TOML forbids defining it twice)", () => {
    const toml = '# mine\n[mcp_servers]\ndevs-ctx = { command = "devs-ctx", args = ["mcp"] }\n';
    const { home, root, path } = codexProject(toml);
    const result = runCli(['hook', 'install', '--agent', 'codex'], { cwd: root, env: { HOME: home } });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(readFileSync(path, 'utf8'), toml);
  });

  it('mcp_servers as an inline table: exit 2 saying what to add, nothing written (hooks.json neither)', () => {
    const toml = 'model = "o4"\nmcp_servers = { github = { command = "gh-mcp" } }\n';
    const { home, root, path } = codexProject(toml);
    const result = runCli(['hook', 'install', '--agent', 'codex'], { cwd: root, env: { HOME: home } });
    assert.equal(result.exitCode, 2, result.stderr);
    assert.match(result.stderr, /inline table/);
    assert.equal(readFileSync(path, 'utf8'), toml);
    assert.equal(existsSync(join(root, '.codex', 'hooks.json')), false);
  });
});

describe('recall does not call a window archived before a compaction a prune', { skip: realdataSkip }, () => {
  it('the agent hook archived it: "archived before a compaction", and --json says strategy compaction', () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-recall-compaction-')));
    const project = join(home, 'project');
    mkdirSync(join(project, '.git'), { recursive: true });
    const transcript = join(project, 'session.jsonl');
    copyFileSync(join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', '70d782f7-b303-4e48-9512-6bec16c37abd.jsonl'), transcript);
    const env = { HOME: home, DEVS_CTX_ARCHIVE: join(home, 'archive.sqlite') };
    const pre = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], {
      cwd: project,
      env,
      input: JSON.stringify({ session_id: 's', transcript_path: transcript, cwd: project, hook_event_name: 'PreCompact', trigger: 'auto' }),
    });
    assert.match(pre.stderr, /archived \d+ turn/);
    const text = runCli(['recall', 'checkpoint', '--limit', '3'], { cwd: project, env });
    assert.equal(text.exitCode, 0, text.stderr);
    assert.match(text.stdout, /archived before a compaction \(event [0-9a-f]{8}, no prune\)/);
    assert.doesNotMatch(text.stdout, /by prune/);
    const json = JSON.parse(runCli(['recall', 'checkpoint', '--limit', '3', '--json'], { cwd: project, env }).stdout) as { hits: { strategy?: string }[] };
    assert.ok(json.hits.length > 0);
    for (const hit of json.hits) assert.equal(hit.strategy, 'compaction');
  });
});
