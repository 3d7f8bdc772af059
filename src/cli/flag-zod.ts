import * as z from 'zod/mini';
import '../core/zod-english.js';

/**
 * The part of zod/mini that flag schemas (src/cli/options.ts) are built from, handed to each flag's
 * schema when a command runs. Named one by one: esbuild then bundles only these, where the namespace
 * passed as a value would bundle all of zod, every locale included.
 */
export const flagZod = {
  array: z.array,
  boolean: z.boolean,
  coerce: z.coerce,
  enum: z.enum,
  lte: z.lte,
  minLength: z.minLength,
  NEVER: z.NEVER,
  optional: z.optional,
  pipe: z.pipe,
  positive: z.positive,
  refine: z.refine,
  regex: z.regex,
  string: z.string,
  transform: z.transform,
  trim: z.trim,
  union: z.union,
};

/** What a flag's schema is built from. */
export type FlagZod = typeof flagZod;
