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
