import * as z from 'zod/mini';
import '../../core/zod-english.js';
import { countEntries } from '../../core/accounting.js';
import type { TextTokenCounter } from '../../core/accounting.js';
import type { HistoryTurn } from '../../core/agent-history.js';
import { ExitCode } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { buildAnalyzeReport } from '../../core/reports/analyze.js';
import type { AnalyzeReport } from '../../core/reports/analyze.js';
import { AGENT_NAMES } from '../../core/names.js';
import { findSession } from '../../io/agent-sessions.js';
import type { AgentName } from '../../io/agent-sessions.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { findPinnedDocuments } from '../../io/project-docs.js';
import { existsSync } from 'node:fs';
import type { Archive } from '../../archive/archive.js';
import { isPostgresUrl } from '../../archive/archive.js';
import { archiveDisplay, resolveArchivePath } from '../archive.js';
import type { CliContext } from '../context.js';
import type { McpOptions } from '../flags/mcp.js';
import { CachedCounter, settingsFor } from '../shared.js';
import { loadAgentSession, pinnedRefresh } from '../agent-session.js';
import type { AgentSession } from '../agent-session.js';
import type { Settings } from '../../core/config.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { headOf } from '../../core/text-cut.js';

/**
 * `devs-ctx mcp`: an MCP server over stdio for the agent itself [issue 17]: its context status, a
 * search over what prunes archived and what its own compactions summarised away, any such turn
 * read back whole (paged), and the project's pinned documents. Every answer is capped in tokens and
 * says how to get more. Nothing here writes to stdout but the protocol.
 */

const DEFAULT_MAX_TOKENS = 2000;
const MAX_TOKENS_LIMIT = 20_000;

const sessionArgs = {
  session: z.optional(z.string().check(z.minLength(1))).check(z.describe('session id or transcript path (default: the newest session of this project)')),
  agent: z.optional(z.enum(AGENT_NAMES)).check(z.describe('whose sessions to look in (default: all)')),
};
const maxTokensArg = z
  .optional(z.number().check(z.int(), z.minimum(100), z.maximum(MAX_TOKENS_LIMIT)))
  .check(z.describe(`cap on the answer's size in tokens (default ${DEFAULT_MAX_TOKENS})`));

/** The window size the status reports: the calibrated size the model sees (as `analyze` reports it). */
function contextSize(report: AnalyzeReport): { tokens: number; basis: string } {
  const { context } = report;
  const how =
    context.basis === 'calibrated'
      ? `calibrated on ${context.fit?.points ?? 0} recorded API calls of this session`
      : context.basis === 'recorded'
        ? 'the last recorded API call plus the estimate of what came after it'
        : `estimate (${report.encoding}, the turns in the file)`;
  return { tokens: context.tokens, basis: `${context.basis}: ${how}` };
}

/** Cuts `text` to at most `maxTokens`, saying how much was left out. */
function capText(text: string, maxTokens: number, counter: TextTokenCounter, more: string): string {
  const total = counter.count(text);
  if (total <= maxTokens) return text;
  const note = `\n[… cut at ${maxTokens} of ${total} tokens; ${more}]`;
  const budget = Math.max(1, maxTokens - counter.count(note));
  let cut = headOf(text, Math.floor((text.length * budget) / total));
  while (cut.length > 0 && counter.count(cut) > budget) cut = headOf(cut, Math.floor(cut.length * 0.9));
  return `${cut}${note}`;
}

/** Page `page` (1-based) of `text`, each page at most `maxTokens`; pages end on a line break where one is near. */
function pageOf(text: string, page: number, maxTokens: number, counter: TextTokenCounter): { text: string; pages: number } {
  const pages: string[] = [];
  let at = 0;
  while (at < text.length) {
    let chunk = headOf(text.slice(at), maxTokens * 4);
    while (chunk.length > 2 && counter.count(chunk) > maxTokens) chunk = headOf(chunk, Math.floor(chunk.length * 0.85));
    if (at + chunk.length < text.length) {
      const newline = chunk.lastIndexOf('\n');
      if (newline > chunk.length / 2) chunk = chunk.slice(0, newline + 1);
    }
    pages.push(chunk);
    at += chunk.length;
  }
  if (pages.length === 0) pages.push('');
  return { text: pages[page - 1] ?? '', pages: pages.length };
}

interface Hit {
  source: 'archive' | 'compacted';
  turnId: string;
  time?: string;
  role: string;
  tokens?: number;
  excerpt: string;
  score: number;
  where: string;
}

/** Ranked search over the turns an agent compacted away (terms anywhere in the text, rarer terms weigh more). */
function searchHistory(turns: readonly HistoryTurn[], query: string, limit: number): Hit[] {
  const terms = [
    ...new Set(
      query
        .toLowerCase()
        .split(/\s+/)
        .filter((t) => t.length > 0),
    ),
  ];
  if (terms.length === 0) return [];
  const lowered = turns.map((t) => t.text.toLowerCase());
  const df = terms.map((term) => lowered.filter((text) => text.includes(term)).length);
  const hits: Hit[] = [];
  turns.forEach((turn, i) => {
    const text = lowered[i] ?? '';
    let score = 0;
    let first = -1;
    terms.forEach((term, t) => {
      const at = text.indexOf(term);
      if (at < 0) return;
      score += Math.log(1 + turns.length / (df[t] ?? 1));
      if (first < 0 || at < first) first = at;
    });
    if (score === 0) return;
    const start = Math.max(0, first - 80);
    const excerpt = `${start > 0 ? '…' : ''}${turn.text
      .slice(start, start + 240)
      .replace(/\s+/g, ' ')
      .trim()}${start + 240 < turn.text.length ? '…' : ''}`;
    hits.push({
      source: 'compacted',
      turnId: turn.id,
      ...(turn.timestamp !== undefined ? { time: turn.timestamp } : {}),
      role: turn.role,
      excerpt,
      score,
      where: `line ${turn.line}, summarised by compaction ${(turn.compactedBy ?? 0) + 1}`,
    });
  });
  return hits.sort((a, b) => b.score - a.score || (b.time ?? '').localeCompare(a.time ?? '')).slice(0, limit);
}

/** What the tools share: the session asked about, the archive, the counter, answers capped in tokens. */
interface Tools {
  readonly counter: CachedCounter;
  readonly settings: Settings;
  readonly archivePath: string;
  readonly cwd: string;
  session(args: { session?: string | undefined; agent?: AgentName | undefined }): AgentSession | undefined;
  noSession(args: { session?: string | undefined }): string;
  /** Runs `use` with the archive (SQLite file or PostgreSQL), or undefined when there is none yet: never created here. */
  withArchive<T>(use: (store: Archive | undefined) => Promise<T>): Promise<T>;
  /** Why the archive could not be opened (an unreachable server, a damaged file): said, never taken for "no archive yet". */
  openFailure(): string | undefined;
  /** Resolves once every `withArchive` under way has finished and its answer has had its turn to go out. */
  settled(): Promise<void>;
  text(body: string): { content: { type: 'text'; text: string }[] };
  json(value: unknown, maxTokens: number, more: string): { content: { type: 'text'; text: string }[] };
}

async function mcpTools(options: McpOptions, ctx: CliContext): Promise<Tools> {
  const { openArchiveAt } = await import('../../archive/open.js');
  const archivePath = (await resolveArchivePath(options.archive, ctx)) as string;
  const { settings } = settingsFor({}, ctx);
  const counter = new CachedCounter(settings.encoding, ctx.env['DEVS_CTX_NO_CACHE'] ? undefined : defaultCacheDir(ctx.env));
  let openFailure: string | undefined;
  /** Tool calls still reading the archive (a PostgreSQL one answers over the network). */
  const running = new Set<Promise<unknown>>();
  const text = (body: string) => ({ content: [{ type: 'text' as const, text: body }] });
  return {
    counter,
    settings,
    archivePath,
    cwd: ctx.cwd,
    session: (args) => {
      const id = args.session ?? options.session;
      const agent = args.agent ?? options.agent;
      const found = findSession({ ...(id !== undefined ? { session: id } : {}), ...(agent ? { agent } : {}) }, ctx.cwd, ctx.env);
      return found ? loadAgentSession(found.path) : undefined;
    },
    noSession: (args) =>
      (args.session ?? options.session)
        ? `no session "${args.session ?? options.session}" found for ${ctx.cwd}; give a transcript path or an id of a Claude Code, Codex or Gemini CLI session`
        : `no agent session found for ${ctx.cwd}; pass session (an id or a transcript path)`,
    withArchive: (use) => {
      const work = withStore(use);
      running.add(work);
      void work.then(
        () => running.delete(work),
        () => running.delete(work),
      );
      return work;
    },
    openFailure: () => openFailure,
    settled: async () => {
      while (running.size > 0) await Promise.allSettled([...running]);
      // The answer is sent once the tool's promise has settled: one more turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
    },
    text,
    json: (value, maxTokens, more) => text(capText(JSON.stringify(value, null, 2), maxTokens, counter, more)),
  };

  async function withStore<T>(use: (store: Archive | undefined) => Promise<T>): Promise<T> {
    let store: Archive | undefined;
    openFailure = undefined;
    if (isPostgresUrl(archivePath) || existsSync(archivePath)) {
      try {
        store = await openArchiveAt(archivePath, { mustExist: true });
      } catch (error) {
        store = undefined;
        openFailure = `the archive at ${archiveDisplay(archivePath)} could not be opened: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    try {
      return await use(store);
    } finally {
      await store?.close();
    }
  }
}

function fail(message: string): never {
  throw new Error(message);
}

/** Runs the server until the client closes standard input. */
export async function runMcp(options: McpOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const [{ McpServer }, { StdioServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  const tools = await mcpTools(options, ctx);
  const server = new McpServer({ name: 'devs-ctx', version: '1' }, { capabilities: { tools: {} } });
  registerContextStatus(server, tools);
  registerRecall(server, tools);
  registerGetTurn(server, tools);
  registerPinnedContext(server, tools);
  const transport = new StdioServerTransport(ctx.stdin, ctx.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    ctx.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  // A client may close standard input right after its last request: every answer still goes out.
  await tools.settled();
  tools.counter.save();
  await server.close().catch(() => undefined);
  return ExitCode.ok;
}

function registerContextStatus(server: McpServer, t: Tools): void {
  server.registerTool(
    'context_status',
    {
      description: "The current session's context: its size in tokens, the window and limits, urgency, the heaviest turns, and the agent's compactions so far.",
      inputSchema: { ...sessionArgs, maxTokens: maxTokensArg },
    },
    (args) => {
      const current = t.session(args);
      if (!current) return t.text(t.noSession(args));
      const report = buildAnalyzeReport({
        file: current.path,
        transcript: current.transcript,
        tokens: countEntries(current.transcript.entries, t.counter),
        settings: t.settings,
        readIssues: current.doc.issues,
      });
      const size = contextSize(report);
      const window = report.context.window ?? report.recorded?.contextWindow;
      return t.json(
        {
          session: current.path,
          format: report.format,
          contextTokens: size.tokens,
          basis: size.basis,
          estimateTokens: report.context.estimate,
          model: report.context.model,
          recordedContextTokens: report.recorded?.contextTokens ?? null,
          window: window ?? null,
          limits: report.limits,
          urgency: report.urgency,
          turns: report.turns,
          heaviest: report.heaviest.slice(0, 5),
          compactions: current.history.compactions.map((c) => ({
            line: c.line,
            time: c.timestamp ?? null,
            trigger: c.trigger ?? null,
            preTokens: c.preTokens ?? null,
          })),
          agentCompaction: report.agentCompaction,
          peakTokens: report.lifetime.peak,
          autoCompaction: report.agentCompaction
            ? `the agent compacts by itself at about ${report.agentCompaction.at} tokens${report.agentCompaction.turnsLeft !== null ? `, about ${report.agentCompaction.turnsLeft} API calls from now at the recent growth` : ''}`
            : report.format === 'claude-code'
              ? 'Claude Code compacts by itself when the window is nearly full (about 155k-170k tokens of a 200k window)'
              : report.format === 'codex'
                ? `Codex compacts by itself near its auto-compact limit${window ? ` (window ${window} tokens)` : ''}`
                : 'the agent compacts by itself when its window is nearly full',
        },
        args.maxTokens ?? DEFAULT_MAX_TOKENS,
        'ask with a larger maxTokens',
      );
    },
  );
}

function registerRecall(server: McpServer, t: Tools): void {
  server.registerTool(
    'recall',
    {
      description:
        'Search the turns devs-ctx archived (prunes, and windows archived before a compaction) and the turns this agent compacted away; ranked hits with turn id, time and a short excerpt. Read one whole with get_turn.',
      inputSchema: {
        query: z.string().check(z.trim(), z.minLength(1), z.describe('words to look for: a file name, an error, an identifier')),
        limit: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(50))).check(z.describe('most hits (default 10)')),
        ...sessionArgs,
        maxTokens: maxTokensArg,
      },
    },
    async (args) => {
      const limit = args.limit ?? 10;
      const notes: string[] = [];
      // A session that cannot be read (a FIFO, a folder) still leaves the archive to search: said as a note.
      let current: ReturnType<typeof t.session>;
      let unreadable = false;
      try {
        current = t.session(args);
      } catch (error) {
        unreadable = true;
        notes.push(`the session could not be read (${error instanceof Error ? error.message : String(error)}): only the archive was searched`);
      }
      const archived = await t.withArchive(async (store): Promise<Hit[]> => {
        if (!store) {
          if (t.openFailure()) {
            notes.push(t.openFailure() as string);
            return [];
          }
          notes.push(
            `no archive at ${archiveDisplay(t.archivePath)} yet: nothing was pruned or archived before a compaction (devs-ctx hook install --agent … archives each window before the agent compacts)`,
          );
          return [];
        }
        let hits = await store.recall(args.query, { limit, highlight: ['', ''], ...(current ? { sourcePath: current.path } : {}) });
        if (hits.length === 0 && current) hits = await store.recall(args.query, { limit, highlight: ['', ''] });
        return hits.map((h) => ({
          source: 'archive' as const,
          turnId: h.turnId,
          ...(h.timestamp !== undefined ? { time: h.timestamp } : {}),
          role: h.role,
          tokens: h.tokens,
          excerpt: h.snippet.replace(/\s+/g, ' ').trim(),
          score: h.score,
          where: `${h.eventId.slice(0, 8)} ${h.sourcePath}`,
        }));
      });
      const compacted = current
        ? searchHistory(
            current.history.turns.filter((t) => t.compactedBy !== undefined),
            args.query,
            limit,
          )
        : [];
      if (!current && !unreadable) notes.push(t.noSession(args));
      // Interleave the two rankings (their scores are not comparable): best of each first.
      const hits: Hit[] = [];
      for (let i = 0; hits.length < limit && (i < archived.length || i < compacted.length); i++) {
        const a = archived[i];
        const c = compacted[i];
        if (a) hits.push(a);
        if (c && hits.length < limit) hits.push(c);
      }
      // Whole hits only, so the answer stays valid JSON: the ones that do not fit are left off, and counted.
      const maxTokens = args.maxTokens ?? DEFAULT_MAX_TOKENS;
      const shown = hits.map(({ score: _score, ...hit }) => hit);
      const answer = (list: typeof shown, brief = false): string => {
        const leftOff = shown.length - list.length;
        // Brief: the query and the notes cut short, when even no hit with them whole fits.
        const cut = (text: string, chars: number): string => (brief && text.length > chars ? `${text.slice(0, chars)}…` : text);
        return JSON.stringify(
          {
            query: cut(args.query, 200),
            hits: list,
            ...(notes.length > 0 ? { notes: notes.map((note) => cut(note, 120)) } : {}),
            ...(leftOff > 0
              ? { leftOff, more: `${leftOff} more hit(s) did not fit in ${maxTokens} tokens: ask with a larger maxTokens or a narrower query` }
              : {}),
            next: 'get_turn { turnId } reads a hit whole',
          },
          null,
          2,
        );
      };
      let list = shown;
      while (list.length > 0 && t.counter.count(answer(list)) > maxTokens) list = list.slice(0, -1);
      // Whatever fits stays valid JSON, never text cut in the middle: the answer whole, else brief, else only that it does not fit.
      const fitting = [answer(list), answer(list, true)].find((text) => t.counter.count(text) <= maxTokens);
      return t.text(
        fitting ?? JSON.stringify({ hits: [], more: `the answer does not fit in ${maxTokens} tokens: ask with a larger maxTokens or a shorter query` }),
      );
    },
  );
}

function registerGetTurn(server: McpServer, t: Tools): void {
  server.registerTool(
    'get_turn',
    {
      description: 'The full text of one archived or compacted turn (a turnId from recall), in pages of at most maxTokens tokens.',
      inputSchema: {
        turnId: z.string().check(z.trim(), z.minLength(1), z.describe('the turn id recall gave')),
        page: z.optional(z.number().check(z.int(), z.minimum(1))).check(z.describe('which page (default 1)')),
        ...sessionArgs,
        maxTokens: maxTokensArg,
      },
    },
    async (args) => {
      const maxTokens = args.maxTokens ?? DEFAULT_MAX_TOKENS;
      const page = args.page ?? 1;
      const archived = await t.withArchive(async (store) => store?.findTurn(args.turnId));
      let body: string | undefined;
      let meta: Record<string, unknown> = {};
      if (archived) {
        body = archived.content;
        meta = { source: 'archive', role: archived.role, type: archived.type, time: archived.timestamp ?? null, event: archived.eventId };
      } else {
        const current = t.session(args);
        const parts = current?.history.turns.filter((t) => t.id === args.turnId) ?? [];
        if (parts.length > 0) {
          body = parts.map((t) => t.text).join('\n');
          meta = {
            source: parts[0]?.compactedBy !== undefined ? 'compacted' : 'live',
            role: parts[0]?.role,
            time: parts[0]?.timestamp ?? null,
            line: parts[0]?.line,
          };
        }
      }
      if (body === undefined)
        fail(
          t.openFailure()
            ? `no turn ${args.turnId} in the session's history, and ${t.openFailure()}`
            : `no turn ${args.turnId} in the archive or the session's history; find turn ids with recall`,
        );
      const headerFor = (at: number, pages: number): string =>
        // Short (the caller knows the turn id it asked for): with maxTokens 100 a header naming it twice left no room.
        `page ${at} of ${pages}${at < pages ? ` (next: get_turn { page: ${at + 1} })` : ''} ${JSON.stringify(meta)}\n\n`;
      // The header counts against maxTokens too: the page gets what the longest header leaves, the same
      // for every page asked for (a reserve that grew with the page's digits cut page 1000 from other pages than 999).
      const reserve = t.counter.count(headerFor(999_998, 999_999));
      const { text: pageText, pages } = pageOf(body as string, page, Math.max(1, maxTokens - reserve), t.counter);
      if (page > pages) fail(`page ${page} is past the last page (${pages}) of turn ${args.turnId}`);
      const header = headerFor(page, pages);
      return t.text(`${header}${pageText}`);
    },
  );
}

function registerPinnedContext(server: McpServer, t: Tools): void {
  server.registerTool(
    'pinned_context',
    {
      description: "The project's pinned documents (TAS, PRD, requirements, spec, plan) and the [CONTEXT REFRESH] text built from them.",
      inputSchema: { maxTokens: maxTokensArg },
    },
    (args) => {
      const docs = findPinnedDocuments(t.cwd);
      if (docs.length === 0) {
        return t.text('no pinned documents in this project (looked for TAS.md, PRD.md, REQUIREMENTS.md, SPEC.md, PLAN.md in the project root and docs/)');
      }
      const maxTokens = args.maxTokens ?? DEFAULT_MAX_TOKENS;
      const body = [pinnedRefresh(docs, maxTokens * 2), `Documents: ${docs.map((d) => `${d.kind} ${d.path}`).join('; ')}`].join('\n\n');
      return t.text(capText(body, maxTokens, t.counter, 'ask with a larger maxTokens, or read the files'));
    },
  );
}
