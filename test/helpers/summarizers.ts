import type { Summarizer, SummaryRequest } from '../../src/core/provider-contracts.js';

/** Seed 000's mocked FlashSummarizer: a fixed summary, and a record of what it was given. */
export class FixedSummarizer implements Summarizer {
  readonly name = 'fixed';
  readonly requests: SummaryRequest[] = [];
  summarize(request: SummaryRequest): Promise<string> {
    this.requests.push(request);
    return Promise.resolve('Summary of earlier work.');
  }
}
