import { config, encoding, flag, json, noCache } from '../options.js';
import type { OptionsOf } from '../options.js';

export const auditFlags = [
  json('print one JSON document (with schemaVersion) on stdout: every compaction, every kept and lost identifier'),
  flag('--lost <n>', 'lost identifiers listed per compaction in the text report (default 15)', (z) =>
    z.string().regex(/^\d+$/, '--lost: expected a whole number').transform(Number).optional(),
  ),
  encoding(),
  config(),
  noCache('the token-count cache'),
] as const;
export type AuditOptions = OptionsOf<typeof auditFlags>;
