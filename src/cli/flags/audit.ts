import { config, encoding, flag, json, noCache } from '../options.js';
import type { OptionsOf } from '../options.js';

export const auditFlags = [
  json('print one JSON document (with schemaVersion) on stdout: every compaction, every kept and lost identifier'),
  flag('--lost <n>', 'lost identifiers listed per compaction in the text report (default 15)', (z) =>
    z.optional(z.pipe(z.string().check(z.regex(/^\d+$/, '--lost: expected a whole number')), z.transform(Number))),
  ),
  encoding(),
  config(),
  noCache('the token-count cache'),
] as const;
export type AuditOptions = OptionsOf<typeof auditFlags>;
