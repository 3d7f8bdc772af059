import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  rmdirSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import {
  AGENT_HOOKS,
  formatJson,
  hasMcpServer,
  installedHookEvents,
  tomlHasOurBlock,
  tomlHasInlineServers,
  tomlHasServer,
  tomlWithServer,
  tomlWithoutServer,
  withHooks,
  withMcpServer,
  withoutHooks,
  withoutMcpServer,
} from '../../core/agent-config.js';
import type { AgentKind, HookCommand, McpServerEntry } from '../../core/agent-config.js';
import { shellQuote } from '../../core/git-hook.js';
import { ExitCode, InputError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { projectRoot } from '../../io/project-docs.js';
import type { CliContext } from '../context.js';
import type { AgentOptions } from '../flags/hook.js';
import { reportError } from '../errors.js';
import { readRegularFile } from '../../io/fd.js';
import { fileKind } from '../../io/input.js';
import { editJsonText, readJsonText } from '../../core/json-text-edit.js';

/**
 * `devs-ctx hook install|uninstall|status --agent claude-code|codex|gemini [--user]` [issue 17]:
 * devs-ctx's compaction hooks and MCP server in the agent's own configuration, merged with what is
 * there. Before the first change to a file its bytes are kept (in devs-ctx's data folder), so
 * uninstall gives them back byte for byte while the file is still as devs-ctx left it; a file edited
 * since gets only devs-ctx's entries taken out.
 */

const AGENT_HOOK_SCHEMA_VERSION = 1;

type Env = Readonly<Record<string, string | undefined>>;

/** One configuration file devs-ctx edits, and what it puts there. */
interface Target {
  readonly path: string;
  readonly kind: 'json' | 'toml';
  readonly hooks: boolean;
  readonly mcp: boolean;
  /** Extra fields of the MCP entry (Claude Code's `.mcp.json` names the transport). */
  readonly mcpExtra?: Record<string, unknown>;
  /** Whether the agent reads comments in this JSON file (Gemini CLI does; Claude Code and Codex read strict JSON). */
  readonly comments?: boolean;
}

function home(env: Env): string {
  return env['HOME'] ?? homedir();
}

/** Where each agent reads hooks and MCP servers (project scope: the project root; `--user`: the user's own files). */
function agentTargets(agent: AgentKind, scope: { user: boolean; cwd: string; env: Env }): Target[] {
  const root = projectRoot(scope.cwd);
  switch (agent) {
    case 'claude-code':
      return scope.user
        ? [
            { path: join(scope.env['CLAUDE_CONFIG_DIR'] ?? join(home(scope.env), '.claude'), 'settings.json'), kind: 'json', hooks: true, mcp: false },
            { path: join(home(scope.env), '.claude.json'), kind: 'json', hooks: false, mcp: true, mcpExtra: { type: 'stdio' } },
          ]
        : [
            { path: join(root, '.claude', 'settings.json'), kind: 'json', hooks: true, mcp: false },
            { path: join(root, '.mcp.json'), kind: 'json', hooks: false, mcp: true, mcpExtra: { type: 'stdio' } },
          ];
    case 'codex': {
      const dir = scope.user ? (scope.env['CODEX_HOME'] ?? join(home(scope.env), '.codex')) : join(root, '.codex');
      return [
        { path: join(dir, 'hooks.json'), kind: 'json', hooks: true, mcp: false },
        { path: join(dir, 'config.toml'), kind: 'toml', hooks: false, mcp: true },
      ];
    }
    case 'gemini':
      return [
        {
          path: join(scope.user ? join(home(scope.env), '.gemini') : join(root, '.gemini'), 'settings.json'),
          kind: 'json',
          hooks: true,
          mcp: true,
          comments: true,
        },
      ];
    default:
      return agent satisfies never;
  }
}

/** How the agent runs this copy of devs-ctx: this node and this bin, else `devs-ctx` from the PATH. */
export function devsCtxRunner(bin: string | null): { prefix: string; mcp: McpServerEntry } {
  if (!bin) return { prefix: 'devs-ctx', mcp: { command: 'devs-ctx', args: ['mcp'] } };
  // The agents run the command through a shell: single-quoted words, so no path can run code.
  return { prefix: `${shellQuote(process.execPath)} ${shellQuote(bin)}`, mcp: { command: process.execPath, args: [bin, 'mcp'] } };
}

function hookCommands(agent: AgentKind, prefix: string): HookCommand[] {
  return AGENT_HOOKS[agent].map((spec) => ({ spec, command: `${prefix} agent-hook ${spec.hook} --agent ${agent}` }));
}

/** devs-ctx's record of a file's bytes before it first changed it. */
interface Backup {
  readonly path: string;
  /** base64 of the original bytes; null when the file did not exist. */
  readonly original: string | null;
  /** Folders devs-ctx created for the file (removed again when empty). */
  readonly createdDirs: readonly string[];
  /** sha256 of what devs-ctx last wrote. */
  readonly written: string;
}

function dataDir(env: Env): string {
  const dataHome = env['XDG_DATA_HOME'];
  return join(dataHome && isAbsolute(dataHome) ? dataHome : join(home(env), '.local', 'share'), 'devs-ctx', 'agent-config-backups');
}

function backupPath(path: string, env: Env): string {
  return join(dataDir(env), `${createHash('sha256').update(path).digest('hex').slice(0, 32)}.json`);
}

function readBackup(path: string, env: Env): Backup | undefined {
  try {
    return JSON.parse(readRegularFile(backupPath(path, env)).toString('utf8')) as Backup;
  } catch {
    return undefined;
  }
}

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/**
 * That `path` can be written as devs-ctx writes it (a new file beside it, renamed over it): the file
 * and its folder writable, or for a new file the nearest folder that exists. Else exit 3.
 */
function checkWritable(path: string): void {
  let at = path;
  try {
    if (existsSync(path)) accessSync(path, constants.W_OK);
    for (at = dirname(path); !existsSync(at) && dirname(at) !== at; at = dirname(at));
    accessSync(at, constants.W_OK);
  } catch (error) {
    throw new InputError(
      `${at}: cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); devs-ctx changed nothing`,
      'make it writable, then run the install again',
    );
  }
}

/**
 * A settings file's text, undefined when there is none. Only a regular file is read (through a link,
 * as a dotfile manager's): opened without blocking, so a FIFO is not waited on and a device
 * (`/dev/zero`) is not read until memory runs out.
 */
function readText(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InputError(`${path}: cannot read (${(error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputError(`${path}: is ${fileKind(stat)}, not a settings file; devs-ctx changes nothing`, 'make it a regular file');
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function parseJsonSettings(target: Target, text: string | undefined): Record<string, unknown> {
  const { path } = target;
  if (text === undefined || text.trim() === '') return {};
  const comments = target.comments === true;
  let value: unknown;
  try {
    value = readJsonText(text, { comments });
  } catch (error) {
    if (!comments && readsAs(text, true))
      throw new UsageError(
        `${path}: has comments, which its agent does not read (it reads strict JSON); devs-ctx changes nothing in it`,
        'take the comments out, then run the install again',
      );
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message}); devs-ctx changes nothing in it`, 'fix the file, then run the install again');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${path}: expected a JSON object`, 'fix the file, then run the install again');
  return value as Record<string, unknown>;
}

/** Whether the text reads as JSON (`comments`: with comments blanked, as Gemini CLI reads it). */
function readsAs(text: string, comments: boolean): boolean {
  try {
    readJsonText(text, { comments });
    return true;
  } catch {
    return false;
  }
}

/**
 * The settings text holding `settings`: the file's own text with only what changes edited in place
 * (its comments, layout and numbers kept), or a new file in two-space JSON. A text that cannot be
 * edited so (a key written twice) is written anew, unless that would lose its comments.
 */
function settingsText(target: Target, before: string | undefined, settings: Record<string, unknown>): string {
  if (before === undefined || before.trim() === '') return formatJson(settings, before);
  const edited = editJsonText(before, settings, { comments: target.comments === true });
  if (edited !== undefined) return edited;
  if (target.comments === true && !readsAs(before, false))
    throw new UsageError(
      `${target.path}: cannot be edited in place (is a key written twice?), and writing it anew would lose its comments; devs-ctx changes nothing in it`,
      'make each key appear once, then run the install again',
    );
  return formatJson(settings, before);
}

interface FileResult {
  readonly path: string;
  readonly action: 'written' | 'unchanged' | 'restored' | 'entries-removed' | 'removed' | 'absent';
  readonly hooks: readonly string[];
  readonly mcpServer: boolean;
  readonly note?: string;
}

/** A config.toml devs-ctx can add its server to without breaking it (else a usage error, nothing written). */
function checkToml(path: string, text: string | undefined, runner: ReturnType<typeof devsCtxRunner>): void {
  if (text === undefined || tomlHasServer(text) || !tomlHasInlineServers(text)) return;
  throw new UsageError(
    `${path}: mcp_servers is an inline table (mcp_servers = { … }), which a [mcp_servers.devs-ctx] table cannot extend; devs-ctx changes nothing in it`,
    `add devs-ctx = { command = ${JSON.stringify(runner.mcp.command)}, args = [${runner.mcp.args.map((a) => JSON.stringify(a)).join(', ')}] } inside it by hand, then run the install again`,
  );
}

function installInto(target: Target, agent: AgentKind, runner: ReturnType<typeof devsCtxRunner>, env: Env): FileResult {
  const before = readText(target.path);
  let after: string;
  if (target.kind === 'toml') {
    checkToml(target.path, before, runner);
    after = tomlWithServer(before ?? '', runner.mcp);
  } else {
    let settings = parseJsonSettings(target, before);
    if (target.hooks) settings = withHooks(settings, hookCommands(agent, runner.prefix));
    if (target.mcp) settings = withMcpServer(settings, runner.mcp, target.mcpExtra);
    const unchanged = before !== undefined && JSON.stringify(settings) === JSON.stringify(parseJsonSettings(target, before));
    after = unchanged ? before : settingsText(target, before, settings);
  }
  const summary = describe(target, after);
  if (after === before) return { path: target.path, action: 'unchanged', ...summary };
  // Keep the bytes from before devs-ctx's first change: an earlier install's backup stays the original
  // while the file is still exactly what that install wrote. A file changed since (the user's edits,
  // or a file of their own where devs-ctx's was removed) is the original now: it is what uninstall gives back.
  const earlier = readBackup(target.path, env);
  const previous = earlier && before !== undefined && earlier.written === sha(before) ? earlier : undefined;
  const createdDirs: string[] = [];
  for (let dir = dirname(target.path); !existsSync(dir); dir = dirname(dir)) createdDirs.push(dir);
  mkdirSync(dirname(target.path), { recursive: true });
  const backup: Backup = {
    path: target.path,
    // A file that holds devs-ctx's entries already (installed from another copy, then edited) is kept without them.
    original: previous ? previous.original : before === undefined ? null : Buffer.from(withoutOurs(target, before), 'utf8').toString('base64'),
    createdDirs: previous ? previous.createdDirs : createdDirs,
    written: sha(after),
  };
  mkdirSync(dataDir(env), { recursive: true, mode: 0o700 });
  writeFileAtomic(backupPath(target.path, env), Buffer.from(JSON.stringify(backup)), { mode: 0o600, cache: true });
  writeFileAtomic(target.path, Buffer.from(after, 'utf8'));
  return { path: target.path, action: 'written', ...summary };
}

function describe(target: Target, text: string | undefined): { hooks: string[]; mcpServer: boolean } {
  if (text === undefined) return { hooks: [], mcpServer: false };
  if (target.kind === 'toml') return { hooks: [], mcpServer: tomlHasServer(text) };
  let settings: Record<string, unknown>;
  try {
    settings = parseJsonSettings(target, text);
  } catch {
    return { hooks: [], mcpServer: false };
  }
  return { hooks: target.hooks ? installedHookEvents(settings) : [], mcpServer: target.mcp && hasMcpServer(settings) };
}

/**
 * The settings text without devs-ctx's entries (hooks and MCP server an install of any copy wrote,
 * and `entry`, this copy's server, when given), edited in place.
 */
function withoutOurs(target: Target, text: string, entry?: McpServerEntry): string {
  if (target.kind === 'toml') return tomlHasOurBlock(text) ? tomlWithoutServer(text) : text;
  const current = parseJsonSettings(target, text);
  let settings = current;
  if (target.hooks) settings = withoutHooks(settings);
  if (target.mcp) settings = withoutMcpServer(settings, entry);
  return isDeepStrictEqual(settings, current) ? text : settingsText(target, text, settings);
}

function uninstallFrom(target: Target, runner: ReturnType<typeof devsCtxRunner>, env: Env): FileResult {
  const current = readText(target.path);
  const backup = readBackup(target.path, env);
  if (current === undefined) {
    if (backup) rmSync(backupPath(target.path, env), { force: true });
    return { path: target.path, action: 'absent', hooks: [], mcpServer: false };
  }
  if (backup && backup.written === sha(current)) {
    // Still exactly as devs-ctx left it: the bytes from before, or no file at all.
    if (backup.original === null) {
      rmSync(target.path);
      for (const dir of backup.createdDirs) {
        try {
          rmdirSync(dir);
        } catch {
          break; // not empty: something else lives there now
        }
      }
    } else {
      writeFileAtomic(target.path, Buffer.from(backup.original, 'base64'));
    }
    rmSync(backupPath(target.path, env), { force: true });
    return { path: target.path, action: backup.original === null ? 'removed' : 'restored', hooks: [], mcpServer: false };
  }
  const after = withoutOurs(target, current, runner.mcp);
  if (backup) rmSync(backupPath(target.path, env), { force: true });
  if (after === current) return { path: target.path, action: 'unchanged', ...describe(target, current) };
  writeFileAtomic(target.path, Buffer.from(after, 'utf8'));
  return {
    path: target.path,
    action: 'entries-removed',
    ...describe(target, after),
    note: backup
      ? "the file changed since devs-ctx wrote it: only devs-ctx's entries were taken out (the rest is as you left it)"
      : "only devs-ctx's entries were taken out (the rest is as it was)",
  };
}

/** Where `path` really is: symlinks of the file and of its folders followed (a dangling link: undefined). */
function realLocation(path: string): string | undefined {
  let tail = '';
  for (let at = path; ; at = dirname(at)) {
    let isLink = false;
    try {
      isLink = lstatSync(at).isSymbolicLink();
    } catch {
      // not there yet: look at its folder
    }
    try {
      return join(realpathSync(at), tail);
    } catch {
      if (isLink || dirname(at) === at) return undefined;
      tail = join(basename(at), tail);
    }
  }
}

/**
 * Project settings are written only inside the project: a cloned repository whose `.codex/config.toml`
 * (or `.claude`, …) is a link to a file of the user's (`~/.gitconfig`) must not get devs-ctx's entries
 * appended there. The user's own settings (`--user`) may be links (dotfile managers).
 */
function confineToProject(targets: readonly Target[], cwd: string): void {
  const root = projectRoot(cwd);
  const realRoot = realLocation(root) ?? root;
  for (const target of targets) {
    const real = realLocation(target.path);
    const rel = real === undefined ? undefined : relative(realRoot, real);
    if (rel === undefined || rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw new InputError(
        `${target.path}: ${real === undefined ? 'a link to nothing' : `a link to ${real}`}, outside the project ${root}; devs-ctx writes project settings only inside the project, and changed nothing`,
        'remove the link (or point it inside the project), or install into your own settings with --user',
      );
    }
  }
}

function render(ctx: CliContext, json: boolean, report: { agent: AgentKind; scope: string; action: string; files: FileResult[] }): void {
  if (json) {
    ctx.stdout.write(`${JSON.stringify({ schemaVersion: AGENT_HOOK_SCHEMA_VERSION, ...report }, null, 2)}\n`);
    return;
  }
  for (const file of report.files) {
    const what =
      [file.hooks.length > 0 ? `hooks ${file.hooks.join(', ')}` : '', file.mcpServer ? 'MCP server devs-ctx' : ''].filter(Boolean).join('; ') ||
      'nothing of devs-ctx';
    ctx.stdout.write(`${file.path}: ${file.action} (${what})\n`);
    if (file.note) ctx.stdout.write(`  ${file.note}\n`);
  }
}

export async function runAgentInstall(options: AgentOptions, bin: string | null, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const runner = devsCtxRunner(bin);
    const targets = agentTargets(options.agent, { user: options.user === true, cwd: ctx.cwd, env: ctx.env });
    if (options.user !== true) confineToProject(targets, ctx.cwd);
    // Read and check every file before writing any, so a broken file (or one we may not write)
    // leaves all of them as they were.
    for (const target of targets) {
      if (target.kind === 'json') parseJsonSettings(target, readText(target.path));
      else checkToml(target.path, readText(target.path), runner);
      checkWritable(target.path);
    }
    const files = targets.map((target) => installInto(target, options.agent, runner, ctx.env));
    render(ctx, json, { agent: options.agent, scope: options.user ? 'user' : 'project', action: 'install', files });
    if (!json) {
      ctx.stderr.write(
        `devs-ctx: ${options.agent} now archives its window before each compaction and is re-grounded after it; its MCP tools: context_status, recall, get_turn, pinned_context. Undo: devs-ctx hook uninstall --agent ${options.agent}${options.user ? ' --user' : ''}\n${
          // Codex skips a new or changed hook, silently, until the user trusts it (developers.openai.com/codex/hooks).
          options.agent === 'codex'
            ? "devs-ctx: Codex runs these hooks only once you trust them: open /hooks in Codex and trust the two devs-ctx hooks (a project's .codex folder must be trusted too)\n"
            : ''
        }`,
      );
    }
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

export async function runAgentUninstall(options: AgentOptions, bin: string | null, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const runner = devsCtxRunner(bin);
    const targets = agentTargets(options.agent, { user: options.user === true, cwd: ctx.cwd, env: ctx.env });
    if (options.user !== true) confineToProject(targets, ctx.cwd);
    const files = targets.map((target) => uninstallFrom(target, runner, ctx.env));
    render(ctx, json, { agent: options.agent, scope: options.user ? 'user' : 'project', action: 'uninstall', files });
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

export async function runAgentStatus(options: AgentOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const files = agentTargets(options.agent, { user: options.user === true, cwd: ctx.cwd, env: ctx.env }).map((target): FileResult => {
      const text = readText(target.path);
      return { path: target.path, action: text === undefined ? 'absent' : 'unchanged', ...describe(target, text) };
    });
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify({ schemaVersion: AGENT_HOOK_SCHEMA_VERSION, agent: options.agent, scope: options.user ? 'user' : 'project', installed: files.some((f) => f.hooks.length > 0 || f.mcpServer), files: files.map(({ action, ...f }) => ({ ...f, exists: action !== 'absent' })) }, null, 2)}\n`,
      );
    } else {
      for (const file of files) {
        const what = [file.hooks.length > 0 ? `hooks ${file.hooks.join(', ')}` : '', file.mcpServer ? 'MCP server devs-ctx' : ''].filter(Boolean).join('; ');
        ctx.stdout.write(`${file.path}: ${file.action === 'absent' ? 'no such file' : what || 'nothing of devs-ctx'}\n`);
      }
    }
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}
