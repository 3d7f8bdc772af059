import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { ExitCode, UsageError } from '../core/errors.js';
import type { CommandDefinition } from './command.js';
import { processContext } from './context.js';
import type { CliContext } from './context.js';
import { reportError } from './errors.js';
import { COMMANDS, PROGRAM } from './registry/index.js';
import { liveWorkers } from './live-workers.js';
import { endWhenFlushed, outputFailed } from './process-end.js';

/**
 * After a command has returned (bin/devs-ctx.js): ends the process with `code` once stdout and
 * stderr have flushed, when nothing else is open; otherwise leaves it to end as Node ends it.
 */
export function endWhenDone(code: number): boolean {
  return endWhenFlushed(process, code, liveWorkers());
}

/** bin/devs-ctx.js: standard output or error failed (a closed pipe, a full disk): see `outputFailed`. */
export function onOutputError(stream: 'stdout' | 'stderr', error: Error): void {
  outputFailed(process, stream, error, typeof process.exitCode === 'number' ? process.exitCode : 0);
}

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Adds a command (and its subcommands) to commander; its action runs it and keeps its exit code in `result`. */
function addCommand(parent: Command, definition: CommandDefinition, ctx: CliContext, result: { exitCode: number }, path = definition.name): void {
  const command = parent.command(definition.name).description(definition.description);
  for (const argument of definition.arguments ?? []) command.argument(argument.name, argument.description);
  for (const flag of definition.options ?? []) command.addOption(flag.option);
  if (definition.examples !== undefined) command.addHelpText('after', definition.examples);
  for (const sub of definition.subcommands ?? []) addCommand(command, sub, ctx, result, `${path} ${sub.name}`);
  const { run } = definition;
  if (run === undefined) return;
  command.action(async (...params: unknown[]) => {
    // commander passes the arguments, then the options, then the command itself.
    const raw = params.at(-2) as Record<string, unknown>;
    try {
      result.exitCode = await run(raw, params.slice(0, -2), ctx, path, main);
    } catch (error) {
      // Errors are JSON on stdout in both data modes.
      result.exitCode = reportError(ctx, error, raw['json'] === true || raw['ndjson'] === true, raw['ndjson'] === true && raw['json'] !== true);
    }
  });
}

/** Runs the command line; returns the exit code (bin/ sets process.exitCode, nothing below exits). */
export async function main(argv: readonly string[], given?: CliContext): Promise<number> {
  // A usage error commander finds is JSON on stdout too in the data modes (a --ndjson line with its type).
  const ndjson = argv.includes('--ndjson') && !argv.includes('--json');
  const json = argv.includes('--json') || ndjson;
  let ctx: CliContext;
  try {
    ctx = given ?? processContext();
  } catch (error) {
    // process.cwd() fails when the working directory was deleted.
    process.stderr.write(`devs-ctx: cannot start: ${error instanceof Error ? error.message : String(error)}\n  hint: cd to an existing directory\n`);
    return ExitCode.input;
  }
  const result = { exitCode: ExitCode.ok as number };
  let commanderError = '';
  const program = new Command(PROGRAM.name)
    .description(PROGRAM.description)
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
    .addHelpText('after', PROGRAM.examples);
  // Only the command being run, when it is named first and no help is asked for: building every
  // command's options costs a few milliseconds that `--help` and a mistyped name need, a run does not.
  const named = argv.includes('--help') || argv.includes('-h') ? undefined : COMMANDS.find((c) => c.name === argv[0]);
  for (const definition of named ? [named] : COMMANDS) addCommand(program, definition, ctx, result);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) return reportError(ctx, error, json, ndjson);
    if (error.exitCode === 0) return ExitCode.ok;
    if (argv[0] === 'agent-hook') {
      // What an agent runs never blocks it (exit 2 blocks Claude Code's PreCompact and any Gemini CLI hook).
      if (commanderError) ctx.stderr.write(commanderError);
      ctx.stderr.write('devs-ctx agent-hook: not run (the agent goes on)\n');
      if (argv.includes('gemini')) ctx.stdout.write('{}\n');
      return ExitCode.ok;
    }
    if (json) return reportError(ctx, new UsageError(commanderError.replace(/^error: /, '').trim() || error.message, 'see --help'), true, ndjson);
    return ExitCode.usage;
  }
  return result.exitCode;
}
