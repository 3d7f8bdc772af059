/**
 * A recall hit's excerpt, cut from a bounded window around the first match of the query's terms,
 * so its cost does not grow with the turn (FTS5 `snippet()` is quadratic on a multi-megabyte
 * turn). Terms match as the full-text index does: case-insensitive, whole tokens, a trailing `*`
 * for a prefix, punctuation inside a term matching any run of separators.
 */

/** Characters kept before and after the first match. */
export const EXCERPT_BEFORE = 80;
export const EXCERPT_AFTER = 160;
/** A prefix term matches at most this many more characters (a 50 MB token stays a short mark). */
const PREFIX_TAIL = 64;

export function buildExcerpt(content: string, query: string, marks: { readonly open: string; readonly close: string }): string {
  const pattern = termPattern(query);
  let start = 0;
  if (pattern) {
    pattern.lastIndex = 0;
    const first = pattern.exec(content);
    if (first) start = Math.max(0, first.index - EXCERPT_BEFORE);
  }
  let end = Math.min(content.length, start + EXCERPT_BEFORE + EXCERPT_AFTER);
  // Never cut a surrogate pair in two.
  if (start > 0 && isLowSurrogate(content.charCodeAt(start))) start--;
  if (end < content.length && isLowSurrogate(content.charCodeAt(end))) end++;
  const window = content.slice(start, end);
  const marked = pattern ? window.replace(pattern, (match) => `${marks.open}${match}${marks.close}`) : window;
  return `${start > 0 ? '…' : ''}${marked}${end < content.length ? '…' : ''}`;
}

/** The last query's pattern: a recall builds an excerpt per hit, all for one query. */
let lastPattern: { readonly query: string; readonly pattern: RegExp | undefined } | undefined;

/**
 * One global, case-insensitive regular expression for any of the query's terms; undefined when none.
 * A term said again is in it once (8,000 times one word made a pattern that took a second per hit).
 */
export function termPattern(query: string): RegExp | undefined {
  if (lastPattern?.query === query) return lastPattern.pattern;
  const pattern = newTermPattern(query);
  lastPattern = { query, pattern };
  return pattern;
}

function newTermPattern(query: string): RegExp | undefined {
  const alternatives = new Map<string, string>();
  for (const word of query.normalize('NFC').split(/\s+/u)) {
    const prefix = /[^*]\*+$/u.test(word);
    const tokens = word
      .replace(/\*+$/u, '')
      .split(/[^\p{L}\p{N}]+/u)
      .filter((t) => t !== '');
    if (tokens.length === 0) continue;
    const body = tokens.map(escapeRegExp).join('[^\\p{L}\\p{N}]+');
    const alternative = `${body}${prefix ? `[\\p{L}\\p{N}]{0,${PREFIX_TAIL}}` : '(?![\\p{L}\\p{N}])'}`;
    // The pattern ignores case: `Error` after `error` is the same alternative.
    const key = alternative.toLowerCase();
    if (!alternatives.has(key)) alternatives.set(key, alternative);
  }
  if (alternatives.size === 0) return undefined;
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${[...alternatives.values()].join('|')})`, 'giu');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
