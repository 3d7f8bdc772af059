import { readFile } from 'node:fs/promises';
import type { SummaryProvider } from '../core/refresh/context-refresher.js';
import { summariesOf } from '../core/refresh/project-documents.js';
import type { ProjectDocuments } from '../core/refresh/project-documents.js';

/**
 * TAS and PRD read from files at each refresh (so an edited TAS is picked up); a document without a
 * file comes from `fallback` (e.g. the transcript's pinned turns) when one is given.
 */
export class FileSummaryProvider implements SummaryProvider {
  constructor(private readonly options: { readonly tasPath?: string; readonly prdPath?: string; readonly fallback?: ProjectDocuments }) {}

  async getSummary(): Promise<{ tasSummary: string; prdSummary: string }> {
    const read = async (path: string | undefined): Promise<string | undefined> => (path === undefined ? undefined : (await readFile(path, 'utf8')).trim());
    const [tas, prd] = await Promise.all([read(this.options.tasPath), read(this.options.prdPath)]);
    const names = [this.options.tasPath, this.options.prdPath].filter((p) => p !== undefined);
    return summariesOf({ tas: tas ?? this.options.fallback?.tas, prd: prd ?? this.options.fallback?.prd }, names.join(' and ') || 'the given files');
  }
}
