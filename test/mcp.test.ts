import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openArchiveAt } from '../src/archive/open.js';
import { archiveWindow, loadAgentSession } from '../src/cli/agent-session.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { claudeProjectDir } from '../src/io/agent-sessions.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';

const bin = join(repoRoot, 'bin', 'devs-ctx.js');
/** Sample 01: a real Claude Code session with two compactions (FORMATS §1.8). */
const compactedSession = join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', '70d782f7-b303-4e48-9512-6bec16c37abd.jsonl');
const SESSION_ID = '70d782f7-b303-4e48-9512-6bec16c37abd';

interface ToolText {
  isError?: boolean;
  content: { type: string; text: string }[];
}

function textOf(result: unknown): string {
  return (result as ToolText).content.map((c) => c.text).join('\n');
}

async function connect(cwd: string, env: Record<string, string>, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', ...args], cwd, env: cliEnv(env), stderr: 'pipe' });
  const client = new Client({ name: 'devs-ctx-test', version: '1' });
  await client.connect(transport);
  return client;
}

describe('devs-ctx mcp, through the real SDK client over stdio', { skip: realdataSkip }, () => {
  let home: string;
  let project: string;
  let archive: string;
  let sessionPath: string;
  let env: Record<string, string>;
  let client: Client;

  before(async () => {
    home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-mcp-home-')));
    project = join(home, 'work', 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'TAS.md'), '# TAS\nThe archive is SQLite; every write is atomic.\n');
    writeFileSync(join(project, 'PRD.md'), '# PRD\nUsers never lose a turn.\n');
    const dir = claudeProjectDir(project, { HOME: home });
    mkdirSync(dir, { recursive: true });
    sessionPath = join(dir, `${SESSION_ID}.jsonl`);
    copyFileSync(compactedSession, sessionPath);
    // A real archive: the window archived the way the pre-compaction hook does it.
    archive = join(home, 'archive.sqlite');
    const store = await openArchiveAt(archive);
    try {
      await archiveWindow(store, loadAgentSession(sessionPath), { trigger: 'auto', counter: loadCounter('o200k_base') });
    } finally {
      await store.close();
    }
    env = { HOME: home, DEVS_CTX_ARCHIVE: archive };
    client = await connect(project, env);
  });

  after(async () => {
    await client?.close();
  });

  it('lists its four tools with input schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['context_status', 'get_turn', 'pinned_context', 'recall']);
    const recall = tools.find((t) => t.name === 'recall');
    assert.deepEqual((recall?.inputSchema as { required?: string[] }).required, ['query']);
  });

  it('context_status finds the session from the working directory and reports its size and compactions', async () => {
    const result = await client.callTool({ name: 'context_status', arguments: {} });
    assert.notEqual((result as ToolText).isError, true, textOf(result));
    const status = JSON.parse(textOf(result)) as {
      session: string;
      format: string;
      contextTokens: number;
      basis: string;
      compactions: unknown[];
      heaviest: unknown[];
      urgency: string;
      agentCompaction: { at: number } | null;
    };
    assert.equal(status.session, sessionPath);
    assert.equal(status.format, 'claude-code');
    // The size the model sees, calibrated on the session's own API calls: the same as analyze says.
    const analyzed = JSON.parse(runCli(['analyze', sessionPath, '--json']).stdout) as {
      context: { tokens: number; basis: string; estimate: number };
      urgency: string;
    };
    assert.notEqual(analyzed.context.basis, 'estimate', 'the real session records its usage');
    assert.equal(status.contextTokens, analyzed.context.tokens);
    assert.equal(status.basis.split(':')[0], analyzed.context.basis);
    assert.equal(status.urgency, analyzed.urgency);
    assert.ok(status.contextTokens > analyzed.context.estimate, 'more than the turns in the file: the system prompt and tools count');
    assert.ok((status.agentCompaction?.at ?? 0) > 0, 'where Claude Code will compact by itself');
    assert.equal(status.compactions.length, 2);
    assert.ok(status.heaviest.length > 0);
  });

  it('recall finds archived turns and turns the agent compacted away, each with id, time and excerpt', async () => {
    const result = await client.callTool({ name: 'recall', arguments: { query: 'checkpoint', limit: 10 } });
    const answer = JSON.parse(textOf(result)) as { hits: { source: string; turnId: string; time?: string; excerpt: string }[] };
    const sources = new Set(answer.hits.map((h) => h.source));
    assert.ok(sources.has('archive'), 'an archived hit');
    assert.ok(sources.has('compacted'), 'a pre-compaction hit');
    for (const hit of answer.hits) {
      assert.ok(hit.turnId.length > 0);
      assert.match(hit.excerpt.toLowerCase(), /checkpoint/);
    }
  });

  it('get_turn reads a compacted turn back whole, in pages capped in tokens', async () => {
    const found = JSON.parse(textOf(await client.callTool({ name: 'recall', arguments: { query: 'checkpoint', limit: 20 } }))) as {
      hits: { source: string; turnId: string }[];
    };
    const compacted = found.hits.find((h) => h.source === 'compacted');
    assert.ok(compacted);
    const first = textOf(await client.callTool({ name: 'get_turn', arguments: { turnId: compacted.turnId, maxTokens: 100 } }));
    assert.match(first, /page 1 of \d+/);
    const pages = Number(/page 1 of (\d+)/.exec(first)?.[1]);
    const body = first.slice(first.indexOf('\n\n') + 2);
    assert.ok(loadCounter('o200k_base').count(body) <= 100, 'a page stays within maxTokens');
    if (pages > 1) {
      assert.match(first, /next: get_turn/);
      const second = textOf(await client.callTool({ name: 'get_turn', arguments: { turnId: compacted.turnId, page: 2, maxTokens: 100 } }));
      assert.match(second, /page 2 of/);
    }
    const past = await client.callTool({ name: 'get_turn', arguments: { turnId: compacted.turnId, page: pages + 1, maxTokens: 100 } });
    assert.equal((past as ToolText).isError, true);
    assert.match(textOf(past), /past the last page/);
  });

  it('get_turn: the whole answer, header included, stays within maxTokens (README: an answer never exceeds it)', async () => {
    const found = JSON.parse(textOf(await client.callTool({ name: 'recall', arguments: { query: 'checkpoint', limit: 20 } }))) as {
      hits: { turnId: string }[];
    };
    const counter = loadCounter('o200k_base');
    for (const hit of found.hits.slice(0, 5)) {
      for (const maxTokens of [100, 500]) {
        const answer = textOf(await client.callTool({ name: 'get_turn', arguments: { turnId: hit.turnId, maxTokens } }));
        assert.ok(counter.count(answer) <= maxTokens, `get_turn ${hit.turnId} at maxTokens ${maxTokens}: ${counter.count(answer)} tokens`);
      }
    }
  });

  it('pinned_context gives the project documents and the [CONTEXT REFRESH] text', async () => {
    const text = textOf(await client.callTool({ name: 'pinned_context', arguments: {} }));
    assert.match(text, /^\[CONTEXT REFRESH\]/);
    assert.match(text, /every write is atomic/);
    assert.match(text, /Users never lose a turn/);
  });

  it('caps every answer in tokens and says how to get more', async () => {
    const text = textOf(await client.callTool({ name: 'context_status', arguments: { maxTokens: 100 } }));
    assert.match(text, /cut at 100 of \d+ tokens; ask with a larger maxTokens/);
    assert.ok(loadCounter('o200k_base').count(text) <= 100);
  });

  it('recall leaves off whole hits that do not fit, says how many, and stays valid JSON', async () => {
    const result = await client.callTool({ name: 'recall', arguments: { query: 'checkpoint', limit: 50, maxTokens: 300 } });
    const answer = JSON.parse(textOf(result)) as { hits: unknown[]; leftOff?: number; more?: string };
    assert.ok((answer.leftOff ?? 0) > 0);
    assert.match(answer.more ?? '', /larger maxTokens/);
    assert.ok(loadCounter('o200k_base').count(textOf(result)) <= 300);
  });

  it('recall stays valid JSON within maxTokens even when its notes or the query alone would not fit', async () => {
    const counter = loadCounter('o200k_base');
    for (const [query, maxTokens] of [
      [`${Array.from({ length: 1500 }, (_, i) => `word${i}`).join(' ')} error`, 2000],
      ['zzz-nothing-matches-this', 100],
    ] as const) {
      const text = textOf(await client.callTool({ name: 'recall', arguments: { query, maxTokens } }));
      assert.doesNotThrow(() => JSON.parse(text), `${maxTokens}: ${text.slice(-120)}`);
      assert.ok(counter.count(text) <= maxTokens, `${counter.count(text)} tokens`);
    }
  });

  it('recall with a session that cannot be read (a folder) still searches the archive, and says so in a note', async () => {
    const result = await client.callTool({ name: 'recall', arguments: { query: 'checkpoint', session: home } });
    assert.notEqual((result as ToolText).isError, true, textOf(result));
    const answer = JSON.parse(textOf(result)) as { hits: unknown[]; notes?: string[] };
    assert.ok(answer.hits.length > 0, 'archive hits');
    assert.match((answer.notes ?? []).join('\n'), /session could not be read .*only the archive was searched/);
  });

  it('answers bad arguments with MCP errors and keeps serving', async () => {
    const empty = await client.callTool({ name: 'recall', arguments: { query: '' } });
    assert.equal((empty as ToolText).isError, true);
    assert.match(textOf(empty), /query/);
    const wrongType = await client.callTool({ name: 'get_turn', arguments: { turnId: 7 } });
    assert.equal((wrongType as ToolText).isError, true);
    const unknown = await client.callTool({ name: 'get_turn', arguments: { turnId: 'no-such-turn' } });
    assert.equal((unknown as ToolText).isError, true);
    assert.match(textOf(unknown), /no turn no-such-turn/);
    const tooBig = await client.callTool({ name: 'recall', arguments: { query: 'x', maxTokens: 10 } });
    assert.equal((tooBig as ToolText).isError, true);
    // Still alive.
    const { tools } = await client.listTools();
    assert.equal(tools.length, 4);
  });

  it('a session with no archive gets an empty answer with a hint, not a failure', async () => {
    const other = await connect(project, { HOME: home, DEVS_CTX_ARCHIVE: join(home, 'missing', 'archive.sqlite') });
    try {
      const result = await other.callTool({ name: 'recall', arguments: { query: 'zzzunfindable' } });
      assert.notEqual((result as ToolText).isError, true);
      const answer = JSON.parse(textOf(result)) as { hits: unknown[]; notes: string[] };
      assert.deepEqual(answer.hits, []);
      assert.match(answer.notes.join('\n'), /no archive at .*hook install --agent/);
    } finally {
      await other.close();
    }
  });

  it('finds a session named by id, and says so when the name matches nothing', async () => {
    const named = JSON.parse(textOf(await client.callTool({ name: 'context_status', arguments: { session: SESSION_ID } }))) as { session: string };
    assert.equal(named.session, sessionPath);
    const missing = textOf(await client.callTool({ name: 'context_status', arguments: { session: 'nope' } }));
    assert.match(missing, /no session "nope" found/);
  });
});

describe('get_turn pages of a long turn', () => {
  it('join to exactly the turn, across page 999 to 1000 too (the header reserve does not change with the page number)', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-mcp-pages-')));
    let big = '';
    for (let i = 0; i < 3000; i++) big += `línea ${i} 🙂🙂 日本語テキスト \u{1F600}${i % 5 === 0 ? '\n' : ' '}`;
    const session = join(home, 'uni.jsonl');
    const turns = [
      { id: 's1', role: 'system', type: 'system', content: 'You are a bot.' },
      { id: 'u1', role: 'user', type: 'message', content: 'hello' },
      { id: 'bigturn-1', role: 'assistant', type: 'message', content: big },
      { id: 'u2', role: 'user', type: 'message', content: 'ok' },
    ];
    writeFileSync(session, `${turns.map((t) => JSON.stringify(t)).join('\n')}\n`);
    const archive = join(home, 'archive.sqlite');
    const env = { HOME: home, DEVS_CTX_ARCHIVE: archive };
    const hook = runCli(['agent-hook', 'pre-compact', '--agent', 'claude-code'], { cwd: home, env, input: JSON.stringify({ transcript_path: session }) });
    assert.match(hook.stderr, /archived 4 turn/);
    const client = await connect(home, env);
    try {
      const page = async (n: number): Promise<{ text: string; pages: number }> => {
        const text = textOf(await client.callTool({ name: 'get_turn', arguments: { turnId: 'bigturn-1', page: n, maxTokens: 100 } }));
        return { text: text.slice(text.indexOf('\n\n') + 2), pages: Number(/^page \d+ of (\d+)/.exec(text)?.[1]) };
      };
      const first = await page(1);
      assert.ok(first.pages > 1000, `${first.pages} pages`);
      // Pages 998 to 1001 follow each other in the turn, with nothing twice and nothing left out.
      const texts = await Promise.all([998, 999, 1000, 1001].map(async (n) => (await page(n)).text));
      const at = big.indexOf(texts[0] as string);
      assert.ok(at > 0);
      assert.equal(big.slice(at, at + texts.join('').length), texts.join(''));
      assert.equal(big.indexOf(texts.join('')), at);
    } finally {
      await client.close();
    }
  });
});
