import type { core } from 'zod/mini';
import { isRecord } from './json.js';

/**
 * One short sentence from zod issues: which key is wrong and what was allowed. `input` is the value
 * that was checked, so a key that is absent is called missing (zod words it as a wrong value).
 */
export function describeZodIssues(issues: readonly core.$ZodIssue[], input: unknown): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const key = issue.path.length > 0 ? issue.path.join('.') : '(the line)';
      const top = issue.path[0];
      const missing = issue.path.length === 1 && isRecord(input) && typeof top === 'string' && !(top in input);
      const allowed = issue.code === 'invalid_value' && 'values' in issue ? issue.values.map(String).join('|') : undefined;
      if (missing) return `missing key ${key}${allowed ? ` (one of ${allowed})` : ''}`;
      if (allowed) return `${key} must be one of ${allowed}`;
      return `${key}: ${issue.message}`;
    })
    .join('; ');
}
