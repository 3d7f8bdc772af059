/** One search term as typed: its text, and whether a trailing `*` made it a prefix. */
interface QueryTerm {
  readonly text: string;
  readonly prefix: boolean;
}

/** The words of a query, every store's search reads them the same way. */
function queryTerms(query: string): QueryTerm[] {
  const terms: QueryTerm[] = [];
  // A term said again (in any case, with or without accents: the index folds both) is searched once:
  // it adds nothing to the query but work (8,000 times one word took a minute).
  const seen = new Set<string>();
  for (const word of query.normalize('NFC').split(/\s+/u)) {
    const prefix = /[^*]\*+$/u.test(word);
    const text = word.replace(/\*+$/u, '');
    // A term of only punctuation has no tokens for the tokenizer: it would match nothing.
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    const key = `${prefix ? '*' : ''}${fold(text)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push({ text, prefix });
  }
  return terms;
}

/**
 * Turns what a user typed into FTS5 MATCH expressions that cannot fail to parse: every term is
 * quoted (so `"`, `*`, `-`, `:`, `(`, `NEAR`, `AND` are just text), and a trailing `*` on a term
 * keeps its meaning as a prefix search. Returns undefined when there is nothing to search for.
 */
export function ftsQueries(query: string): { readonly allTerms: string; readonly anyTerm: string } | undefined {
  const terms = queryTerms(query).map(({ text, prefix }) => `"${text.replaceAll('"', '""')}"${prefix ? '*' : ''}`);
  if (terms.length === 0) return undefined;
  return { allTerms: terms.join(' '), anyTerm: terms.join(' OR ') };
}

/**
 * The same query as PostgreSQL tsquery texts (for `to_tsquery('simple', …)`), read by the same
 * rules: a term is its letter-and-digit words in a row (a phrase, like FTS5 reads `"a-b"`), a
 * trailing `*` makes its last word a prefix. Only letters and digits reach the tsquery, so no
 * input can be tsquery syntax. The indexed text is split the same way (see postgres.ts).
 */
/** A word as the PostgreSQL index holds it: lower-case, accents (combining marks) taken off. */
function fold(word: string): string {
  return word
    .normalize('NFD')
    .replace(/[\u0300-\u036f]+/gu, '')
    .toLowerCase();
}

/** The letter-and-digit words of a term, folded (see fold). */
function termWords(text: string): string[] {
  return (fold(text).match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w !== '');
}

export function tsQueries(query: string): { readonly allTerms: string; readonly anyTerm: string } | undefined {
  const terms = queryTerms(query).map(({ text, prefix }) => {
    const words = termWords(text);
    return words.map((word, i) => `'${word}'${prefix && i === words.length - 1 ? ':*' : ''}`).join(' <-> ');
  });
  if (terms.length === 0) return undefined;
  const all = terms.map((t) => `(${t})`);
  return { allTerms: all.join(' & '), anyTerm: all.join(' | ') };
}

/** The words a query looks for, lower-cased, and the ones a prefix ends (for snippets). */
function queryWords(query: string): { readonly exact: ReadonlySet<string>; readonly prefixes: readonly string[] } {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const { text, prefix } of queryTerms(query)) {
    const words = termWords(text);
    for (const [i, word] of words.entries()) {
      if (prefix && i === words.length - 1) prefixes.push(word);
      else exact.add(word);
    }
  }
  return { exact, prefixes };
}

/**
 * An excerpt of `text` of at most `size` words around the first matched word, matched words between
 * `open` and `close`, `…` where text was cut: what FTS5's snippet() gives, for a store without it.
 * Reads at most `maxChars` of the text, so a huge turn costs no more than a small one.
 */
export function snippetOf(text: string, query: string, open: string, close: string, size = 16, maxChars = 20_000): string {
  const { exact, prefixes } = queryWords(query);
  const head = text.slice(0, maxChars);
  const words = [...head.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => ({ start: m.index, end: m.index + m[0].length, word: fold(m[0]) }));
  const hit = (word: string): boolean => exact.has(word) || prefixes.some((p) => word.startsWith(p));
  if (words.length === 0) return '';
  const first = Math.max(
    0,
    words.findIndex((w) => hit(w.word)),
  );
  const from = Math.max(0, Math.min(first - 2, words.length - size));
  const to = Math.min(words.length, from + size);
  let out = from > 0 ? '…' : '';
  let at = from > 0 ? (words[from]?.start ?? 0) : 0;
  for (const w of words.slice(from, to)) {
    out += head.slice(at, w.start);
    const original = head.slice(w.start, w.end);
    out += hit(w.word) ? `${open}${original}${close}` : original;
    at = w.end;
  }
  const last = words[to - 1];
  if (to < words.length || head.length < text.length) out += '…';
  else if (last) out += head.slice(last.end);
  return out;
}
