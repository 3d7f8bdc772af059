import { isRecord, sameKind, type JsonObject } from '../shared/json.js';

/**
 * A devs line without its text, for a batch row read on from where the file ended (FormatAdapter
 * `skeleton`). A line is one turn (or one SAOP envelope) on its own, so reading skeletons gives the
 * same turns, ids, roles, types, times and issues as the lines; only the text is missing, and a
 * resumed row has the counts of the old turns. A turn keeps every field but its content, which is
 * empty (a string still: the schema holds as it did); an envelope keeps its fields with its thought's
 * reasoning empty and its action and observation null (the reader only joins them into the text).
 * Fields the format does not know are kept as they are: the reader copies them into the turn. A
 * line that is no object keeps only its JSON kind, all the reader's message says of it.
 */
export function devsSkeleton(value: unknown): unknown {
  if (!isRecord(value)) return sameKind(value);
  const out: JsonObject = { ...value };
  if (typeof value['content'] === 'string') out['content'] = '';
  const thought = value['thought'];
  if (isRecord(thought) && typeof thought['reasoning'] === 'string') {
    out['thought'] = { ...thought, reasoning: '' };
    if ('action' in value) out['action'] = null;
    if ('observation' in value) out['observation'] = null;
  }
  return out;
}
