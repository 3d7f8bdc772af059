import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findSession } from '../src/io/agent-sessions.js';

/** Where the MCP server and the hooks look for a session: each agent's documented folders (FORMATS §0). */

function home(): { home: string; cwd: string; env: Record<string, string> } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-sessions-')));
  const cwd = join(root, 'work', 'my.app');
  mkdirSync(cwd, { recursive: true });
  return { home: root, cwd, env: { HOME: root } };
}

function file(path: string, text: string, seconds: number): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  utimesSync(path, seconds, seconds);
  return path;
}

describe('findSession', () => {
  it('Claude Code: the encoded working directory, by id or the newest', () => {
    const { home: h, cwd, env } = home();
    const dir = join(h, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
    const older = file(join(dir, 'aaaa-1.jsonl'), '{}\n', 1_000);
    const newer = file(join(dir, 'bbbb-2.jsonl'), '{}\n', 2_000);
    assert.equal(findSession({}, cwd, env)?.path, newer);
    assert.equal(findSession({ session: 'aaaa-1' }, cwd, env)?.path, older);
    assert.equal(findSession({ session: 'nope' }, cwd, env), undefined);
  });

  it('Codex: the newest rollout whose session_meta names this directory', () => {
    const { home: h, cwd, env } = home();
    const day = join(h, '.codex', 'sessions', '2026', '05', '07');
    const mine = file(
      join(day, 'rollout-2026-05-07T10-00-00-0197-aaaa.jsonl'),
      `${JSON.stringify({ type: 'session_meta', payload: { id: 'a', cwd } })}\n`,
      1_000,
    );
    file(
      join(day, 'rollout-2026-05-07T11-00-00-0197-bbbb.jsonl'),
      `${JSON.stringify({ type: 'session_meta', payload: { id: 'b', cwd: '/elsewhere' } })}\n`,
      2_000,
    );
    assert.equal(findSession({ agent: 'codex' }, cwd, env)?.path, mine);
    assert.equal(findSession({ session: '0197-bbbb', agent: 'codex' }, cwd, env)?.agent, 'codex');
  });

  it('Gemini CLI: chats under the sha256 of the project root; a path is taken as given', () => {
    const { home: h, cwd, env } = home();
    const chats = join(h, '.gemini', 'tmp', createHash('sha256').update(cwd).digest('hex'), 'chats');
    const chat = file(join(chats, 'session-2026-05-07T10-00-6f2c9a1e.jsonl'), '{}\n', 1_000);
    assert.equal(findSession({ agent: 'gemini' }, cwd, env)?.path, chat);
    assert.equal(findSession({ session: '6f2c9a1e' }, cwd, env)?.path, chat);
    assert.equal(findSession({ session: chat }, '/', env)?.agent, 'gemini');
  });
});
