import { object } from 'zod/mini';
import type { ZodMiniObject } from 'zod/mini';
import { UsageError } from '../core/errors.js';
import { flagZod } from './flag-zod.js';
import type { Flag, OptionsOf, Shape } from './options.js';

/** The zod schema of these flags' values (built when a command runs, so --help never loads zod). */
export function schemaOf<const T extends readonly Flag[]>(flags: T): ZodMiniObject<Shape<T>> {
  return object(Object.fromEntries(flags.map((f) => [f.key, f.schema(flagZod)]))) as ZodMiniObject<Shape<T>>;
}

/** Validates commander's raw options; every bad flag is reported, in one usage error (exit 2). */
export function parseOptions<const T extends readonly Flag[]>(flags: T, raw: Record<string, unknown>, command: string): OptionsOf<T> {
  const parsed = schemaOf(flags).safeParse(raw);
  if (parsed.success) return parsed.data;
  const messages = parsed.error.issues.map((issue) => {
    const key = issue.path[0];
    // zod's own messages do not name the flag; ours do.
    const name = typeof key === 'string' ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : undefined;
    return name !== undefined && !issue.message.includes('--') ? `${name}: ${issue.message}` : issue.message;
  });
  const message = messages.length === 1 ? (messages[0] as string) : `${messages.length} invalid options: ${messages.join('; ')}`;
  throw new UsageError(message, `see devs-ctx ${command} --help`);
}
