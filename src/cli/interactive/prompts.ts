import type { Readable, Writable } from 'node:stream';
import { InterruptedError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { thousands as thousandsOf } from '../../core/numbers.js';

/**
 * What the interactive commands (`init`, `prune --interactive`) share: where prompts read and
 * draw, whether there is a terminal to ask on, and how a cancelled prompt ends the command.
 * `@clack/prompts` is imported only here, lazily, so every other command starts without it.
 */

export type Clack = typeof import('@clack/prompts');

/** The streams a prompt uses: the keyboard, and the terminal it draws on (stdout, or stderr when stdout carries data). */
export interface PromptIO {
  readonly input: Readable;
  readonly output: Writable;
}

export function promptIO(ctx: CliContext, output: CliContext['stdout'] | CliContext['stderr']): PromptIO {
  return { input: ctx.stdin, output };
}

/** A prompt needs a person: the keyboard and the screen it draws on must both be terminals. */
export function canPrompt(ctx: CliContext, output: { isTTY?: boolean }): boolean {
  return ctx.stdin.isTTY === true && output.isTTY === true && ctx.env['TERM'] !== 'dumb';
}

export async function loadClack(): Promise<Clack> {
  return import('@clack/prompts');
}

/** The message a cancelled prompt leaves; the command then exits 130 [SPEC §3]. */
const CANCELLED = 'cancelled; nothing was written';

/**
 * A prompt's answer, or the end of the command when it was cancelled (Ctrl-C or Esc):
 * InterruptedError, exit 130, before anything is written.
 */
export function answer<T>(clack: Clack, io: PromptIO, value: T, message = CANCELLED): Exclude<T, symbol> {
  if (clack.isCancel(value) || typeof value === 'symbol') cancel(clack, io, message);
  // Narrowed above: a prompt answers its value or the cancel symbol.
  return value as Exclude<T, symbol>;
}

/** Ends the command as the user asked: exit 130, nothing written. */
export function cancel(clack: Clack, io: PromptIO, message = CANCELLED): never {
  clack.cancel('Cancelled', io);
  throw new InterruptedError(message);
}

/** 1234567 → "1,234,567", rounded to a whole number first (-0.4 too: "0"). */
export function thousands(n: number): string {
  const whole = Math.round(n);
  return thousandsOf(whole === 0 ? 0 : whole);
}

/** 1_000_000 → "1M", 200_000 → "200k", 1234 → "1,234": how people write windows. */
export function shortTokens(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 1_000 === 0) return `${n / 1_000}k`;
  return thousands(n);
}
