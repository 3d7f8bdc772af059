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
  $ devs-ctx analyze ~/.claude/projects/my-app --window 200k
  $ devs-ctx analyze session.jsonl --json | jq '.urgency, .totalTokens'
  $ cat rollout.jsonl | devs-ctx analyze - --format codex

Exit codes: 0 below the soft limit, 10 soft limit reached, 11 hard limit reached,
2 usage error, 3 input unreadable, 4 invalid transcript.`;

const PRUNE_EXAMPLES = `
Examples:
  $ devs-ctx prune session.jsonl --dry-run
  $ devs-ctx prune session.jsonl --in-place --window 200k
  $ devs-ctx prune session.jsonl -o pruned.jsonl --strategy recency --target 100k --json
  $ cat session.jsonl | devs-ctx prune --force > pruned.jsonl
  $ GEMINI_API_KEY=… devs-ctx prune session.jsonl --in-place --summarizer gemini --fallback extractive

Gemini: the key comes from $GEMINI_API_KEY, $GOOGLE_API_KEY or the config file's geminiApiKey and is
never printed; $DEVS_CTX_GEMINI_BASE_URL points requests at a proxy or gateway.

Exit codes: 0 pruned, or nothing to do (the output is then the input, byte for byte),
2 usage error, 3 input unreadable or output not writable, 4 invalid transcript,
5 summarizer or embedder failed (nothing written), 6 pinned and protected turns alone exceed
the limit (nothing written), 7 the file is locked by another devs-ctx, 130 interrupted
(nothing written).`;

const RESTORE_EXAMPLES = `
Examples:
  $ devs-ctx restore session.jsonl --in-place
  $ devs-ctx restore session.jsonl -o before-prune.jsonl --event 3f2a…

Turns appended after the prune stay at the end. Exit codes: 0 restored, 2 usage error,
3 file or archive unreadable, 4 no prune in the archive produced this file (or it changed
other than by appending).`;

const RECALL_EXAMPLES = `
Examples:
  $ devs-ctx recall "migration failed"
  $ devs-ctx recall parseConfig --file session.jsonl --json
  $ devs-ctx recall --turn toolu_01ABC

Exit codes: 0 (also when nothing matches), 2 usage error, 3 archive unreadable.`;

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
TAS/PRD (nothing written), 7 the file is locked, 130 interrupted (nothing written).`;

const REPLAY_EXAMPLES = `
Examples:
  $ devs-ctx replay session.jsonl --window 200k
  $ devs-ctx replay session.jsonl --threshold 8 --strategy recency --json | jq '.prunes, .hardLimitExceeded'

Feeds the transcript turn by turn through the orchestrator loop (offline pruner and refresher) and
shows where prunes and refreshes would fire. Writes nothing.

Exit codes: 0, 2 usage error, 3 input unreadable, 4 invalid transcript.`;

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

  const program = new Command('devs-ctx')
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
    .argument('[paths...]', 'transcript files or directories; - (or nothing, when piped) reads standard input')
    .option('--json', 'print one JSON document (with schemaVersion) and nothing else on stdout')
    .addOption(new Option('--format <name>', 'force the transcript format instead of detecting it').choices(FORMAT_CHOICES))
    .addOption(new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES))
    .option('--window <tokens>', "set the limits from a model's context window: soft 50%, hard 80% (e.g. 200k)")
    .option('--soft-limit <tokens>', 'soft limit: prune recommended from here (default 500k)')
    .option('--hard-limit <tokens>', 'hard limit: prune required from here (default 800k)')
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--strict', 'make any malformed line fatal (exit 4)')
    .option('--no-cache', 'do not read or write the token-count cache')
    .addHelpText('after', ANALYZE_EXAMPLES)
    .action(async (paths: string[], options: Record<string, unknown>) => {
      const { runAnalyze } = await import('./commands/analyze.js');
      exitCode = await runAnalyze(paths, options, ctx);
    });

  program
    .command('prune')
    .description('prune a transcript: keep pinned turns, mask old tool output, drop the least relevant turns, add one summary, archive what was removed')
    .argument('[file]', 'transcript file; - (or nothing, when piped) reads standard input')
    .option('-o, --output <file>', 'write the pruned transcript to this file (atomically) instead of stdout')
    .option('--in-place', 'replace the transcript itself (locks it; the original stays until the new file is complete)')
    .option('--dry-run', 'print the plan (what is masked or dropped, why, tokens saved) and write nothing')
    .option('--json', 'print one JSON report (with schemaVersion) on stdout; needs -o, --in-place or --dry-run')
    .option('--force', 'prune even when the urgency is none')
    .option('--target <tokens>', 'bring the window down to this many tokens (default: half the soft limit)')
    .addOption(new Option('--strategy <name>', 'which turns go first: relevance to the goal, or recency (oldest first)').choices(['relevance', 'recency']))
    .option('--goal <text>', 'what the agent is working on, to rank turns by (default: the latest user request or task turn)')
    .option('--archive <path>', 'SQLite archive to keep removed turns in (default: $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--no-archive', 'do not archive the removed turns (they then exist only in the original file)')
    .addOption(new Option('--summarizer <name>', 'who writes the summary: extractive (offline) or gemini (default: gemini when a Gemini API key is set, else extractive)').choices(['extractive', 'gemini']))
    .addOption(new Option('--embedder <name>', 'how turns are ranked for --strategy relevance: local (offline) or gemini (default: gemini when a Gemini API key is set, else local)').choices(['local', 'gemini']))
    .option('--model <id>', 'Gemini model for summaries (default gemini-3.5-flash; also $DEVS_CTX_MODEL)')
    .option('--embedding-model <id>', 'Gemini model for embeddings (default gemini-embedding-001; also $DEVS_CTX_EMBEDDING_MODEL)')
    .option('--timeout <seconds>', 'give up on one Gemini request after this many seconds (default 60); failed requests are retried with backoff')
    .addOption(new Option('--fallback <name>', 'when Gemini fails, use the offline summarizer and embedder instead of exiting 5').choices(['extractive']))
    .option('--no-redact', 'send text to Gemini without masking API keys, tokens, private keys and passwords first')
    .addOption(new Option('--format <name>', 'force the transcript format instead of detecting it').choices(FORMAT_CHOICES))
    .addOption(new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES))
    .option('--window <tokens>', "set the limits from a model's context window: soft 50%, hard 80% (e.g. 200k)")
    .option('--soft-limit <tokens>', 'soft limit (default 500k)')
    .option('--hard-limit <tokens>', 'hard limit (default 800k)')
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--strict', 'make any malformed line fatal (exit 4)')
    .option('--no-cache', 'do not read or write the token-count cache')
    .addHelpText('after', PRUNE_EXAMPLES)
    .action(async (file: string | undefined, options: Record<string, unknown>) => {
      const { runPrune } = await import('./commands/prune.js');
      exitCode = await runPrune(file, options, ctx);
    });

  program
    .command('restore')
    .description('rebuild a transcript as it was before a prune, byte for byte, from the archive')
    .argument('<file>', 'the pruned transcript')
    .option('-o, --output <file>', 'write the restored transcript to this file instead of stdout')
    .option('--in-place', 'replace the transcript with the restored one')
    .option('--event <id>', 'undo this prune (default: the latest prune that produced this file)')
    .option('--archive <path>', 'the SQLite archive (default: $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
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
    .option('--archive <path>', 'the SQLite archive (default: $DEVS_CTX_ARCHIVE, else $XDG_DATA_HOME/devs-ctx/archive.sqlite)')
    .option('--json', 'print one JSON document on stdout')
    .addHelpText('after', RECALL_EXAMPLES)
    .action(async (query: string[], options: Record<string, unknown>) => {
      const { runRecall } = await import('./commands/recall.js');
      exitCode = await runRecall(query, options, ctx);
    });

  program
    .command('refresh')
    .description('append a [CONTEXT REFRESH] turn (TAS and PRD summaries) when one is due in the current orchestrator node')
    .argument('[file]', 'transcript file; - (or nothing, when piped) reads standard input')
    .option('--check', 'write nothing; exit 12 when a refresh is due, 0 when not')
    .option('-o, --output <file>', 'write the transcript to this file (atomically) instead of stdout')
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
    .addOption(new Option('--format <name>', 'force the transcript format instead of detecting it').choices(FORMAT_CHOICES))
    .addOption(new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES))
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--strict', 'make any malformed line fatal (exit 4)')
    .option('--no-cache', 'do not read or write the token-count and summary caches')
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
    .option('--target <tokens>', 'what each prune brings the window down to (default: half the soft limit)')
    .addOption(new Option('--strategy <name>', 'which turns a prune removes first').choices(['relevance', 'recency']))
    .option('--goal <text>', 'the task the agent works on (default: the latest user request or task turn at each prune)')
    .option('--threshold <turns>', 'turns in a node between refreshes (default 5)')
    .option('--tas <file>', 'TAS for the refreshes (default: the transcript\'s tas turns)')
    .option('--prd <file>', 'PRD for the refreshes (default: the transcript\'s prd turns)')
    .option('--refresh-tokens <tokens>', 'condense the TAS and PRD to fit this many tokens in all (default 2000)')
    .option('--no-refresh', 'simulate prunes only')
    .addOption(new Option('--format <name>', 'force the transcript format instead of detecting it').choices(FORMAT_CHOICES))
    .addOption(new Option('--encoding <name>', 'tokenizer encoding (default o200k_base)').choices(ENCODING_CHOICES))
    .option('--window <tokens>', "set the limits from a model's context window: soft 50%, hard 80% (e.g. 200k)")
    .option('--soft-limit <tokens>', 'soft limit (default 500k)')
    .option('--hard-limit <tokens>', 'hard limit (default 800k)')
    .option('--config <path>', 'use this config file instead of the nearest devs-ctx.config.json')
    .option('--strict', 'make any malformed line fatal (exit 4)')
    .option('--no-cache', 'do not read or write the token-count and summary caches')
    .addHelpText('after', REPLAY_EXAMPLES)
    .action(async (file: string, options: Record<string, unknown>) => {
      const { runReplay } = await import('./commands/replay.js');
      exitCode = await runReplay(file, options, ctx);
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return ExitCode.ok;
      if (json) {
        return reportError(ctx, new UsageError(commanderError.replace(/^error: /, '').trim() || error.message, 'see --help'), true);
      }
      return ExitCode.usage;
    }
    return reportError(ctx, error, json);
  }
  return exitCode;
}
