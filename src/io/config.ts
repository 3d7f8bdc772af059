import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CONFIG_FILE_NAME, parseConfigFile } from '../core/config.js';
import type { ConfigFile } from '../core/config.js';
import { InputError, UsageError } from '../core/errors.js';

/** Walks up from `cwd` to the filesystem root looking for `devs-ctx.config.json`. */
export function findConfigFile(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Loads the named config, or the nearest one found by walking up; none is fine. */
export function loadConfig(options: { explicitPath?: string; cwd: string }): { path: string; config: ConfigFile } | undefined {
  const path = options.explicitPath ? resolve(options.cwd, options.explicitPath) : findConfigFile(options.cwd);
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read config ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      options.explicitPath ? 'check the --config path' : `remove or fix ${path}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      `fix ${path} or pass --config to use another file`);
  }
  return { path, config: parseConfigFile(path, value) };
}
