/**
 * Turns what a user typed into FTS5 MATCH expressions that cannot fail to parse: every term is
 * quoted (so `"`, `*`, `-`, `:`, `(`, `NEAR`, `AND` are just text), and a trailing `*` on a term
 * keeps its meaning as a prefix search. Returns undefined when there is nothing to search for.
 */
export function ftsQueries(query: string): { readonly allTerms: string; readonly anyTerm: string } | undefined {
  const terms: string[] = [];
  for (const word of query.normalize('NFC').split(/\s+/u)) {
    const prefix = /[^*]\*+$/u.test(word);
    const text = word.replace(/\*+$/u, '');
    // A term of only punctuation has no tokens for the tokenizer: it would match nothing.
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    terms.push(`"${text.replaceAll('"', '""')}"${prefix ? '*' : ''}`);
  }
  if (terms.length === 0) return undefined;
  return { allTerms: terms.join(' '), anyTerm: terms.join(' OR ') };
}
