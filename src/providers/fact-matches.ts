/**
 * The file paths and identifiers a text names, as the offline summary collects them: every match of
 * `FILE_PATH` and of `IDENTIFIER`, in order. Neither expression is run over every character of the
 * text, which cost most of the summary's time on a large prune (a path's expression backtracks
 * through every word): only the runs of characters that can hold a match are tried. The results
 * are exactly those of `text.matchAll` (test/fact-matches.test.ts compares them on the fixtures and
 * the real transcripts).
 */

/** A path (`src/a.ts`, `./x/y.json`, `~/p/q.md`) or a file name with a known extension (`README.md`). */
export const FILE_PATH =
  /(?:~|\.{1,2})?(?:\/?[\w@.+-]+\/)+[\w@.+-]+\.[A-Za-z0-9]{1,8}\b|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sql|yaml|yml|toml|sh|css|scss|html|vue|svelte|lock)\b/g;
/** FILE_PATH's own copy for `filePathsIn`, run with `exec` (matchAll makes a new expression each time, once per run of a text). */
const RUN_PATHS = new RegExp(FILE_PATH);
/** camelCase, PascalCase, snake_case and SCREAMING_CASE names. */
export const IDENTIFIER = /\b(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g;
const WHOLE_IDENTIFIER = new RegExp(`^(?:${IDENTIFIER.source.slice(2, -2)})$`);
/** A whole run of word characters (`\w`: ASCII letters, digits, `_`) with a capital or a `_` in it (`\b`: tried only where a run starts). */
const MARKED_RUN = /\b[a-z0-9]*[A-Z_]\w*/g;

/** Per ASCII code: 1 for a character a path can hold (`[\w@.+~/-]`), else 0. */
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const word = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  CLASS[c] = word || '@.+~/-'.includes(String.fromCharCode(c)) ? 1 : 0;
}

/**
 * `[...text.matchAll(FILE_PATH)].map((m) => m[0])`. A match holds only characters a path can hold,
 * and every one has a `.`: so only the runs of such characters that hold a `.` are matched, each on
 * its own. The same matches: the characters around a run are not word characters, so `\b` at its
 * edges reads as it does at the ends of a string.
 */
export function filePathsIn(text: string): string[] {
  const out: string[] = [];
  for (let dot = text.indexOf('.'); dot >= 0; ) {
    let start = dot;
    while (start > 0 && inPath(text.charCodeAt(start - 1))) start--;
    let end = dot + 1;
    while (end < text.length && inPath(text.charCodeAt(end))) end++;
    if (hasExtension(text, dot, end)) {
      const run = text.slice(start, end);
      RUN_PATHS.lastIndex = 0;
      for (let match = RUN_PATHS.exec(run); match !== null; match = RUN_PATHS.exec(run)) out.push(match[0]);
    }
    dot = text.indexOf('.', end);
  }
  return out;
}

/**
 * `[...text.matchAll(IDENTIFIER)].map((m) => m[0])`. A match lies between two word boundaries and
 * holds only word characters, so it is a whole run of them; and each kind of name has a capital or
 * a `_`. So only such runs are tried, whole: `MARKED_RUN` finds them (where a run starts, to its
 * end: a run without a capital or `_` holds no match anywhere).
 */
export function identifiersIn(text: string): string[] {
  const out: string[] = [];
  MARKED_RUN.lastIndex = 0;
  for (let run = MARKED_RUN.exec(text); run !== null; run = MARKED_RUN.exec(text)) if (WHOLE_IDENTIFIER.test(run[0])) out.push(run[0]);
  return out;
}

/**
 * Whether a `.` from `dot` (the run's first) up to `end` has a letter or digit after it: every match
 * ends in one (`\.[A-Za-z0-9]{1,8}` or `\.ts`), so a run without one (a sentence's last word and its
 * full stop) holds none, and the expression is not run on it.
 */
function hasExtension(text: string, dot: number, end: number): boolean {
  for (let i = dot; i < end - 1; i++) {
    if (text.charCodeAt(i) !== 46) continue;
    const c = text.charCodeAt(i + 1);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)) return true;
  }
  return false;
}

function inPath(c: number): boolean {
  return c < 128 && (CLASS[c] as number) > 0;
}
