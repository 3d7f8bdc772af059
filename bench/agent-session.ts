import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng } from './generate.js';

/**
 * A Claude Code session of about 150k tokens (the size at which Claude Code compacts), with one
 * earlier compaction, for the agent-hook benchmarks [issue 17]. Deterministic; written once into
 * bench/.data.
 */

const VERSION = 1;
const VOCAB = (
  'export invoice stream header footer total migration transaction lock retry timeout parser config loader schema ' +
  'session token archive window summary refresh prune recall index query cursor batch worker queue cache hash ' +
  'the a of to in for on with by from as is are was be this that it and or not when then'
).split(' ');
const FILES = ['src/billing/export.ts', 'src/core/parser.ts', 'src/io/loader.ts', 'test/export.test.ts', 'src/db/schema.sql'];

export function ensureAgentSession(dataDir: string): { path: string; project: string } {
  const project = join(dataDir, `agent-project-v${VERSION}`);
  const path = join(project, 'session.jsonl');
  if (existsSync(path)) return { path, project };
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'TAS.md'), '# TAS\nEvery write is atomic; the archive is SQLite.\n');
  const rng = createRng(0x5eed_0150);
  const words = (n: number): string => Array.from({ length: n }, () => rng.pick(VOCAB)).join(' ');
  const base = { isSidechain: false, userType: 'external', cwd: project, sessionId: 'bench-150k', version: '2.1.20' };
  const lines: string[] = [];
  let parent: string | null = null;
  let chars = 0;
  let n = 0;
  const push = (value: Record<string, unknown>): void => {
    const uuid = `u${n++}`;
    const line = JSON.stringify({ ...base, parentUuid: parent, uuid, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), ...value });
    lines.push(line);
    chars += line.length;
    parent = uuid;
  };
  // ~4 characters a token: 150k tokens of content after the compaction, 100k before it.
  const turn = (): void => {
    const file = rng.pick(FILES);
    push({ type: 'user', message: { role: 'user', content: `Please fix the ${words(3)} in ${file}; never skip the ${words(2)} check.` } });
    push({
      type: 'assistant',
      message: {
        id: `m${n}`,
        role: 'assistant',
        model: 'claude',
        content: [{ type: 'tool_use', id: `t${n}`, name: 'Bash', input: { command: `npm test -- ${file}` } }],
      },
    });
    push({
      type: 'user',
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `t${n - 1}`, content: `FAIL ${file}\nTypeError: ${words(6)}\n${words(rng.int(150, 400))}` }],
      },
    });
    push({ type: 'assistant', message: { id: `m${n}`, role: 'assistant', model: 'claude', content: [{ type: 'text', text: words(rng.int(60, 200)) }] } });
  };
  while (chars < 400_000) turn();
  push({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 100_000 } });
  push({
    type: 'user',
    isCompactSummary: true,
    message: { role: 'user', content: `This session is being continued. Summary: ${words(300)} in src/core/parser.ts.` },
  });
  const before = chars;
  while (chars - before < 600_000) turn();
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { path, project };
}
