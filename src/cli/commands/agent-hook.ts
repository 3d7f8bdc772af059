import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isPostgresUrl } from '../../archive/archive.js';
import { defaultArchivePath } from '../../archive/paths.js';
import { text as readStream } from 'node:stream/consumers';
import * as z from 'zod/mini';
import '../../core/zod-english.js';
import { ExitCode } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { findSession } from '../../io/agent-sessions.js';
import type { AgentName } from '../../io/agent-sessions.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { findPinnedDocuments } from '../../io/project-docs.js';
import { archiveWindow, lastCompactionArchived, loadAgentSession, regrounding } from '../agent-session.js';
import type { AgentSession } from '../agent-session.js';
import type { Archive } from '../../archive/archive.js';
import { openArchive, resolveArchivePath } from '../archive.js';
import type { CliContext } from '../context.js';
import type { AgentHookOptions } from '../flags/agent-hook.js';
import { CachedCounter, settingsFor } from '../shared.js';

/**
 * `devs-ctx agent-hook pre-compact|post-compact --agent X`: what the agents run [issue 17]. It reads
 * the hook's JSON on stdin as the agent documents it, and never stands in the way: any failure is
 * one line on stderr and exit 0, so a compaction is never blocked by accident (Claude Code blocks
 * on exit 2 from PreCompact; Gemini CLI on exit 2 from any hook).
 *
 * pre-compact: archives and indexes the session's current window (a `compaction` event).
 * post-compact: prints the re-grounding in the agent's format: Claude Code and Codex
 * `hookSpecificOutput.additionalContext` on `SessionStart` (source `compact`); Gemini CLI on the
 * first `BeforeAgent` after a `PreCompress` (it documents no event after a compression).
 */

/**
 * The fields every agent sends (Claude Code and Codex hook input; Gemini CLI's base input schema).
 * One of an unexpected type (another agent version's) is read as missing, not a reason to skip the
 * hook: a window not archived before its compaction is lost.
 */
const lenient = <T extends z.ZodMiniType>(schema: T) => z.catch(z.optional(schema), undefined);
const HookInputSchema = z.looseObject({
  session_id: lenient(z.string()),
  transcript_path: lenient(z.nullable(z.string())),
  cwd: lenient(z.string()),
  hook_event_name: lenient(z.string()),
  trigger: lenient(z.nullable(z.string())),
  source: lenient(z.string()),
});
type HookInput = z.infer<typeof HookInputSchema>;

/** A pre-compaction archive waiting for Gemini CLI's next BeforeAgent to re-ground the agent. */
function pendingMarker(archivePath: string, session: string, env: CliContext['env']): string {
  // Beside a SQLite archive; for a PostgreSQL one in devs-ctx's data folder (the URL is no folder:
  // its dirname made a `postgres:/user:password@host` folder in the project).
  const base = isPostgresUrl(archivePath)
    ? dirname(defaultArchivePath({ ...env, DEVS_CTX_ARCHIVE: undefined }, env['HOME'] ?? homedir()))
    : dirname(archivePath);
  return join(base, 'pending-regrounding', `${createHash('sha256').update(session).digest('hex').slice(0, 32)}`);
}

/** The marker's text: the session file, and whether its window was archived (written false first, true once it is). */
function markerText(path: string, archived: boolean): string {
  return `${JSON.stringify({ path, archived })}\n`;
}

/** Whether the marker says the window was archived (undefined: a marker without that, from an older devs-ctx). */
function markerArchived(marker: string): boolean | undefined {
  try {
    const { archived } = JSON.parse(readFileSync(marker, 'utf8')) as { archived?: unknown };
    return typeof archived === 'boolean' ? archived : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the session's latest compaction was archived before it (lastCompactionArchived): false
 * when there is no archive at all, undefined when that cannot be told (no compaction recorded, an
 * archive that does not open).
 */
async function compactionArchived(archivePath: string, session: AgentSession | undefined): Promise<boolean | undefined> {
  if (!session || session.history.compactions.length === 0) return undefined;
  if (!isPostgresUrl(archivePath) && !existsSync(archivePath)) return false;
  let store: Archive;
  try {
    store = await openArchive(archivePath, { mustExist: true, named: false, readOnly: true });
  } catch {
    return undefined;
  }
  try {
    return await lastCompactionArchived(store, session);
  } catch {
    return undefined;
  } finally {
    await store.close().catch(() => {});
  }
}

function sessionPath(input: HookInput, agent: AgentName, ctx: CliContext): string | undefined {
  const cwd = input.cwd ?? ctx.cwd;
  if (input.transcript_path) {
    const path = resolve(cwd, input.transcript_path);
    if (existsSync(path)) return path;
  }
  return findSession({ ...(input.session_id ? { session: input.session_id } : {}), agent }, cwd, ctx.env)?.path;
}

export async function runAgentHook(event: string, options: AgentHookOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const agent: AgentName = options.agent ?? 'claude-code';
  // Gemini CLI parses stdout as JSON whatever happens: always give it an object.
  const geminiEmpty = (): void => {
    if (agent === 'gemini') ctx.stdout.write('{}\n');
  };
  try {
    if (options.agent === undefined) throw new Error(`--agent: expected claude-code, codex or gemini`);
    if (event !== 'pre-compact' && event !== 'post-compact') throw new Error(`unknown hook "${event}": expected pre-compact or post-compact`);
    const raw = await readStream(ctx.stdin);
    let json: unknown;
    try {
      json = raw.trim() ? JSON.parse(raw) : {};
    } catch (error) {
      throw new Error(`the hook input is not JSON (${(error as Error).message})`);
    }
    const parsed = HookInputSchema.safeParse(json);
    if (!parsed.success) throw new Error(`unexpected hook input: ${parsed.error.issues[0]?.message ?? 'not an object'}`);
    const input = parsed.data;
    const projectCtx: CliContext = { ...ctx, cwd: input.cwd && existsSync(input.cwd) ? input.cwd : ctx.cwd };
    const archivePath = (await resolveArchivePath(undefined, projectCtx)) as string;

    if (event === 'pre-compact') {
      const path = sessionPath(input, agent, projectCtx);
      if (!path)
        throw new Error(`no session transcript to archive (transcript_path ${input.transcript_path ?? 'missing'}, session ${input.session_id ?? 'unknown'})`);
      // Gemini CLI compacts whether or not the window can be archived: its next BeforeAgent
      // re-grounds the agent either way (the marker first, so a failed archive does not skip it).
      const marker = agent === 'gemini' ? pendingMarker(archivePath, input.session_id ?? path, ctx.env) : undefined;
      if (marker) {
        mkdirSync(dirname(marker), { recursive: true });
        writeFileSync(marker, markerText(path, false));
      }
      const session = loadAgentSession(path);
      const { settings } = settingsFor({}, projectCtx);
      const counter = new CachedCounter(settings.encoding, defaultCacheDir(ctx.env));
      const store = await openArchive(archivePath, { mustExist: false, named: false });
      try {
        const result = await archiveWindow(store, session, { trigger: input.trigger ?? 'auto', counter });
        if (marker) writeFileSync(marker, markerText(path, true));
        counter.save();
        ctx.stderr.write(
          `devs-ctx: ${result.alreadyArchived ? 'already archived' : 'archived'} ${result.turns} turn(s), ${result.tokens} tokens of ${path} before compaction (event ${result.eventId.slice(0, 8)}); recall brings any of it back\n`,
        );
      } finally {
        await store.close();
      }
      geminiEmpty();
      return ExitCode.ok;
    }

    // post-compact
    if (agent === 'gemini') {
      const path = sessionPath(input, agent, projectCtx);
      const marker = pendingMarker(archivePath, input.session_id ?? path ?? '', ctx.env);
      if (!existsSync(marker)) {
        geminiEmpty(); // nothing compacted since the last prompt: the common, fast case
        return ExitCode.ok;
      }
      const archived = markerArchived(marker);
      rmSync(marker, { force: true });
      const session = path ? loadAgentSession(path) : undefined;
      const history = session?.history ?? { turns: [], compactions: [] };
      const context = regrounding({ agent, history, docs: findPinnedDocuments(projectCtx.cwd), archived });
      ctx.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: context } })}\n`);
      return ExitCode.ok;
    }
    if (input.source !== undefined && input.source !== 'compact') return ExitCode.ok; // another SessionStart: nothing to add
    const path = sessionPath(input, agent, projectCtx);
    const session = path ? loadAgentSession(path) : undefined;
    const archived = await compactionArchived(archivePath, session);
    const context = regrounding({ agent, history: session?.history ?? { turns: [], compactions: [] }, docs: findPinnedDocuments(projectCtx.cwd), archived });
    ctx.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: input.hook_event_name ?? 'SessionStart', additionalContext: context } })}\n`);
    return ExitCode.ok;
  } catch (error) {
    ctx.stderr.write(`devs-ctx agent-hook ${event}: ${error instanceof Error ? error.message : String(error)} (the agent goes on)\n`);
    geminiEmpty();
    return ExitCode.ok;
  }
}
