import { UsageError } from '../errors.js';
import type { ConversationTurn } from '../turn.js';

/** The TAS and PRD texts a refresh puts in front of the agent again [3_MCP-TAS-089]. */
export interface ProjectDocuments {
  readonly tas?: string | undefined;
  readonly prd?: string | undefined;
}

/** The text of the transcript's `tas` and `prd` turns, each type's turns in order (several are joined). */
export function pinnedDocuments(turns: readonly ConversationTurn[]): ProjectDocuments {
  const of = (type: 'tas' | 'prd'): string | undefined => {
    const texts = turns.filter((t) => t.type === type && t.content.trim()).map((t) => t.content.trim());
    return texts.length > 0 ? texts.join('\n\n') : undefined;
  };
  return { tas: of('tas'), prd: of('prd') };
}

/** Both summaries from documents; one missing is said so, both missing is an error (nothing to refresh with). */
export function summariesOf(documents: ProjectDocuments, where: string): { tasSummary: string; prdSummary: string } {
  const { tas, prd } = documents;
  if (tas === undefined && prd === undefined) {
    throw new UsageError(`${where} has no TAS or PRD to refresh the agent with`, 'add tas/prd turns to the transcript, or pass --tas FILE and --prd FILE');
  }
  return { tasSummary: tas ?? `(no TAS in ${where})`, prdSummary: prd ?? `(no PRD in ${where})` };
}
