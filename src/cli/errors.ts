import { DevsCtxError, ExitCode } from '../core/errors.js';
import type { ExitCodeValue } from '../core/errors.js';
import type { CliContext } from './context.js';
import { printable } from '../core/text-cut.js';

const ERROR_SCHEMA_VERSION = 1;

/** The one boundary where errors become exit codes and messages (JSON in --json mode). */
/** `json`: the error as a JSON document on stdout; `ndjson`: as a `--ndjson` line, with its `type` (`error`) as every line there has. */
export function reportError(ctx: CliContext, error: unknown, json: boolean, ndjson = false): ExitCodeValue {
  const known = error instanceof DevsCtxError;
  const exitCode = known ? error.exitCode : ExitCode.internal;
  const code = known ? error.code : 'internal';
  const message = error instanceof Error ? error.message : String(error);
  const hint = known ? error.hint : 'this is a bug in devs-ctx; please report it with the command you ran';
  if (json) {
    const body = { code, exitCode, message, ...(hint ? { hint } : {}) };
    ctx.stdout.write(
      `${JSON.stringify(ndjson ? { schemaVersion: ERROR_SCHEMA_VERSION, type: 'error', error: body } : { schemaVersion: ERROR_SCHEMA_VERSION, error: body })}\n`,
    );
  } else {
    ctx.stderr.write(`devs-ctx: ${printable(message, { lines: true })}\n`);
    if (hint) ctx.stderr.write(`  hint: ${printable(hint, { lines: true })}\n`);
    if (!known && error instanceof Error && error.stack && ctx.env['DEVS_CTX_DEBUG']) ctx.stderr.write(`${error.stack}\n`);
  }
  return exitCode;
}
