import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { ArchiveStore } from '../src/archive/store.js';
import type { Archive } from '../src/archive/archive.js';
import { openArchiveAt } from '../src/archive/open.js';
import { archiveWindow, loadAgentSession } from '../src/cli/agent-session.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { packageCopy } from './helpers/package-copy.js';
import { canRunAsAnotherUser, runAs } from './helpers/other-user.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';

/**
 * The agents' compaction hooks [issue 17]: install/uninstall round trips on settings that already
 * hold other hooks and servers (a commented TOML too), and each hook command fed the stdin JSON its
 * agent documents (test/agent-hook-inputs, sources in its SOURCES.md; not under fixtures/, which holds transcripts), its stdout read as that agent reads it.
 */

const sample01 = join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', '70d782f7-b303-4e48-9512-6bec16c37abd.jsonl');

function fixture(name: string, replace: Record<string, string>): string {
  const value = JSON.parse(readFileSync(join(repoRoot, 'test', 'agent-hook-inputs', name), 'utf8')) as Record<string, unknown>;
  return JSON.stringify({ ...value, ...replace });
}

function sandbox(): { home: string; project: string; env: Record<string, string> } {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-agent-')));
  const project = join(home, 'project');
  mkdirSync(join(project, '.git'), { recursive: true });
  return { home, project, env: { HOME: home, DEVS_CTX_ARCHIVE: join(home, 'archive.sqlite') } };
}

/** The command an installed hook runs, exactly as the agent's settings hold it, through sh. */
function runHookCommand(command: string, input: string, cwd: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('sh', ['-c', command], { cwd, input, env: cliEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function installedCommand(settingsPath: string, event: string): string {
  const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
  const command = settings.hooks[event]?.flatMap((g) => g.hooks.map((h) => h.command)).find((c) => c.includes('agent-hook'));
  assert.ok(command, `a devs-ctx ${event} hook in ${settingsPath}`);
  return command;
}

describe('hook install --agent: merging, idempotence, byte-for-byte uninstall', () => {
  it("claude-code: keeps the user's hooks, keys and servers; twice changes nothing; uninstall gives the files back", () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    const settings =
      '{\n    "model": "opus",\n    "hooks": {\n        "PreCompact": [{"hooks": [{"type": "command", "command": "./backup.sh"}]}],\n        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]\n    }\n}\n';
    const mcp = '{"mcpServers":{"github":{"command":"gh-mcp","args":[]}}}';
    writeFileSync(join(project, '.claude', 'settings.json'), settings);
    writeFileSync(join(project, '.mcp.json'), mcp);

    const first = runCli(['hook', 'install', '--agent', 'claude-code', '--json'], { cwd: project, env });
    assert.equal(first.exitCode, 0, first.stderr);
    const merged = JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')) as {
      model: string;
      hooks: Record<string, { matcher?: string; hooks: { command: string; timeout: number }[] }[]>;
    };
    assert.equal(merged.model, 'opus');
    assert.equal(merged.hooks['PreCompact']?.[0]?.hooks[0]?.command, './backup.sh', "the user's PreCompact hook stays, first");
    assert.match(merged.hooks['PreCompact']?.[1]?.hooks[0]?.command ?? '', /agent-hook pre-compact --agent claude-code$/);
    assert.equal(merged.hooks['SessionStart']?.[0]?.matcher, 'compact');
    assert.match(merged.hooks['SessionStart']?.[0]?.hooks[0]?.command ?? '', /agent-hook post-compact --agent claude-code$/);
    assert.equal(merged.hooks['Stop']?.[0]?.hooks[0]?.command, 'say done');
    assert.match(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'), /^ {4}"model"/m, 'the file keeps its 4-space indent');
    const servers = JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
    assert.deepEqual(Object.keys(servers.mcpServers), ['github', 'devs-ctx']);
    assert.equal(servers.mcpServers['devs-ctx']?.args.at(-1), 'mcp');

    const afterFirst = [readFileSync(join(project, '.claude', 'settings.json')), readFileSync(join(project, '.mcp.json'))];
    const second = runCli(['hook', 'install', '--agent', 'claude-code', '--json'], { cwd: project, env });
    assert.equal(second.exitCode, 0);
    assert.deepEqual(
      (JSON.parse(second.stdout) as { files: { action: string }[] }).files.map((f) => f.action),
      ['unchanged', 'unchanged'],
    );
    assert.deepEqual([readFileSync(join(project, '.claude', 'settings.json')), readFileSync(join(project, '.mcp.json'))], afterFirst);

    const status = JSON.parse(runCli(['hook', 'status', '--agent', 'claude-code', '--json'], { cwd: project, env }).stdout) as {
      installed: boolean;
      files: { hooks: string[]; mcpServer: boolean }[];
    };
    assert.equal(status.installed, true);
    assert.deepEqual(status.files[0]?.hooks.sort(), ['PreCompact', 'SessionStart']);
    assert.equal(status.files[1]?.mcpServer, true);

    const removed = runCli(['hook', 'uninstall', '--agent', 'claude-code'], { cwd: project, env });
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.equal(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'), settings);
    assert.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), mcp);
    assert.equal(JSON.parse(runCli(['hook', 'status', '--agent', 'claude-code', '--json'], { cwd: project, env }).stdout).installed, false);
  });

  it("a file changed since devs-ctx wrote it is what an install keeps as the original: uninstall never takes the user's later file or edits away", () => {
    const { project, env } = sandbox();
    const path = join(project, '.claude', 'settings.json');
    const install = (): void => assert.equal(runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    const uninstall = (): void => assert.equal(runCli(['hook', 'uninstall', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    // No settings yet: devs-ctx makes the file. Then it goes (git clean, a fresh clone at the same path)
    // and the user writes one of their own; devs-ctx is installed again, then uninstalled.
    install();
    rmSync(join(project, '.claude'), { recursive: true });
    rmSync(join(project, '.mcp.json'));
    mkdirSync(join(project, '.claude'));
    const mine = '{"permissions": {"allow": ["Bash(npm test)"]}, "env": {"A": "1"}}\n';
    writeFileSync(path, mine);
    install();
    uninstall();
    assert.equal(readFileSync(path, 'utf8'), mine, 'their own file is given back, not removed');

    // Installed; the user adds a setting and takes devs-ctx's SessionStart group out (/hooks); installed again; uninstalled.
    install();
    const edited = JSON.parse(readFileSync(path, 'utf8')) as { env: Record<string, string>; hooks: Record<string, unknown> };
    edited.env['MY_VAR'] = 'kept';
    delete edited.hooks['SessionStart'];
    const editedText = `${JSON.stringify(edited, null, 2)}\n`;
    writeFileSync(path, editedText);
    install();
    uninstall();
    const { hooks: _ours, ...theirs } = edited;
    assert.equal(
      readFileSync(path, 'utf8'),
      `${JSON.stringify(theirs, null, 2)}\n`,
      "their edits are kept, devs-ctx's entries (the PreCompact hook left in) are not",
    );
  });

  it('a symlink where a backup belongs is replaced, never followed: the file it names is left as it is, and uninstall gives the files back', () => {
    const { home, project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    const settings = '{"model": "opus"}\n';
    const mcp = '{"mcpServers":{}}';
    writeFileSync(join(project, '.claude', 'settings.json'), settings);
    writeFileSync(join(project, '.mcp.json'), mcp);
    // Where the backups go (XDG data home, one file per config file, named by a hash of its path).
    const backups = join(home, '.local', 'share', 'devs-ctx', 'agent-config-backups');
    mkdirSync(backups, { recursive: true });
    const outside = join(home, 'elsewhere.json');
    // Read through, it would be taken for a backup saying the files held something else.
    const planted = (path: string): string =>
      JSON.stringify({ path, original: Buffer.from('planted').toString('base64'), createdDirs: [], written: 'x'.repeat(64) });
    const links = [join(project, '.claude', 'settings.json'), join(project, '.mcp.json')].map((path) => {
      const link = join(backups, `${createHash('sha256').update(path).digest('hex').slice(0, 32)}.json`);
      writeFileSync(`${outside}.${basename(path)}`, planted(path));
      symlinkSync(`${outside}.${basename(path)}`, link);
      return { path, link, target: `${outside}.${basename(path)}` };
    });
    const installed = runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env });
    assert.equal(installed.exitCode, 0, installed.stderr);
    for (const { path, link, target } of links) {
      assert.equal(readFileSync(target, 'utf8'), planted(path), `${target} is left as it is`);
      assert.ok(lstatSync(link).isFile(), `${link}: the backup is a file of its own`);
    }
    const removed = runCli(['hook', 'uninstall', '--agent', 'claude-code'], { cwd: project, env });
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.equal(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'), settings);
    assert.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), mcp);
  });

  it('codex: a commented config.toml keeps every comment and byte; uninstall restores it, and removes files it created', () => {
    const { home, env } = sandbox();
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome);
    const toml =
      '# my Codex settings\nmodel = "gpt-5-codex" # the default\n\n[mcp_servers.github]\n# token comes from the env\ncommand = "gh-mcp"\nargs = ["--stdio"]\n';
    writeFileSync(join(codexHome, 'config.toml'), toml);
    const run = (args: string[]) => runCli(['hook', ...args, '--agent', 'codex', '--user'], { cwd: home, env });

    assert.equal(run(['install']).exitCode, 0);
    const written = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    assert.ok(written.startsWith(toml), "everything before devs-ctx's block is the user's file, byte for byte");
    assert.match(written.slice(toml.length), /^\n# >>> devs-ctx[^\n]*\n\[mcp_servers\.devs-ctx\]\ncommand = "[^"]+"\nargs = \[.*"mcp"\]\n# <<< devs-ctx\n$/);
    const hooks = JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8')) as { hooks: Record<string, { matcher?: string }[]> };
    assert.deepEqual(Object.keys(hooks.hooks).sort(), ['PreCompact', 'SessionStart']);
    assert.equal(hooks.hooks['SessionStart']?.[0]?.matcher, 'compact');

    assert.equal(run(['install']).exitCode, 0);
    assert.equal(readFileSync(join(codexHome, 'config.toml'), 'utf8'), written, 'a second install changes nothing');

    assert.equal(run(['uninstall']).exitCode, 0);
    assert.equal(readFileSync(join(codexHome, 'config.toml'), 'utf8'), toml);
    assert.equal(existsSync(join(codexHome, 'hooks.json')), false, 'hooks.json did not exist before: it is gone again');
  });

  it("codex: a config.toml edited after install loses only devs-ctx's block", () => {
    const { home, env } = sandbox();
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome);
    const toml = '# keep me\n[profiles.fast]\nmodel = "gpt-5-mini"\n';
    writeFileSync(join(codexHome, 'config.toml'), toml);
    runCli(['hook', 'install', '--agent', 'codex', '--user'], { cwd: home, env });
    const edited = `${readFileSync(join(codexHome, 'config.toml'), 'utf8')}\n# added later\n[profiles.slow]\nmodel = "o3"\n`;
    writeFileSync(join(codexHome, 'config.toml'), edited);
    const result = runCli(['hook', 'uninstall', '--agent', 'codex', '--user'], { cwd: home, env });
    assert.equal(result.exitCode, 0);
    assert.match(result.stdout, /only devs-ctx's entries were taken out/);
    assert.equal(readFileSync(join(codexHome, 'config.toml'), 'utf8'), `${toml}\n# added later\n[profiles.slow]\nmodel = "o3"\n`);
  });

  it("gemini: hooks and mcpServers merged into one settings.json with the user's; uninstall restores it", () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.gemini'));
    const settings = JSON.stringify(
      {
        theme: 'Dracula',
        hooks: { BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: './audit.sh' }] }] },
        mcpServers: { db: { command: 'db-mcp' } },
      },
      null,
      2,
    );
    writeFileSync(join(project, '.gemini', 'settings.json'), settings);
    assert.equal(runCli(['hook', 'install', '--agent', 'gemini'], { cwd: project, env }).exitCode, 0);
    const merged = JSON.parse(readFileSync(join(project, '.gemini', 'settings.json'), 'utf8')) as {
      theme: string;
      hooks: Record<string, { hooks: { timeout: number }[] }[]>;
      mcpServers: Record<string, unknown>;
    };
    assert.equal(merged.theme, 'Dracula');
    assert.deepEqual(Object.keys(merged.hooks).sort(), ['BeforeAgent', 'BeforeTool', 'PreCompress']);
    assert.equal(merged.hooks['PreCompress']?.[0]?.hooks[0]?.timeout, 60_000, 'Gemini CLI timeouts are milliseconds');
    assert.deepEqual(Object.keys(merged.mcpServers), ['db', 'devs-ctx']);
    assert.equal(runCli(['hook', 'uninstall', '--agent', 'gemini'], { cwd: project, env }).exitCode, 0);
    assert.equal(readFileSync(join(project, '.gemini', 'settings.json'), 'utf8'), settings);
  });

  it("gemini: a settings.json with comments (Gemini CLI reads them) is edited in place; uninstall after the user's edits takes out only devs-ctx's entries", () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.gemini'));
    const path = join(project, '.gemini', 'settings.json');
    const settings =
      '{\n  // the team theme\n  "theme": "Dracula",\n  "hooks": {\n    /* audit every shell command */\n    "BeforeTool": [\n      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./audit.sh" }] } // ours\n    ]\n  }\n}\n';
    writeFileSync(path, settings);
    const installed = runCli(['hook', 'install', '--agent', 'gemini'], { cwd: project, env });
    assert.equal(installed.exitCode, 0, installed.stderr);
    const text = readFileSync(path, 'utf8');
    for (const kept of [
      '  // the team theme\n  "theme": "Dracula",\n',
      '/* audit every shell command */',
      '"./audit.sh" }] } // ours\n    ],\n    "PreCompress": [\n',
    ])
      assert.ok(text.includes(kept), `${kept} is kept:\n${text}`);
    assert.match(text, /"PreCompress": \[\n {6}\{\n[\s\S]*agent-hook pre-compact --agent gemini/);
    assert.match(text, /"mcpServers": \{\n {4}"devs-ctx": \{/);
    // The user changes the theme; uninstall then takes out devs-ctx's entries only.
    writeFileSync(path, text.replace('"Dracula"', '"GitHub"'));
    const removed = runCli(['hook', 'uninstall', '--agent', 'gemini'], { cwd: project, env });
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.equal(readFileSync(path, 'utf8'), settings.replace('"Dracula"', '"GitHub"'));
  });

  it('claude-code: what JSON.parse cannot keep stays as written (a 20-digit number, 1e3, a \\u escape); a comment, which Claude Code does not read, is exit 2', () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    const path = join(project, '.claude', 'settings.json');
    const settings = '{\n  "env": {"BUILD_ID": 12345678901234567890, "RETRIES": 1e3, "NAME": "caf\\u00e9"},\n  "model": "opus"\n}\n';
    writeFileSync(path, settings);
    assert.equal(runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    assert.ok(readFileSync(path, 'utf8').startsWith(settings.replace(/\n\}\n$/, ',\n  "hooks": {\n')), readFileSync(path, 'utf8'));

    const commented = '{\n  // mine\n  "model": "opus"\n}\n';
    writeFileSync(path, commented);
    const refused = runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env });
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /settings\.json: has comments, which its agent does not read/);
    assert.equal(readFileSync(path, 'utf8'), commented);
  });

  it('installed from one copy of devs-ctx, edited, installed from another (an upgrade): the MCP server follows, and uninstall leaves nothing of either', () => {
    const { home, project, env } = sandbox();
    mkdirSync(join(project, '.gemini'));
    const path = join(project, '.gemini', 'settings.json');
    writeFileSync(path, '{\n  "theme": "dark"\n}\n');
    const old = packageCopy(join(home, 'old-copy'));
    const fromOld = spawnSync(process.execPath, [old, 'hook', 'install', '--agent', 'gemini'], { cwd: project, env: cliEnv(env), encoding: 'utf8' });
    assert.equal(fromOld.status, 0, fromOld.stderr);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"dark"', '"light"'));
    assert.equal(runCli(['hook', 'install', '--agent', 'gemini'], { cwd: project, env }).exitCode, 0);
    const installed = readFileSync(path, 'utf8');
    assert.ok(!installed.includes('old-copy'), `nothing of the old copy is left:\n${installed}`);
    assert.equal(runCli(['hook', 'uninstall', '--agent', 'gemini'], { cwd: project, env }).exitCode, 0);
    assert.equal(readFileSync(path, 'utf8'), '{\n  "theme": "light"\n}\n', "the user's edit stays, devs-ctx's entries go");
    assert.equal(JSON.parse(runCli(['hook', 'status', '--agent', 'gemini', '--json'], { cwd: project, env }).stdout).installed, false);
  });

  it("codex: an install from another copy writes devs-ctx's config.toml block again for that copy; uninstall gives the file back", () => {
    const { home, env } = sandbox();
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome);
    const toml = '# mine\nmodel = "gpt-5-codex"\n';
    writeFileSync(join(codexHome, 'config.toml'), toml);
    const old = packageCopy(join(home, 'old-copy'));
    assert.equal(spawnSync(process.execPath, [old, 'hook', 'install', '--agent', 'codex', '--user'], { cwd: home, env: cliEnv(env) }).status, 0);
    assert.ok(readFileSync(join(codexHome, 'config.toml'), 'utf8').includes('old-copy'));
    assert.equal(runCli(['hook', 'install', '--agent', 'codex', '--user'], { cwd: home, env }).exitCode, 0);
    const upgraded = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    assert.ok(!upgraded.includes('old-copy') && upgraded.startsWith(toml), upgraded);
    assert.equal(runCli(['hook', 'uninstall', '--agent', 'codex', '--user'], { cwd: home, env }).exitCode, 0);
    assert.equal(readFileSync(join(codexHome, 'config.toml'), 'utf8'), toml);
  });

  it("a hook the user added into devs-ctx's hook group stays through uninstall and a new install", () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    const path = join(project, '.claude', 'settings.json');
    writeFileSync(path, '{\n  "model": "opus"\n}\n');
    assert.equal(runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    const settings = JSON.parse(readFileSync(path, 'utf8')) as { hooks: Record<string, { hooks: { type: string; command: string }[] }[]> };
    settings.hooks['SessionStart']?.[0]?.hooks.push({ type: 'command', command: 'echo my-own-after-compact' });
    writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`);
    const mine = (): boolean => readFileSync(path, 'utf8').includes('echo my-own-after-compact');
    // A new install (another path to devs-ctx would replace its group) keeps the user's command.
    const copy = packageCopy(join(dirname(project), 'other-copy'));
    assert.equal(spawnSync(process.execPath, [copy, 'hook', 'install', '--agent', 'claude-code'], { cwd: project, env: cliEnv(env) }).status, 0);
    assert.ok(mine(), 'kept by the install from another copy');
    assert.equal(runCli(['hook', 'uninstall', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    assert.ok(mine(), 'kept by uninstall');
    const left = JSON.parse(readFileSync(path, 'utf8')) as { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> };
    assert.deepEqual(left.hooks, { SessionStart: [{ matcher: 'compact', hooks: [{ type: 'command', command: 'echo my-own-after-compact' }] }] });
  });

  it('uninstall on a file devs-ctx never wrote changes nothing, byte for byte, and says so', () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    const path = join(project, '.claude', 'settings.json');
    const settings = '{\n  "hooks": {},\n  "n": 12345678901234567890,\n  "Stop": []\n}\n';
    writeFileSync(path, settings);
    for (let round = 0; round < 2; round++) {
      const result = runCli(['hook', 'uninstall', '--agent', 'claude-code', '--json'], { cwd: project, env });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal((JSON.parse(result.stdout) as { files: { action: string }[] }).files[0]?.action, 'unchanged');
      assert.equal(readFileSync(path, 'utf8'), settings);
    }
  });

  it('a settings file that is a FIFO or a link to /dev/zero: exit 3 at once, nothing written (status, install, uninstall)', () => {
    const { home, env } = sandbox();
    mkdirSync(join(home, '.gemini'));
    const path = join(home, '.gemini', 'settings.json');
    for (const make of [() => assert.equal(spawnSync('mkfifo', [path]).status, 0), () => symlinkSync('/dev/zero', path)]) {
      rmSync(path, { force: true });
      make();
      for (const action of ['status', 'install', 'uninstall']) {
        const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'devs-ctx.js'), 'hook', action, '--agent', 'gemini', '--user'], {
          cwd: home,
          env: cliEnv(env),
          encoding: 'utf8',
          timeout: 60_000,
        });
        assert.equal(result.signal, null, `${action}: still reading`);
        assert.equal(result.status, 3, `${action}: ${result.stderr}`);
        assert.match(result.stderr, /settings\.json: is a (FIFO|character device), not a settings file/);
      }
    }
  });

  it('one of the files cannot be written (a read-only ~/.claude.json): exit 3 before any file is changed', (t) => {
    if (!canRunAsAnotherUser(t)) return;
    const uid = 65534;
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-agent-ro-')));
    mkdirSync(join(home, '.claude'));
    const settings = '{\n  "model": "opus"\n}\n';
    writeFileSync(join(home, '.claude', 'settings.json'), settings);
    writeFileSync(join(home, '.claude.json'), '{\n  "numStartups": 3\n}\n');
    spawnSync('chown', ['-R', `${uid}:${uid}`, home]);
    chmodSync(join(home, '.claude.json'), 0o444);
    const result = runAs(uid, home, ['hook', 'install', '--agent', 'claude-code', '--user'], { DEVS_CTX_ARCHIVE: join(home, 'a.sqlite') });
    assert.equal(result.status, 3, result.stderr);
    assert.match(result.stderr, /\.claude\.json: cannot be written .*changed nothing/);
    assert.equal(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'), settings, 'settings.json untouched');
  });

  it('a devs-ctx server the user added by hand (claude mcp add devs-ctx -- devs-ctx mcp) is theirs: install leaves it, uninstall gives the file back as it was', () => {
    const { project, env } = sandbox();
    const mcp = '{"mcpServers":{"devs-ctx":{"type":"stdio","command":"devs-ctx","args":["mcp"],"env":{}}}}\n';
    writeFileSync(join(project, '.mcp.json'), mcp);
    assert.equal(runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    assert.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), mcp, 'install leaves their server alone');
    assert.equal(runCli(['hook', 'uninstall', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    assert.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), mcp, 'and so does uninstall');
  });

  it('a settings file that is not JSON: exit 2, nothing written anywhere', () => {
    const { project, env } = sandbox();
    mkdirSync(join(project, '.claude'));
    writeFileSync(join(project, '.claude', 'settings.json'), '{ "hooks": ');
    const result = runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env });
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /settings\.json: not valid JSON/);
    assert.equal(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'), '{ "hooks": ');
    assert.equal(existsSync(join(project, '.mcp.json')), false);
  });
});

it('a hook input field of an unexpected type (an agent version sending a number) is ignored: the window is still archived', () => {
  const { home, project, env } = sandbox();
  const transcript = join(home, 'session.jsonl');
  copyFileSync(join(repoRoot, 'fixtures', 'claude-code', 'parallel-tool-calls-2.1.jsonl'), transcript);
  const input = JSON.stringify({ session_id: 's', transcript_path: transcript, cwd: 7, hook_event_name: 'PreCompact', trigger: 7, source: ['x'] });
  const result = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], { cwd: project, env, input });
  assert.equal(result.exitCode, 0);
  assert.match(result.stderr, /archived \d+ turn\(s\)/);
});

it('a hook whose transcript_path is no regular file (/dev/zero, /dev/null, a folder, a FIFO) says so and lets the agent go on (exit 0), reading nothing', () => {
  const { home, project, env } = sandbox();
  const fifo = join(home, 'session.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  for (const [path, kind] of [
    ['/dev/zero', 'is a character device'],
    ['/dev/null', 'is a character device'],
    [project, 'is a directory'],
    [fifo, 'is a FIFO'],
  ] as const) {
    for (const event of ['pre-compact', 'post-compact'] as const) {
      const input = fixture(event === 'pre-compact' ? 'claude-code-pre-compact.json' : 'claude-code-session-start-compact.json', {
        transcript_path: path,
        cwd: project,
      });
      // The guard only ends a run that would read for ever (the defect): a passing run is immediate.
      const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'devs-ctx.js'), 'agent-hook', event, '--agent', 'claude-code'], {
        cwd: project,
        input,
        env: cliEnv(env),
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(result.signal, null, `${event} ${path}: still reading`);
      assert.equal(result.status, 0, `${event} ${path}: ${result.stderr}`);
      if (event === 'pre-compact') assert.match(result.stderr, new RegExp(`${path.replace(/[/.]/g, '\\$&')}: ${kind}, not a`), `${event} ${path}`);
    }
  }
});

describe('the hook commands, fed the documented stdin', { skip: realdataSkip }, () => {
  it('claude-code: PreCompact archives and indexes the window; SessionStart compact prints the re-grounding as additionalContext', () => {
    const { home, project, env } = sandbox();
    writeFileSync(join(project, 'TAS.md'), '# TAS\nAll writes go through writeFileAtomic.\n');
    const transcript = join(home, 'session.jsonl');
    copyFileSync(sample01, transcript);
    assert.equal(runCli(['hook', 'install', '--agent', 'claude-code'], { cwd: project, env }).exitCode, 0);
    const settingsPath = join(project, '.claude', 'settings.json');

    const pre = runHookCommand(
      installedCommand(settingsPath, 'PreCompact'),
      fixture('claude-code-pre-compact.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.equal(pre.status, 0, pre.stderr);
    assert.equal(pre.stdout, '', 'PreCompact prints nothing (its output is not context)');
    assert.match(pre.stderr, /archived \d+ turn\(s\)/);
    const store = ArchiveStore.open(env['DEVS_CTX_ARCHIVE'] as string);
    try {
      const events = store.listEvents({ sourcePath: transcript });
      assert.equal(events.length, 1);
      assert.equal(events[0]?.strategy, 'compaction');
      assert.equal(events[0]?.urgency, 'manual', 'the trigger is recorded');
      assert.ok((events[0]?.removedTurnCount ?? 0) > 0);
      assert.ok(store.recall('checkpoint', { sourcePath: transcript }).length > 0, 'the window is searchable at once');
    } finally {
      store.close();
    }
    const again = runHookCommand(
      installedCommand(settingsPath, 'PreCompact'),
      fixture('claude-code-pre-compact.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.match(again.stderr, /already archived/);

    const post = runHookCommand(
      installedCommand(settingsPath, 'SessionStart'),
      fixture('claude-code-session-start-compact.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.equal(post.status, 0, post.stderr);
    const output = JSON.parse(post.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(output.hookSpecificOutput.hookEventName, 'SessionStart');
    const context = output.hookSpecificOutput.additionalContext;
    assert.match(context, /\[CONTEXT REFRESH\]\n## TAS Summary\n# TAS\nAll writes go through writeFileAtomic/);
    const hints = context.split('\n').filter((l) => /^- (error|instruction|file|command|symbol): .*\(recall "/.test(l));
    assert.equal(hints.length, 10, 'ten lookup hints');
    assert.match(context, /`recall`/);
    assert.match(context, /is archived and searchable/, 'PreCompact archived the file, the compacted turns with it');
  });

  it('codex: PreCompact archives; SessionStart compact re-grounds', () => {
    const { project, env } = sandbox();
    const transcript = join(project, 'rollout.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'codex', 'compacted-replaces-history.jsonl'), transcript);
    assert.equal(runCli(['hook', 'install', '--agent', 'codex'], { cwd: project, env }).exitCode, 0);
    const hooksPath = join(project, '.codex', 'hooks.json');
    const pre = runHookCommand(
      installedCommand(hooksPath, 'PreCompact'),
      fixture('codex-pre-compact.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.equal(pre.status, 0, pre.stderr);
    assert.match(pre.stderr, /archived/);
    const post = runHookCommand(
      installedCommand(hooksPath, 'SessionStart'),
      fixture('codex-session-start-compact.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    const output = JSON.parse(post.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(output.hookSpecificOutput.hookEventName, 'SessionStart');
    assert.match(output.hookSpecificOutput.additionalContext, /recall/);
    assert.match(output.hookSpecificOutput.additionalContext, /is archived and searchable/);
  });

  it('gemini: PreCompress answers {} and archives; the next BeforeAgent re-grounds once, later ones answer {}', () => {
    const { project, env } = sandbox();
    const transcript = join(project, 'session.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'gemini', 'tool-calls-paired.jsonl'), transcript);
    assert.equal(runCli(['hook', 'install', '--agent', 'gemini'], { cwd: project, env }).exitCode, 0);
    const settingsPath = join(project, '.gemini', 'settings.json');
    const quiet = runHookCommand(
      installedCommand(settingsPath, 'BeforeAgent'),
      fixture('gemini-before-agent.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.deepEqual(JSON.parse(quiet.stdout), {}, 'no compression yet: nothing to add');
    const pre = runHookCommand(
      installedCommand(settingsPath, 'PreCompress'),
      fixture('gemini-pre-compress.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.equal(pre.status, 0, pre.stderr);
    assert.deepEqual(JSON.parse(pre.stdout), {}, 'Gemini CLI parses stdout as JSON: only an object');
    const first = runHookCommand(
      installedCommand(settingsPath, 'BeforeAgent'),
      fixture('gemini-before-agent.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    const output = JSON.parse(first.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(output.hookSpecificOutput.hookEventName, 'BeforeAgent');
    assert.match(output.hookSpecificOutput.additionalContext, /compacted/);
    assert.match(output.hookSpecificOutput.additionalContext, /is archived and searchable/);
    const second = runHookCommand(
      installedCommand(settingsPath, 'BeforeAgent'),
      fixture('gemini-before-agent.json', { transcript_path: transcript, cwd: project }),
      project,
      env,
    );
    assert.deepEqual(JSON.parse(second.stdout), {});
  });

  it('gemini: a PreCompress that cannot archive (a damaged archive) still has the next BeforeAgent re-ground the agent', () => {
    const { home, project, env } = sandbox();
    const transcript = join(project, 'session.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'gemini', 'tool-calls-paired.jsonl'), transcript);
    const damaged = join(home, 'damaged.sqlite');
    writeFileSync(damaged, Buffer.alloc(50_000, 0xa5));
    const damagedEnv = { ...env, DEVS_CTX_ARCHIVE: damaged };
    assert.equal(runCli(['hook', 'install', '--agent', 'gemini'], { cwd: project, env: damagedEnv }).exitCode, 0);
    const settingsPath = join(project, '.gemini', 'settings.json');
    const pre = runHookCommand(
      installedCommand(settingsPath, 'PreCompress'),
      fixture('gemini-pre-compress.json', { transcript_path: transcript, cwd: project }),
      project,
      damagedEnv,
    );
    assert.equal(pre.status, 0, pre.stderr);
    assert.deepEqual(JSON.parse(pre.stdout), {});
    assert.match(pre.stderr, /damaged/);
    const next = runHookCommand(
      installedCommand(settingsPath, 'BeforeAgent'),
      fixture('gemini-before-agent.json', { transcript_path: transcript, cwd: project }),
      project,
      damagedEnv,
    );
    const output = JSON.parse(next.stdout) as { hookSpecificOutput?: { additionalContext: string } };
    const context = output.hookSpecificOutput?.additionalContext ?? '';
    assert.match(context, /compacted/);
    assert.doesNotMatch(context, /is archived/, 'nothing was archived: the agent is not told it was');
    assert.match(context, /could not archive/);
  });

  it('claude-code: SessionStart says the compacted turns are archived only when PreCompact archived them', () => {
    const { home, project, env } = sandbox();
    // The session as PreCompact saw it (every line before the last compaction's boundary), then as SessionStart sees it.
    const lines = readFileSync(sample01, 'utf8').split('\n');
    const boundary = lines.findLastIndex((l) => l !== '' && (JSON.parse(l) as { subtype?: string }).subtype === 'compact_boundary');
    assert.ok(boundary > 0, 'the sample has a compaction');
    const transcript = join(home, 'session.jsonl');
    const post = (): string => {
      const result = runCli(['agent-hook', 'post-compact', '--agent', 'claude-code'], {
        cwd: project,
        env,
        input: fixture('claude-code-session-start-compact.json', { transcript_path: transcript, cwd: project }),
      });
      assert.equal(result.exitCode, 0, result.stderr);
      return (JSON.parse(result.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    };
    // No PreCompact ran (not installed then, or it failed): the turns are only in the session file.
    copyFileSync(sample01, transcript);
    const unarchived = post();
    assert.doesNotMatch(unarchived, /is archived/);
    assert.match(unarchived, /could not archive/);

    writeFileSync(transcript, `${lines.slice(0, boundary).join('\n')}\n`);
    const pre = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], {
      cwd: project,
      env,
      input: fixture('claude-code-pre-compact.json', { transcript_path: transcript, cwd: project }),
    });
    assert.match(pre.stderr, /archived \d+ turn\(s\)/);
    copyFileSync(sample01, transcript);
    const archived = post();
    assert.match(archived, /What the summary may have dropped is archived and searchable/);
    assert.doesNotMatch(archived, /could not archive/);
  });

  it('two hooks archiving one window at once make one event: the second, finding none yet, is refused on insert and says already archived', async () => {
    const { home } = sandbox();
    const transcript = join(home, 'session.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'claude-code', 'parallel-tool-calls-2.1.jsonl'), transcript);
    const store = await openArchiveAt(join(home, 'archive.sqlite'));
    try {
      const session = loadAgentSession(transcript);
      const counter = loadCounter('o200k_base');
      const first = await archiveWindow(store, session, { trigger: 'auto', counter });
      assert.equal(first.alreadyArchived, false);
      // The other hook looked before the first one's event was there: its first look finds nothing.
      let looks = 0;
      const late = new Proxy(store, {
        get(target, name, receiver) {
          if ((name === 'getEvent' || name === 'listEvents') && looks++ < 2) return async () => (name === 'getEvent' ? undefined : []);
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }) as Archive;
      const second = await archiveWindow(late, session, { trigger: 'auto', counter });
      assert.deepEqual([second.alreadyArchived, second.eventId], [true, first.eventId]);
      assert.equal((await store.listEvents()).length, 1, 'one event');
    } finally {
      await store.close();
    }
  });

  it('restore undoes the prune, never an archived window (a compaction event changed no file)', () => {
    const { project, env } = sandbox();
    const transcript = join(project, 'session.jsonl');
    const original = readFileSync(join(repoRoot, 'fixtures', 'devs', 'over-soft-limit.jsonl'));
    writeFileSync(transcript, original);
    assert.equal(runCli(['prune', transcript, '--in-place', '--force', '--window', '4000'], { cwd: project, env }).exitCode, 0);
    const pre = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], {
      cwd: project,
      env,
      input: fixture('claude-code-pre-compact.json', { transcript_path: transcript, cwd: project }),
    });
    assert.match(pre.stderr, /archived/);
    const restored = runCli(['restore', transcript, '--in-place'], { cwd: project, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(transcript).equals(original), 'the bytes from before the prune');
  });

  it('never blocks: a missing transcript or input that is not JSON is a reason on stderr and exit 0', () => {
    const { project, env } = sandbox();
    const missing = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], {
      cwd: project,
      env,
      input: fixture('claude-code-pre-compact.json', { transcript_path: join(project, 'gone.jsonl'), cwd: project }),
    });
    assert.equal(missing.exitCode, 0);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /agent-hook pre-compact: no session transcript to archive .*\(the agent goes on\)/);
    const garbage = runCli(['agent-hook', 'post-compact', '--agent', 'gemini'], { cwd: project, env, input: '{not json' });
    assert.equal(garbage.exitCode, 0);
    assert.deepEqual(JSON.parse(garbage.stdout), {});
    assert.match(garbage.stderr, /the hook input is not JSON/);
    const unknownAgent = runCli(['agent-hook', 'pre-compact', '--agent', 'cursor'], { cwd: project, env, input: '{}' });
    // Not a usage error (exit 2): exit 2 blocks Claude Code's PreCompact and any Gemini CLI hook, and a
    // hook written by another devs-ctx version or edited by hand must not stop the agent.
    assert.equal(unknownAgent.exitCode, 0, unknownAgent.stderr);
    assert.equal(unknownAgent.stdout, '');
    assert.match(unknownAgent.stderr, /cursor[\s\S]*the agent goes on/);
  });
});
