/**
 * The words of a text as index terms, shared by the offline embedder (BM25), the extractive summary
 * and the goal excerpt of a masked tool result: lower-cased identifiers split at camelCase and
 * snake_case as well as kept whole, stop words and one- or two-digit numbers left out, a plural `s` cut.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have i if in into is it its of on or our so that the their then there these ' +
    'this to was we were what when which while will with you your not no do does did can could should would just also ' +
    'all any some me my he she they them us been being than too very here out up down over under again once only own ' +
    'same such both each few more most other about above after before below between through during off further how why where who whom'
  ).split(' '),
);

/**
 * How much of one turn's text is read: its start and its end. A 1 MB tool output says no more
 * about relevance than its first and last pages, and this keeps ranking linear in turns.
 */
const HEAD_CHARS = 24_000;
const TAIL_CHARS = 8_000;

function sample(text: string): string {
  return text.length <= HEAD_CHARS + TAIL_CHARS ? text : `${text.slice(0, HEAD_CHARS)}\n${text.slice(-TAIL_CHARS)}`;
}

const WORD = /[\p{L}\p{N}_]+/gu;
/** Cheap test for words worth splitting (snake_case, camelCase, ACRONYMWords), before the costly split. */
const COMPOUND = /_|[a-z0-9][A-Z]|[A-Z][A-Z][a-z]/;
const COMPOUND_SPLIT = /_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/u;

/** The words of a text, as index terms. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const match of sample(text).matchAll(WORD)) {
    const word = match[0];
    if (word.length > 64) continue;
    addTerm(out, word.toLowerCase());
    if (COMPOUND.test(word)) {
      const parts = word.split(COMPOUND_SPLIT);
      if (parts.length > 1) for (const part of parts) addTerm(out, part.toLowerCase());
    }
  }
  return out;
}

function isShortNumber(word: string): boolean {
  if (word.length >= 3) return false;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function addTerm(out: string[], word: string): void {
  if (word.length < 2 || STOP_WORDS.has(word) || isShortNumber(word)) return;
  out.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
}
