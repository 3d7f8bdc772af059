import type { CliContext } from './context.js';
import type { Flag, OptionsOf } from './options.js';

/** A positional argument as commander declares it: `<file>`, `[file]`, `[paths...]`. */
interface CommandArgument {
  readonly name: string;
  readonly description: string;
}

/** The CLI's entry point, for a command that runs others in the same process (`hook run`). */
export type Main = (argv: readonly string[], given?: CliContext) => Promise<number>;

/** What a command's `run` is given: its options validated and converted, its arguments, the outside world. */
interface CommandInput<O> {
  readonly options: O;
  readonly args: readonly unknown[];
  readonly ctx: CliContext;
  readonly main: Main;
}

/**
 * One command of the CLI, as main.ts wires it into commander: everything `--help` shows (light:
 * strings and flags) and `run`, which imports the command's module only when the command runs.
 */
export interface CommandDefinition {
  readonly name: string;
  readonly description: string;
  readonly arguments?: readonly CommandArgument[];
  readonly options?: readonly Flag[];
  /** Help text after the options: examples, notes, exit codes. */
  readonly examples?: string;
  readonly subcommands?: readonly CommandDefinition[];
  /** Validates commander's raw options (every bad flag reported) and runs the command; `path` names it in messages. */
  readonly run?: (raw: Record<string, unknown>, args: readonly unknown[], ctx: CliContext, path: string, main: Main) => Promise<number>;
}

/** A command with its flags' options type inferred for `run`. */
export function defineCommand<const F extends readonly Flag[]>(definition: {
  readonly name: string;
  readonly description: string;
  readonly arguments?: readonly CommandArgument[];
  readonly options: F;
  readonly examples?: string;
  readonly run: (input: CommandInput<OptionsOf<F>>) => Promise<number>;
}): CommandDefinition {
  const { run, ...rest } = definition;
  return {
    ...rest,
    run: async (raw, args, ctx, path, main) => {
      const { parseOptions } = await import('./parse-options.js');
      return run({ options: parseOptions(definition.options, raw, path), args, ctx, main });
    },
  };
}
