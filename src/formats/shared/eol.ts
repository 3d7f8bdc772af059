import type { ParsedDocument } from '../../io/jsonl.js';

/** The line terminator most of the input's lines use (`\n` when there is no terminator at all). */
export function dominantEol(doc: ParsedDocument): '\n' | '\r\n' {
  let crlf = 0;
  let lf = 0;
  for (const record of doc.records) {
    if (record.eol === '\r\n') crlf++;
    else if (record.eol === '\n') lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}
