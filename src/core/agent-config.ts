/**
 * What `hook install --agent` writes into each agent's own configuration [issue 17], as pure edits
 * of the files' contents: hooks merged into a JSON settings file beside the user's own, an MCP
 * server entry, and for Codex's `config.toml` a marked block appended as text, so that every
 * comment and every byte of the user's TOML stays as it was.
 */

import { isDeepStrictEqual } from 'node:util';

export type AgentKind = 'claude-code' | 'codex' | 'gemini';

/** One hook devs-ctx installs: the agent's event, its matcher, and the devs-ctx hook it runs. */
export interface AgentHookSpec {
  readonly event: string;
  readonly matcher?: string;
  readonly hook: 'pre-compact' | 'post-compact';
  /** In the agent's unit (Claude Code and Codex: seconds; Gemini CLI: milliseconds). */
  readonly timeout: number;
}

/**
 * The documented events (Claude Code hooks reference; openai/codex #19905 and #21272; Gemini CLI
 * docs/hooks/reference.md). Re-grounding goes where the agent injects a hook's output as context:
 * Claude Code and Codex `SessionStart` with source `compact` (their `PostCompact` cannot add
 * context). Gemini CLI documents no event after a compression (`SessionStart` fires on startup,
 * resume and clear only), so its re-grounding goes out with the next `BeforeAgent`, once.
 */
export const AGENT_HOOKS: Readonly<Record<AgentKind, readonly AgentHookSpec[]>> = {
  'claude-code': [
    { event: 'PreCompact', hook: 'pre-compact', timeout: 60 },
    { event: 'SessionStart', matcher: 'compact', hook: 'post-compact', timeout: 30 },
  ],
  codex: [
    { event: 'PreCompact', hook: 'pre-compact', timeout: 60 },
    { event: 'SessionStart', matcher: 'compact', hook: 'post-compact', timeout: 30 },
  ],
  gemini: [
    { event: 'PreCompress', hook: 'pre-compact', timeout: 60_000 },
    { event: 'BeforeAgent', hook: 'post-compact', timeout: 30_000 },
  ],
};

/** Marks every command devs-ctx installs, so it finds (and only ever removes) its own entries. */
const HOOK_MARK = 'agent-hook';
const MCP_SERVER_NAME = 'devs-ctx';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a hook (one command of a group) is one devs-ctx installed. */
function ourHook(hook: unknown): boolean {
  return isRecord(hook) && typeof hook['command'] === 'string' && hook['command'].includes(` ${HOOK_MARK} `);
}

/** Whether a hook group holds a hook devs-ctx installed. */
function ours(group: unknown): boolean {
  return isRecord(group) && Array.isArray(group['hooks']) && group['hooks'].some(ourHook);
}

/** A hook group without devs-ctx's hooks: as it is when it has none, gone when it had only those. */
function withoutOurHooks(group: unknown): unknown[] {
  if (!ours(group) || !isRecord(group)) return [group];
  const kept = (group['hooks'] as unknown[]).filter((h) => !ourHook(h));
  return kept.length > 0 ? [{ ...group, hooks: kept }] : [];
}

export interface HookCommand {
  readonly spec: AgentHookSpec;
  readonly command: string;
}

/**
 * Settings with devs-ctx's hook group added to `hooks.<event>` after the user's own. An older
 * devs-ctx hook (another path to devs-ctx) is taken out; a command the user added beside it in its
 * group stays there.
 */
export function withHooks(settings: Json, commands: readonly HookCommand[]): Json {
  const hooks: Json = isRecord(settings['hooks']) ? { ...settings['hooks'] } : {};
  for (const { spec, command } of commands) {
    const existing = Array.isArray(hooks[spec.event]) ? (hooks[spec.event] as unknown[]) : [];
    const group = { ...(spec.matcher !== undefined ? { matcher: spec.matcher } : {}), hooks: [{ type: 'command', command, timeout: spec.timeout }] };
    const same = (g: unknown): boolean => isDeepStrictEqual(g, group);
    const cleaned = existing.flatMap((g) => (same(g) ? [g] : withoutOurHooks(g)));
    hooks[spec.event] = cleaned.some(same) ? cleaned : [...cleaned, group];
  }
  return { ...settings, hooks };
}

/**
 * Settings without devs-ctx's hook groups: an event this empties is removed, and `hooks` if that
 * empties it. What was empty already (the user's `"Stop": []`) stays.
 */
export function withoutHooks(settings: Json): Json {
  if (!isRecord(settings['hooks']) || installedHookEvents(settings).length === 0) return settings;
  const hooks: Json = {};
  for (const [event, groups] of Object.entries(settings['hooks'])) {
    if (!Array.isArray(groups) || !groups.some(ours)) {
      hooks[event] = groups;
      continue;
    }
    const kept = groups.flatMap(withoutOurHooks);
    if (kept.length > 0) hooks[event] = kept;
  }
  const { hooks: _dropped, ...rest } = settings;
  return Object.keys(hooks).length > 0 ? { ...rest, hooks } : rest;
}

/** The events of `settings` that hold a devs-ctx hook. */
export function installedHookEvents(settings: Json): string[] {
  if (!isRecord(settings['hooks'])) return [];
  return Object.entries(settings['hooks'])
    .filter(([, groups]) => Array.isArray(groups) && groups.some(ours))
    .map(([event]) => event);
}

export interface McpServerEntry {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * Whether `mcpServers.devs-ctx` is one an install wrote: a node running a devs-ctx bin with `mcp`
 * (this copy's or another's: an upgrade, a move, another node). `devs-ctx mcp` alone is what the
 * README has a user add by hand (`claude mcp add devs-ctx -- devs-ctx mcp`): not taken for ours.
 */
function ourServer(server: unknown): boolean {
  if (!isRecord(server) || !Array.isArray(server['args'])) return false;
  const args = server['args'] as unknown[];
  return args.length === 2 && args[1] === 'mcp' && typeof args[0] === 'string' && /(^|\/)bin\/devs-ctx\.js$/.test(args[0]);
}

/** Settings with `mcpServers.devs-ctx`: added, or brought up to date when devs-ctx installed it (a server of that name the user wrote is left alone). */
export function withMcpServer(settings: Json, entry: McpServerEntry, extra: Json = {}): Json {
  const servers: Json = isRecord(settings['mcpServers']) ? { ...settings['mcpServers'] } : {};
  const existing = servers[MCP_SERVER_NAME];
  const server = { ...extra, command: entry.command, args: [...entry.args] };
  if (existing !== undefined && (!ourServer(existing) || isDeepStrictEqual({ ...(existing as Json), ...server }, existing))) return settings;
  servers[MCP_SERVER_NAME] = isRecord(existing) ? { ...existing, ...server } : server;
  return { ...settings, mcpServers: servers };
}

/**
 * Settings without `mcpServers.devs-ctx` when an install wrote it (from any copy: see ourServer), or
 * when it is `entry`, what this copy installs (`devs-ctx mcp` from the PATH, for a copy with no bin).
 */
export function withoutMcpServer(settings: Json, entry?: McpServerEntry): Json {
  if (!isRecord(settings['mcpServers'])) return settings;
  const server = settings['mcpServers'][MCP_SERVER_NAME];
  const installed = entry !== undefined && isRecord(server) && server['command'] === entry.command && isDeepStrictEqual(server['args'], entry.args);
  if (!ourServer(server) && !installed) return settings;
  const { [MCP_SERVER_NAME]: _dropped, ...servers } = settings['mcpServers'];
  const { mcpServers: _old, ...rest } = settings;
  return Object.keys(servers).length > 0 ? { ...rest, mcpServers: servers } : rest;
}

export function hasMcpServer(settings: Json): boolean {
  return isRecord(settings['mcpServers']) && settings['mcpServers'][MCP_SERVER_NAME] !== undefined;
}

/** JSON text in the file's own indentation, ending with a newline when the file did (or is new). */
export function formatJson(value: unknown, previous: string | undefined): string {
  const indent = previous ? (/^[ \t]+/m.exec(previous)?.[0] ?? '  ') : '  ';
  const text = JSON.stringify(value, null, indent.includes('\t') ? '\t' : indent.length);
  return previous === undefined || previous.endsWith('\n') || previous === '' ? `${text}\n` : text;
}

const TOML_BEGIN = '# >>> devs-ctx (added by `devs-ctx hook install --agent codex`; `devs-ctx hook uninstall --agent codex` removes it)';
const TOML_END = '# <<< devs-ctx';

/** Whether the TOML text already declares an `mcp_servers.devs-ctx` server (ours or the user's). */
export function tomlHasServer(text: string): boolean {
  if (/^\s*\[\s*mcp_servers\s*\.\s*(?:"devs-ctx"|'devs-ctx'|devs-ctx)\s*\]/m.test(text) || /^\s*mcp_servers\s*\.\s*(?:"devs-ctx"|devs-ctx)\s*[.=]/m.test(text))
    return true;
  // `devs-ctx = { … }` (or `devs-ctx.command = …`) inside a `[mcp_servers]` table: appending
  // `[mcp_servers.devs-ctx]` would define it twice, and Codex would not load the file.
  let inServers = false;
  for (const line of text.split('\n')) {
    const header = /^\s*\[\s*([^\]]*?)\s*\]/.exec(line);
    if (header) inServers = header[1] === 'mcp_servers';
    else if (inServers && /^\s*(?:"devs-ctx"|'devs-ctx'|devs-ctx)\s*[.=]/.test(line)) return true;
  }
  return false;
}

/** Whether `mcp_servers` is an inline table (`mcp_servers = { … }`), which no later table may extend. */
export function tomlHasInlineServers(text: string): boolean {
  return /^\s*mcp_servers\s*=\s*\{/m.test(text);
}

export function tomlHasOurBlock(text: string): boolean {
  return text.includes(TOML_BEGIN);
}

/**
 * The TOML with the `[mcp_servers.devs-ctx]` table appended as a marked block: nothing before it
 * changes (a table may start anywhere after the others). Unchanged when the server is there already.
 */
export function tomlWithServer(text: string, entry: McpServerEntry): string {
  // devs-ctx's own block (this copy's, or another's: an upgrade, a move) is written again, in place at the end.
  if (tomlHasOurBlock(text)) {
    const bare = tomlWithoutServer(text);
    return tomlHasServer(bare) ? text : tomlWithServer(bare, entry);
  }
  if (tomlHasServer(text)) return text;
  const str = (s: string): string => JSON.stringify(s); // a JSON string is a valid TOML basic string
  const block = [
    TOML_BEGIN,
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${str(entry.command)}`,
    `args = [${entry.args.map(str).join(', ')}]`,
    TOML_END,
    '',
  ].join('\n');
  const sep = text.length === 0 || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${sep}${block}`;
}

/** The TOML without devs-ctx's marked block (and the blank line put before it). */
export function tomlWithoutServer(text: string): string {
  const begin = text.indexOf(TOML_BEGIN);
  if (begin < 0) return text;
  const endAt = text.indexOf(TOML_END, begin);
  if (endAt < 0) return text;
  let end = endAt + TOML_END.length;
  if (text[end] === '\n') end++;
  let start = begin;
  if (text.slice(0, start).endsWith('\n\n')) start -= 1;
  return text.slice(0, start) + text.slice(end);
}
