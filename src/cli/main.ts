import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { ExitCode, UsageError } from '../core/errors.js';
import { processContext } from './context.js';
import type { CliContext } from './context.js';
import { reportError } from './errors.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const FORMAT_CHOICES = ['devs', 'claude-code', 'codex', 'gemini', 'openai-chat', 'openhands'];
const ENCODING_CHOICES = ['o200k_base', 'cl100k_base'];

const ANALYZE_EXAMPLES = `
Examples:
  $ devs-ctx analyze session.jsonl
  $ devs-ctx analyze ~/.claude/projects --since 7d --sort urgency
  $ devs-ctx analyze '~/.codex/sessions/**/*.jsonl' --ndjson | jq -c 'select(.urgency != "none")'
  $ devs-ctx analyze session.jsonl --json | jq '.urgency, .context'
  $ cat rollout.jsonl | devs-ctx analyze - --format codex

The size is the one the model sees: for a transcript that records its API usage (Claude Code,
Codex, Gemini CLI) the estimate is calibrated on those records (system prompt, tools, the model's
tokenizer); --basis estimate uses the plain estimate. Without --window or limits, the limits are
soft 50 % / hard 80 % of the window of the session's model (else 500k / 800k).

Exit codes (by that size): 0 below the soft limit, 10 soft limit reached, 11 hard limit reached,
2 usage error, 3 input unreadable, 4 invalid transcript.`;

const PRUNE_EXAMPLES = `
Examples:
  $ devs-ctx prune session.jsonl --dry-run
  $ devs-ctx prune session.jsonl --in-place --window 200k
  $ devs-ctx prune session.jsonl -o pruned.jsonl --strategy recency --target 100k --json
  $ cat session.jsonl | devs-ctx prune --force > pruned.jsonl
  $ devs-ctx prune session.jsonl --in-place --interactive
  $ GEMINI_API_KEY=… devs-ctx prune session.jsonl --in-place --summarizer gemini --fallback extractive

Gemini: the key comes from $GEMINI_API_KEY, $GOOGLE_API_KEY or the config file's geminiApiKey and is
never printed; $DEVS_CTX_GEMINI_BASE_URL points requests at a proxy or gateway (https, or http to
this machine). A project's devs-ctx.config.json geminiBaseUrl is ignored unless it is https and
~/.config/devs-ctx/config.json says "allowProjectGeminiBaseUrl": true.

Exit codes: 0 pruned, or nothing to do (the output is then the input, byte for byte),
2 usage error, 3 input unreadable or output not writable, 4 invalid transcript,
5 summarizer or embedder failed (nothing written), 6 pinned and protected turns alone exceed
the limit (nothing written), 7 the file is locked by another devs-ctx or open for writing
in another process (Linux), 130 interrupted before the write (nothing written).`;

const RESTORE_EXAMPLES = `
Examples:
  $ devs-ctx restore session.jsonl --in-place
  $ devs-ctx restore session.jsonl -o before-prune.jsonl --event 3f2a…

Turns appended after the prune stay at the end. Exit codes: 0 restored, 2 usage error,
3 file or archive unreadable, 4 no prune in the archive produced this file (or it changed
other than by appending), 7 --in-place: the file is locked or open for writing in another
process (Linux).`;

const RECALL_EXAMPLES = `
Examples:
  $ devs-ctx recall "migration failed"
  $ devs-ctx recall parseConfig --file session.jsonl --json
  $ devs-ctx recall --turn toolu_01ABC

Exit codes: 0 (also when nothing matches, or no turn has the --turn id), 2 usage error, 3 archive
unreadable or damaged. The archive is opened read-only.`;

const ARCHIVE_EXAMPLES = `
Examples:
  $ devs-ctx archive copy --from ~/.local/share/devs-ctx/archive.sqlite --to postgres://devs_ctx@db.internal/team
  $ devs-ctx archive copy --from "$DEVS_CTX_ARCHIVE_URL" --to backup.sqlite --json

The password in a URL is never printed (use PGPASSWORD or ~/.pgpass to keep it out of the command
line); sslmode and connect_timeout (seconds, default 10) in the URL are honoured.
Exit codes: 0 copied and verified, 2 usage error, 3 an archive unreadable or unreachable, or an event
with the same id but other content in the destination (nothing is overwritten).`;

const REFRESH_EXAMPLES = `
Examples:
  $ devs-ctx refresh session.jsonl --check          # exit 12 when a refresh is due
  $ devs-ctx refresh session.jsonl --in-place       # append one when due (locked, atomic)
  $ devs-ctx refresh session.jsonl --in-place --tas docs/tas.md --prd docs/prd.md --refresh-tokens 1500
  $ devs-ctx refresh session.jsonl -o refreshed.jsonl --force --json

A refresh is due after --threshold (5) turns in the current orchestrator node (a turn's "node";
a new node starts the count again) since the last refresh. Running it twice never injects twice.

Exit codes: 0 refreshed, or nothing due (the output is then the input, byte for byte),
12 --check: a refresh is due, 2 usage error (also: no TAS or PRD to refresh with),
3 input unreadable or output not writable, 4 invalid transcript, 5 Gemini failed to condense the
TAS/PRD (nothing written), 7 the file is locked or open for writing in another process (Linux),
130 interrupted (nothing written).`;

const REPLAY_EXAMPLES = `
Examples:
  $ devs-ctx replay session.jsonl --window 200k
  $ devs-ctx replay session.jsonl --threshold 8 --strategy recency --json | jq '.prunes, .hardLimitExceeded'

Feeds the transcript turn by turn through the orchestrator loop (offline pruner and refresher) and
shows where prunes and refreshes would fire. Writes nothing.

Exit codes: 0, 2 usage error, 3 input unreadable, 4 invalid transcript.`;

const AUDIT_EXAMPLES = `
Identifiers are file paths, error messages, commands, the user's instructions and code names of
the compacted turns; one counts as kept when the summary names it (errors and instructions: most of
their words).

Examples:
  $ devs-ctx audit ~/.claude/projects/-home-me-app/70d782f7-….jsonl
  $ devs-ctx audit rollout.jsonl --json | jq '.totals.keptShare'

Exit codes: 0 (also when the session has no compaction), 2 usage error, 3 input unreadable,
4 invalid transcript.`;

const MCP_EXAMPLES = `
Tools: context_status, recall (archived and compacted turns), get_turn (paged), pinned_context.
Every answer is capped in tokens (maxTokens, default 2000) and says how to get more.

Examples:
  $ claude mcp add devs-ctx -- devs-ctx mcp          # or: devs-ctx hook install --agent claude-code
  $ devs-ctx mcp --session 70d782f7-b303-4e48-9512-6bec16c37abd

Exit codes: 0 when the client closes the connection, 2 usage error.`;

function agentOption(description: string): Option {
  return new Option('--agent <name>', description).choices(['claude-code', 'codex', 'gemini']);
}

/** commander's Command with `addOptions`, so shared option sets can sit in a command's chain. */
class DevsCommand extends Command {
  override createCommand(name?: string): DevsCommand {
    return new DevsCommand(name);
  }

  addOptions(options: readonly Option[]): this {
    for (const option of options) this.addOption(option);
    return this;
  }
}

/** The options every command that reads a transcript shares: format, encoding, limits, config, strictness, caches. */
function readingOptions(which: { readonly limits: boolean; readonly caches: string }): Option[] {
  return [
    new Option('--format <name>', 'force the transcript format instead of detecting it').choices(FORMAT_CHOICES),
    new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES),
    ...(which.limits
      ? [
          new Option('--window <tokens>', "set the limits from a model's context window: soft 50%, hard 80% (e.g. 200k; default: the session's model's window)"),
          new Option('--soft-limit <tokens>', "soft limit: prune recommended from here (default 50% of the model's window, else 500k)"),
          new Option('--hard-limit <tokens>', "hard limit: prune required from here (default 80% of the model's window, else 800k)"),
        ]
      : []),
    new Option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json'),
    new Option('--strict', 'make any malformed line fatal (exit 4)'),
    new Option('--no-cache', `do not read or write ${which.caches}`),
  ];
}

/** Runs the command line; returns the exit code (bin/ sets process.exitCode, nothing below exits). */
export async function main(argv: readonly string[], given?: CliContext): Promise<number> {
  const json = argv.includes('--json');
  let ctx: CliContext;
  try {
    ctx = given ?? processContext();
  } catch (error) {
    // process.cwd() fails when the working directory was deleted.
    process.stderr.write(`devs-ctx: cannot start: ${error instanceof Error ? error.message : String(error)}\n  hint: cd to an existing directory\n`);
    return ExitCode.input;
  }
  let exitCode: number = ExitCode.ok;
  let commanderError = '';

  const program = new DevsCommand('devs-ctx')
    .description("Keep a coding agent's context window healthy: count, classify, prune and refresh transcripts.")
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => {
        if (json) commanderError += s;
        else ctx.stderr.write(s);
      },
    })
    .addHelpText(
      'after',
      `
Examples:
  $ devs-ctx analyze session.jsonl
  $ devs-ctx analyze session.jsonl --json | jq .urgency
  $ devs-ctx prune session.jsonl --in-place
  $ devs-ctx refresh session.jsonl --check || devs-ctx refresh session.jsonl --in-place
  $ devs-ctx replay session.jsonl --window 200k

Run "devs-ctx <command> --help" for a command's options and exit codes.`,
    );

  program
    .command('analyze')
    .description('count tokens, classify pruning urgency, and show what a prune would remove')
    .argument('[paths...]', "transcript files, directories or quoted globs ('~/.claude/projects/*/*.jsonl'); - (or nothing, when piped) reads standard input")
    .option('--json', 'print one JSON document (with schemaVersion) and nothing else on stdout')
    .option('--ndjson', 'many sessions: print one JSON line per session as it is done, then a totals line')
    .addOption(new Option('--sort <key>', 'many sessions: order rows by tokens or urgency, largest first (rows then print at the end)').choices(['tokens', 'urgency']))
    .option('--since <when>', "many sessions: only sessions with a turn at or after this (2026-05-01, 2026-05-01T09:30Z, or an age: 12h, 7d, 2w)")
    .option('--until <when>', 'many sessions: only sessions with a turn before this (a date includes that whole day)')
    .option('--jobs <n>', 'worker threads for many sessions, or for counting one large transcript (default: one per core; 1 = no workers)')
    .addOption(new Option('--basis <kind>', 'the context size: auto (calibrated on the recorded API calls) or estimate (the turns in the file only)').choices(['auto', 'estimate']))
    .addOptions(readingOptions({ limits: true, caches: 'the token-count cache nor the finished reports of unchanged files' }))
    .addHelpText('after', ANALYZE_EXAMPLES)
    .action(async (paths: string[], options: Record<string, unknown>) => {
      const { runAnalyze } = await import('./commands/analyze.js');
      exitCode = await runAnalyze(paths, options, ctx);
    });

  program
    .command('prune')
    .description('prune a transcript: keep pinned turns, mask old tool output, drop the least relevant turns, add one summary, archive what was removed')
    .argument('[file]', 'transcript file; - (or nothing, when piped) reads standard input')
    .option('-o, --output <file>', 'write the pruned transcript to this file (atomically; a FIFO or device is written through) instead of stdout')
    .option('--in-place', 'replace the transcript itself (locks it; the original stays until the new file is complete)')
    .option('--dry-run', 'print the plan (what is masked or dropped, why, tokens saved) and write nothing')
    .option('--json', 'print one JSON report (with schemaVersion) on stdout; needs -o, --in-place or --dry-run')
    .option('--force', 'prune even when the urgency is none')
    .option('--target <tokens>', "bring the window down to this many tokens, in the model's tokens (default: half the soft limit)")
    .option('--summary-share <percent>', "the summary's budget as a share of the removed tokens (default 2 %, kept between 1,000 and 8,000 tokens)")
    .addOption(new Option('--strategy <name>', 'which turns go first: relevance to the goal, or recency (oldest first)').choices(['relevance', 'recency']))
    .option('--goal <text>', 'what the agent is working on, to rank turns by (default: the latest user request or task turn)')
    .option('--archive <path|url>', 'where to keep removed turns: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--no-archive', 'do not archive the removed turns (they then exist only in the original file)')
    .addOption(new Option('--summarizer <name>', 'who writes the summary: extractive (offline) or gemini (default: gemini when a Gemini API key is set, else extractive)').choices(['extractive', 'gemini']))
    .addOption(new Option('--embedder <name>', 'how turns are ranked for --strategy relevance: local (offline) or gemini (default: gemini when a Gemini API key is set, else local)').choices(['local', 'gemini']))
    .option('--model <id>', 'Gemini model for summaries (default gemini-3.5-flash; also $DEVS_CTX_MODEL)')
    .option('--embedding-model <id>', 'Gemini model for embeddings (default gemini-embedding-001; also $DEVS_CTX_EMBEDDING_MODEL)')
    .option('--timeout <seconds>', 'give up on one Gemini request after this many seconds (default 60); failed requests are retried with backoff')
    .addOption(new Option('--fallback <name>', 'when Gemini fails, use the offline summarizer and embedder instead of exiting 5').choices(['extractive']))
    .option('--no-redact', 'send text to Gemini without masking API keys, tokens, private keys and passwords first')
    .option('-i, --interactive', 'on a terminal: show the plan, let me pin or unpin turns and change the target, then prune when I confirm')
    .option('-y, --yes', 'with --interactive: show the plan and prune without asking (also without a terminal)')
    .addOptions(readingOptions({ limits: true, caches: 'the token-count cache' }))
    .addHelpText('after', PRUNE_EXAMPLES)
    .action(async (file: string | undefined, options: Record<string, unknown>) => {
      const { runPrune } = await import('./commands/prune.js');
      exitCode = await runPrune(file, options, ctx);
    });

  program
    .command('restore')
    .description('rebuild a transcript as it was before a prune, byte for byte, from the archive')
    .argument('<file>', 'the pruned transcript')
    .option('-o, --output <file>', 'write the restored transcript to this file (atomically; a FIFO or device is written through) instead of stdout')
    .option('--in-place', 'replace the transcript with the restored one')
    .option('--event <id>', 'undo this prune (default: the latest prune that produced this file)')
    .option('--archive <path|url>', 'the archive: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--json', 'print one JSON report on stdout; needs -o or --in-place')
    .addHelpText('after', RESTORE_EXAMPLES)
    .action(async (file: string, options: Record<string, unknown>) => {
      const { runRestore } = await import('./commands/restore.js');
      exitCode = await runRestore(file, options, ctx);
    });

  program
    .command('recall')
    .description('search the turns prunes archived (full text, ranked), or print one archived turn')
    .argument('[query...]', 'words to look for')
    .option('--turn <id>', 'print the full archived text of this turn')
    .option('--event <id>', 'only this prune')
    .option('--file <path>', 'only prunes of this transcript')
    .option('--limit <n>', 'at most this many matches (default 10)')
    .option('--archive <path|url>', 'the archive: a SQLite file or a postgres:// URL (default: $DEVS_CTX_ARCHIVE_URL, else $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--json', 'print one JSON document on stdout')
    .addHelpText('after', RECALL_EXAMPLES)
    .action(async (query: string[], options: Record<string, unknown>) => {
      const { runRecall } = await import('./commands/recall.js');
      exitCode = await runRecall(query, options, ctx);
    });

  const archive = program
    .command('archive')
    .description('manage the archive itself: copy it between SQLite and PostgreSQL')
    .addHelpText('after', ARCHIVE_EXAMPLES);
  archive
    .command('copy')
    .description('copy every prune event the destination lacks (a SQLite file or a PostgreSQL database, either way), then verify counts and content hashes; safe to run again')
    .option('--from <path|url>', 'the archive to copy from: a SQLite file, or postgres://user@host/db')
    .option('--to <path|url>', 'the archive to copy into (created or migrated if needed)')
    .option('--json', 'print one JSON report on stdout')
    .addHelpText('after', ARCHIVE_EXAMPLES)
    .action(async (options: Record<string, unknown>) => {
      const { runArchiveCopy } = await import('./commands/archive-copy.js');
      exitCode = await runArchiveCopy(options, ctx);
    });

  program
    .command('refresh')
    .description('append a [CONTEXT REFRESH] turn (TAS and PRD summaries) when one is due in the current orchestrator node')
    .argument('[file]', 'transcript file; - (or nothing, when piped) reads standard input')
    .option('--check', 'write nothing; exit 12 when a refresh is due, 0 when not')
    .option('-o, --output <file>', 'write the transcript to this file (atomically; a FIFO or device is written through) instead of stdout')
    .option('--in-place', 'replace the transcript itself (locks it; the original stays until the new file is complete)')
    .option('--json', 'print one JSON report (with schemaVersion) on stdout; needs --check, -o or --in-place')
    .option('--threshold <turns>', 'turns in a node between refreshes (default 5)')
    .option('--force', 'refresh now even when fewer turns have passed (never twice in a row)')
    .option('--tas <file>', 'read the TAS from this file (default: the transcript\'s tas turns)')
    .option('--prd <file>', 'read the PRD from this file (default: the transcript\'s prd turns)')
    .option('--refresh-tokens <tokens>', 'condense the TAS and PRD to fit this many tokens in all (default 2000)')
    .addOption(new Option('--summarizer <name>', 'who condenses a TAS/PRD over budget: extractive (an offline outline) or gemini (default: gemini when a Gemini API key is set)').choices(['extractive', 'gemini']))
    .option('--model <id>', 'Gemini model for condensing (default gemini-3.5-flash; also $DEVS_CTX_MODEL)')
    .option('--timeout <seconds>', 'give up on one Gemini request after this many seconds (default 60)')
    .addOption(new Option('--fallback <name>', 'when Gemini fails, condense offline instead of exiting 5').choices(['extractive']))
    .option('--no-redact', 'send the TAS/PRD to Gemini without masking secrets first')
    .addOptions(readingOptions({ limits: false, caches: 'the token-count and summary caches' }))
    .addHelpText('after', REFRESH_EXAMPLES)
    .action(async (file: string | undefined, options: Record<string, unknown>) => {
      const { runRefresh } = await import('./commands/refresh.js');
      exitCode = await runRefresh(file, options, ctx);
    });

  program
    .command('replay')
    .description('replay a transcript through the orchestrator loop and show where prunes and refreshes would fire')
    .argument('<file>', 'transcript file (- reads standard input)')
    .option('--json', 'print one JSON report (with schemaVersion) and nothing else on stdout')
    .option('--target <tokens>', "what each prune brings the window down to, in the model's tokens (default: half the soft limit)")
    .addOption(new Option('--strategy <name>', 'which turns a prune removes first').choices(['relevance', 'recency']))
    .option('--goal <text>', 'the task the agent works on (default: the latest user request or task turn at each prune)')
    .option('--threshold <turns>', 'turns in a node between refreshes (default 5)')
    .option('--tas <file>', 'TAS for the refreshes (default: the transcript\'s tas turns)')
    .option('--prd <file>', 'PRD for the refreshes (default: the transcript\'s prd turns)')
    .option('--refresh-tokens <tokens>', 'condense the TAS and PRD to fit this many tokens in all (default 2000)')
    .option('--no-refresh', 'simulate prunes only')
    .addOption(new Option('--summarizer <name>', 'who writes each simulated summary (default extractive: a replay stays offline unless asked)').choices(['extractive', 'gemini']))
    .addOption(new Option('--embedder <name>', 'how turns are ranked (default local)').choices(['local', 'gemini']))
    .option('--model <id>', 'Gemini model for summaries (with --summarizer gemini)')
    .option('--timeout <seconds>', 'give up on one Gemini request after this many seconds (default 60)')
    .addOptions(readingOptions({ limits: true, caches: 'the token-count and summary caches' }))
    .addHelpText('after', REPLAY_EXAMPLES)
    .action(async (file: string, options: Record<string, unknown>) => {
      const { runReplay } = await import('./commands/replay.js');
      exitCode = await runReplay(file, options, ctx);
    });

  program
    .command('audit')
    .description("what each of the agent's own compactions kept and lost: tokens before and after, identifiers of the compacted turns its summary kept or dropped, and the recall query for each lost one")
    .argument('[file]', 'a Claude Code, Codex or Gemini CLI session file; - reads standard input')
    .option('--json', 'print one JSON document (with schemaVersion) on stdout: every compaction, every kept and lost identifier')
    .option('--lost <n>', 'lost identifiers listed per compaction in the text report (default 15)')
    .addOption(new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES))
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--no-cache', 'do not read or write the token-count cache')
    .addHelpText('after', AUDIT_EXAMPLES)
    .action(async (file: string | undefined, options: Record<string, unknown>) => {
      const { runAudit } = await import('./commands/audit.js');
      exitCode = await runAudit(file, options, ctx);
    });

  program
    .command('mcp')
    .description("serve the agent over MCP (stdio): its context status, recall of pruned and compacted turns, any turn read back, the pinned documents")
    .option('--session <id|path>', 'the session to answer for (default: each call\'s session argument, else the newest session of this directory)')
    .addOption(new Option('--agent <name>', 'only look at this agent\'s sessions').choices(['claude-code', 'codex', 'gemini']))
    .option('--archive <path>', 'the SQLite archive (default: $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .addHelpText('after', MCP_EXAMPLES)
    .action(async (options: Record<string, unknown>) => {
      const { runMcp } = await import('./commands/mcp.js');
      exitCode = await runMcp(options, ctx);
    });

  const HOOK_EXAMPLES = `
Examples:
  $ devs-ctx hook install                                        # pre-commit; transcripts from devs-ctx.config.json
  $ devs-ctx hook install --hook pre-push --block-on hard --transcript 'sessions/*.jsonl'
  $ devs-ctx hook status --json | jq '.hooks[].transcripts'

The hook runs the hook that was there before (kept as .devs-ctx-previous/<hook>), then analyze;
it prunes in place the transcripts at the soft or hard limit, refreshes those due, and prints one
line. It blocks only with --block-on: exit 1 when a transcript had reached that limit before its
prune. uninstall puts the previous hook back, byte for byte.

With --agent claude-code|codex|gemini it installs into the agent instead: before each compaction
its window is archived and indexed, right after it the agent gets its pinned documents and lookup
hints back, and the devs-ctx MCP server is registered. Project settings by default, --user for yours:
  $ devs-ctx hook install --agent claude-code        # .claude/settings.json and .mcp.json
  $ devs-ctx hook install --agent codex --user       # ~/.codex/hooks.json and ~/.codex/config.toml
  $ devs-ctx hook status --agent gemini              # .gemini/settings.json
  $ devs-ctx hook uninstall --agent codex --user     # the files as they were, byte for byte

Exit codes: 0, 2 usage error (unknown hook, no transcripts configured, a hook edited by hand
without --force, an agent settings file that is not valid JSON), 3 not a git repository (or git missing).`;
  const hook = program
    .command('hook')
    .description('install, remove or inspect a git hook that prunes and refreshes the agent transcripts on every commit')
    .addHelpText('after', HOOK_EXAMPLES);
  hook
    .command('install')
    .description('write the hook (default pre-commit), keeping any hook already there and running it first')
    .option('--hook <name>', 'which git hook (default pre-commit; any standard hook)')
    .addOption(new Option('--block-on <level>', 'exit 1 when a transcript had reached this limit before its prune (default: never block)').choices(['none', 'soft', 'hard']))
    .option('--transcript <path>', 'a transcript path or (quoted) glob to watch, relative to here; repeatable (default: the config file\'s "transcripts")', (value: string, previous: string[] = []) => [...previous, value])
    .option('--no-refresh', 'do not refresh transcripts where a refresh is due (prune only)')
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--force', 'replace a devs-ctx hook that was edited by hand')
    .option('--stdout', 'print the hook script (running npx --no-install devs-ctx) instead of installing it, for husky or lefthook')
    .option('--json', 'print one JSON report on stdout')
    .addOption(agentOption('install this agent\'s compaction hooks and the devs-ctx MCP server into its own settings instead of a git hook'))
    .option('--user', 'with --agent: the user\'s settings (~/.claude, ~/.codex, ~/.gemini) instead of the project\'s')
    .addHelpText('after', HOOK_EXAMPLES)
    .action(async (options: Record<string, unknown>) => {
      if (options['agent'] !== undefined) {
        const [{ runAgentInstall }, { packageInfo }] = await Promise.all([import('./commands/agent-install.js'), import('./commands/hook.js')]);
        exitCode = await runAgentInstall(options, packageInfo().bin, ctx);
        return;
      }
      const { runHookInstall } = await import('./commands/hook.js');
      exitCode = await runHookInstall(options, ctx);
    });
  hook
    .command('uninstall')
    .description('remove the devs-ctx hook(s) and put back the hook that was there before, byte for byte')
    .option('--hook <name>', 'only this git hook (default: every hook devs-ctx installed here)')
    .option('--force', 'remove a devs-ctx hook even if it was edited by hand')
    .option('--json', 'print one JSON report on stdout')
    .addOption(agentOption('remove devs-ctx\'s hooks and MCP server from this agent\'s settings (files devs-ctx changed come back byte for byte)'))
    .option('--user', 'with --agent: the user\'s settings instead of the project\'s')
    .addHelpText('after', HOOK_EXAMPLES)
    .action(async (options: Record<string, unknown>) => {
      if (options['agent'] !== undefined) {
        const [{ runAgentUninstall }, { packageInfo }] = await Promise.all([import('./commands/agent-install.js'), import('./commands/hook.js')]);
        exitCode = await runAgentUninstall(options, packageInfo().bin, ctx);
        return;
      }
      const { runHookUninstall } = await import('./commands/hook.js');
      exitCode = await runHookUninstall(options, ctx);
    });
  hook
    .command('status')
    .description('say whether the hook is installed, where, for which git hook, and which transcripts it covers')
    .option('--hook <name>', 'only this git hook (default: every hook devs-ctx installed here)')
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--print-transcripts', 'print only the transcript files covered, one absolute path a line (a name holding a line break is left out, with a warning)')
    .option('--null', 'with --print-transcripts: end each path with a NUL byte instead (for xargs -0)')
    .option('--hook-file <path>', 'with --print-transcripts: read the settings from this hook script (the hook passes "$0")')
    .option('--json', 'print one JSON document on stdout')
    .addOption(agentOption('show which of devs-ctx\'s hooks and MCP server this agent\'s settings hold'))
    .option('--user', 'with --agent: the user\'s settings instead of the project\'s')
    .addHelpText('after', HOOK_EXAMPLES)
    .action(async (options: Record<string, unknown>) => {
      if (options['agent'] !== undefined) {
        const { runAgentStatus } = await import('./commands/agent-install.js');
        exitCode = await runAgentStatus(options, ctx);
        return;
      }
      const { runHookStatus } = await import('./commands/hook.js');
      exitCode = await runHookStatus(options, ctx);
    });

  hook
    .command('run')
    .description('what the git hook runs: prune and refresh the transcripts it covers that changed since its last run (one process)')
    .requiredOption('--hook-file <path>', 'the hook script whose settings to use (the hook passes "$0")')
    .action(async (options: Record<string, unknown>) => {
      const { runHookRun } = await import('./commands/hook-run.js');
      exitCode = await runHookRun(options, ctx);
    });

  program
    .command('agent-hook')
    .description('what the agents\' compaction hooks run (installed by hook install --agent): reads the hook\'s JSON on stdin; never blocks the agent')
    .argument('<hook>', 'pre-compact (archive and index the window) or post-compact (print the re-grounding)')
    .addOption(agentOption('the agent that runs the hook').makeOptionMandatory())
    .action(async (event: string, options: Record<string, unknown>) => {
      const { runAgentHook } = await import('./commands/agent-hook.js');
      exitCode = await runAgentHook(event, options, ctx);
    });

  program
    .command('init')
    .description('write a devs-ctx.config.json for this project: asks (or takes flags) for transcripts, limits, pinned types, strategy, summarizer and archive')
    .option('--transcripts <paths>', 'transcripts to look after: paths or globs, comma-separated or repeated, relative to the config file', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .option('--window <tokens>', "the model's context window: soft limit 50%, hard 80% (e.g. 200k; default 1M)")
    .option('--soft-limit <tokens>', 'the soft limit itself (instead of --window)')
    .option('--hard-limit <tokens>', 'the hard limit itself (instead of --window)')
    .option('--pinned-types <types>', 'comma-separated turn types never pruned, or none (default system,prd,tas,requirements,spec,plan)')
    .addOption(new Option('--strategy <name>', 'which turns a prune removes first (default relevance)').choices(['relevance', 'recency']))
    .addOption(new Option('--summarizer <name>', 'extractive: offline, nothing leaves the machine; gemini: Gemini summaries and embeddings (default: gemini when a key is set)').choices(['extractive', 'gemini']))
    .option('--archive <path|url>', 'where prunes archive removed turns: a path relative to the config file, or a postgres:// URL without its password (default: $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--config <path>', 'the file to write (default ./devs-ctx.config.json)')
    .option('-y, --yes', 'ask nothing: the defaults for every question no flag answers')
    .option('--force', 'replace an existing config file without asking')
    .option('--store-api-key', 'also write the key from $GEMINI_API_KEY/$GOOGLE_API_KEY into the file (mode 0600); the environment is better')
    .option('--json', 'print { schemaVersion, path, replaced, config, notes } on stdout (the key, if stored, is hidden)')
    .addHelpText(
      'after',
      `
Examples:
  $ devs-ctx init                                        # on a terminal: asks, then writes ./devs-ctx.config.json
  $ devs-ctx init --yes                                  # the defaults, no questions (also without a terminal)
  $ devs-ctx init --transcripts '.devs/*.jsonl' --window 200k --summarizer extractive --yes
  $ devs-ctx init --force --yes --strategy recency       # replace an existing config

Without a terminal every question needs its flag, or --yes. An existing file is replaced only after
asking, or with --force. Exit codes: 0 written, 2 usage error (also: the file exists, no terminal and
no --force), 3 not writable, 130 cancelled (nothing written).`,
    )
    .action(async (options: Record<string, unknown>) => {
      const { runInit } = await import('./commands/init.js');
      exitCode = await runInit(options, ctx);
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return ExitCode.ok;
      if (argv[0] === 'agent-hook') {
        // What an agent runs never blocks it (exit 2 blocks Claude Code's PreCompact and any Gemini CLI hook).
        if (commanderError) ctx.stderr.write(commanderError);
        ctx.stderr.write('devs-ctx agent-hook: not run (the agent goes on)\n');
        if (argv.includes('gemini')) ctx.stdout.write('{}\n');
        return ExitCode.ok;
      }
      if (json) {
        return reportError(ctx, new UsageError(commanderError.replace(/^error: /, '').trim() || error.message, 'see --help'), true);
      }
      return ExitCode.usage;
    }
    return reportError(ctx, error, json);
  }
  return exitCode;
}
