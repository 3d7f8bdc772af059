import type { ReadIssue } from '../../core/issues.js';
import { thousands as n } from '../../core/numbers.js';
import { clipLine } from '../../core/text-cut.js';

/** Read issues a one-line report names (all of them in --json). */
const MAX_ISSUES = 3;

/**
 * The lines a transcript's reader skipped or found odd, as one line of a command's report (prune,
 * refresh): the first few with their line numbers, and how many more. Undefined when there are none.
 */
export function issuesLine(issues: readonly ReadIssue[]): string | undefined {
  if (issues.length === 0) return undefined;
  const shown = issues.slice(0, MAX_ISSUES).map((i) => `${i.line > 0 ? `line ${i.line}` : 'file'}: ${clipLine(i.reason, 90)}`);
  const more = issues.length > MAX_ISSUES ? `; and ${n(issues.length - MAX_ISSUES)} more (--json lists them)` : '';
  return `  skipped or odd lines (${n(issues.length)}): ${shown.join('; ')}${more}`;
}
