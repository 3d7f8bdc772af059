import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where each agent keeps a project's sessions (docs/formats/): Claude Code
 * `~/.claude/projects/<cwd with non-alphanumerics as ->/<sessionId>.jsonl` (or `$CLAUDE_CONFIG_DIR`),
 * Codex `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl` (default `~/.codex`), Gemini CLI
 * `~/.gemini/tmp/<sha256(projectRoot)>/chats/session-<ts>-<id8>.jsonl`.
 */

import { AGENT_NAMES } from '../core/names.js';
import type { AgentName } from '../core/names.js';

export type { AgentName };

type Env = Readonly<Record<string, string | undefined>>;

export interface FoundSession {
  readonly agent: AgentName;
  readonly path: string;
  readonly mtimeMs: number;
}

function home(env: Env): string {
  return env['HOME'] ?? env['USERPROFILE'] ?? '/';
}

/** Claude Code's folder name for a working directory. */
export function claudeProjectDir(cwd: string, env: Env): string {
  const root = env['CLAUDE_CONFIG_DIR'] ?? join(home(env), '.claude');
  return join(root, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
}

function codexSessionsDir(env: Env): string {
  return join(env['CODEX_HOME'] ?? join(home(env), '.codex'), 'sessions');
}

function geminiChatsDir(cwd: string, env: Env): string {
  return join(home(env), '.gemini', 'tmp', createHash('sha256').update(cwd).digest('hex'), 'chats');
}

function filesIn(dir: string, accept: (name: string) => boolean, depth: number): FoundSession[] {
  const out: { path: string; mtimeMs: number }[] = [];
  const walk = (current: string, left: number): void => {
    let names: string[];
    try {
      names = readdirSync(current);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(current, name);
      let stats: Stats;
      try {
        stats = statSync(path);
      } catch {
        continue;
      }
      if (stats.isDirectory()) {
        if (left > 0) walk(path, left - 1);
      } else if (accept(name)) out.push({ path, mtimeMs: stats.mtimeMs });
    }
  };
  walk(dir, depth);
  return out as FoundSession[];
}

/** Session files of one agent for this working directory, newest first (Codex: every rollout; it files them by date, not project). */
function sessionsOf(agent: AgentName, cwd: string, env: Env): FoundSession[] {
  const found =
    agent === 'claude-code'
      ? filesIn(claudeProjectDir(cwd, env), (n) => n.endsWith('.jsonl'), 0)
      : agent === 'codex'
        ? filesIn(codexSessionsDir(env), (n) => n.startsWith('rollout-') && n.endsWith('.jsonl'), 3)
        : filesIn(geminiChatsDir(cwd, env), (n) => n.startsWith('session-') && (n.endsWith('.jsonl') || n.endsWith('.json')), 0);
  return found.map((f) => ({ ...f, agent })).sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path));
}

/**
 * The session a request names: a path (absolute or relative to `cwd`), else a session id of one of
 * the agents for this directory, else (nothing named) the most recently written session of this
 * directory. Undefined when there is none.
 */
export function findSession(request: { readonly session?: string; readonly agent?: AgentName }, cwd: string, env: Env): FoundSession | undefined {
  const agents = request.agent ? [request.agent] : AGENT_NAMES;
  const named = request.session?.trim();
  if (named) {
    const asPath = isAbsolute(named) ? named : resolve(cwd, named);
    if ((named.includes('/') || named.endsWith('.jsonl') || named.endsWith('.json')) && existsSync(asPath)) {
      return { agent: request.agent ?? guessAgent(asPath), path: asPath, mtimeMs: statSync(asPath).mtimeMs };
    }
    for (const agent of agents) {
      const match = sessionsOf(agent, cwd, env).find((s) => {
        const base = s.path.slice(s.path.lastIndexOf('/') + 1).replace(/\.jsonl?$/, '');
        return base === named || base.endsWith(`-${named}`) || (agent === 'gemini' && base.endsWith(`-${named.slice(0, 8)}`));
      });
      if (match) return match;
    }
    return undefined;
  }
  const all = agents.flatMap((agent) => (agent === 'codex' ? codexSessionsFor(cwd, env) : sessionsOf(agent, cwd, env)));
  return all.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
}

/** How many of the newest Codex rollouts are opened to find this directory's (they are filed by date, not project). */
const CODEX_LOOKBACK = 50;

/** Codex rollouts whose `session_meta` (their first line) names this working directory. */
function codexSessionsFor(cwd: string, env: Env): FoundSession[] {
  return sessionsOf('codex', cwd, env)
    .slice(0, CODEX_LOOKBACK)
    .filter((s) => {
      try {
        const fd = openSync(s.path, 'r');
        try {
          const head = Buffer.alloc(64 * 1024);
          const n = readSync(fd, head, 0, head.length, 0);
          const first = head.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
          const meta = JSON.parse(first) as { type?: unknown; payload?: { cwd?: unknown } };
          return meta.type === 'session_meta' && meta.payload?.cwd === cwd;
        } finally {
          closeSync(fd);
        }
      } catch {
        return false; // a first line over 64 KB or not JSON: not a rollout of this directory we can tell
      }
    });
}

function guessAgent(path: string): AgentName {
  if (path.includes('/.codex/') || /\/rollout-[^/]*\.jsonl$/.test(path)) return 'codex';
  if (path.includes('/.gemini/')) return 'gemini';
  return 'claude-code';
}
