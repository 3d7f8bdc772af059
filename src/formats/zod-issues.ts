import type { z } from 'zod';

/** One short sentence from zod issues: which key is wrong and what was allowed. */
export function describeZodIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const key = issue.path.length > 0 ? issue.path.join('.') : '(the line)';
      if (issue.code === 'invalid_value' && 'values' in issue) {
        return `${key} must be one of ${issue.values.map(String).join('|')}`;
      }
      if (issue.code === 'invalid_type') {
        return issue.message.includes('received undefined') ? `missing key ${key}` : `${key}: ${issue.message}`;
      }
      return `${key}: ${issue.message}`;
    })
    .join('; ');
}
