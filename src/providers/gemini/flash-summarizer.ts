import type { TextTokenCounter } from '../../core/accounting.js';
import { ProviderError } from '../../core/errors.js';
import { SUMMARY_PREFIX } from '../../core/prune/edit.js';
import type { GenerateResult, LLMClient, Summarizer, SummaryRequest } from '../../core/provider-contracts.js';
import { addRedactionCounts, redactSecrets } from '../../core/redact.js';
import type { ConversationTurn } from '../../core/turn.js';
import { extractFacts, structuralFacts } from '../extractive-summarizer.js';
import { SUMMARY_SECTIONS } from '../summary-sections.js';
import { DEFAULT_SUMMARY_MODEL } from './pricing.js';
import { mergeInstruction, mergePrompt, renderTurn, summaryPrompt, systemInstruction } from './prompt.js';

/** [seed 000] The summarizer's settings; the seed's values are the defaults. */
export interface FlashSummarizerConfig {
  /** A Gemini model id (default `gemini-3.5-flash`). */
  readonly model?: string;
  /** Default 4096. */
  readonly maxOutputTokens?: number;
  /** Default 0.1. */
  readonly temperature?: number;
  /**
   * `low` (default): ask thinking models to think little, since thinking tokens count against
   * maxOutputTokens and a long think cuts the answer short; `model`: the model's own default.
   */
  readonly thinking?: 'low' | 'model';
  /** Removed text above this many tokens is summarized in parts, then merged (default 200,000). */
  readonly chunkTokens?: number;
  /** Counts tokens for chunking and the size check (default: about 4 characters a token). */
  readonly counter?: TextTokenCounter;
  /** Told `summarizing chunk k of n` / `merging n summaries`, e.g. for a spinner. */
  readonly onProgress?: (message: string) => void;
  /**
   * Mask secrets in the turns before they go to the client (default true), whatever client it is;
   * `GeminiClient` masks again on its own.
   */
  readonly redact?: boolean;
}

const DEFAULT_CHUNK_TOKENS = 200_000;

/** Names too common in code to show that a summary kept what mattered. */
const GENERIC_IDENTIFIERS = new Set([
  'className',
  'useState',
  'useEffect',
  'useRef',
  'useMemo',
  'useCallback',
  'onClick',
  'onChange',
  'onSubmit',
  'innerHTML',
  'textContent',
  'addEventListener',
  'querySelector',
  'getElementById',
  'toString',
  'valueOf',
  'forEach',
  'readFile',
  'readFileSync',
  'writeFile',
  'writeFileSync',
  'isArray',
  'parseInt',
  'setTimeout',
  'setInterval',
  'JSON',
  'console',
  'async_hooks',
  'node_modules',
  'package_json',
  'tool_use',
  'tool_result',
  'tool_call',
  'function_call',
  'function_call_output',
  'call_id',
  'exit_code',
  'stdout',
  'stderr',
  'README',
  'TODO',
  'FIXME',
  'NOTE',
  'self',
  'this',
  'init',
  'main',
  'test',
  'describe',
  'expect',
  'toBe',
  'toEqual',
]);
/** Of the input's most frequent identifiers, a summary must keep at least this share [issue 4]. */
const IDENTIFIER_SAMPLE = 12;
const MIN_IDENTIFIERS_KEPT = 0.5;

/** finishReason values that mean the answer was cut short or withheld. */
const TRUNCATED = new Set(['MAX_TOKENS']);
const ACCEPTED = new Set(['STOP', 'FINISH_REASON_UNSPECIFIED']);

/**
 * [seed 000] [TAS-105] Summaries from a Gemini Flash model. The prompt treats the transcript as
 * data, keeps identifiers verbatim and follows fixed sections; removed text larger than one
 * request's budget is summarized in parts and merged. It fails closed: an empty, blocked or
 * truncated answer, one larger than its input, or one that drops most of its input's identifiers
 * is a `ProviderError`, never a summary.
 */
export class FlashSummarizer implements Summarizer {
  readonly name: string;
  readonly model: string;
  private readonly maxOutputTokens: number;
  private readonly temperature: number;
  private readonly chunkTokens: number;
  private readonly count: (text: string) => number;
  /** Secrets masked in the turns this summarizer sent, by kind. */
  readonly redactions: Record<string, number> = {};

  constructor(
    private readonly client: LLMClient,
    private readonly config: FlashSummarizerConfig = {},
  ) {
    this.model = config.model ?? DEFAULT_SUMMARY_MODEL;
    this.name = `gemini:${this.model}`;
    this.maxOutputTokens = config.maxOutputTokens ?? 4096;
    this.temperature = config.temperature ?? 0.1;
    this.chunkTokens = config.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
    const counter = config.counter;
    this.count = counter ? (t) => counter.count(t) : (t) => Math.ceil(t.length / 4);
  }

  async summarize(request: SummaryRequest): Promise<string> {
    const sent = this.config.redact === false ? request.turns : request.turns.map((turn) => ({ ...turn, content: this.mask(turn.content) }));
    const rendered = sent.map(renderTurn);
    const inputText = rendered.join('\n\n');
    const activeTask = this.config.redact === false ? request.activeTask : this.mask(request.activeTask);
    request = { ...request, activeTask };
    const inputTokens = this.count(inputText);
    const words = Math.max(50, Math.floor(request.budgetTokens * 0.7));
    const archiveHint = request.archive
      ? `the removed turns are archived (prune ${request.archive.eventId}); they can be found again with devs-ctx recall "<words>" or devs-ctx recall --turn <id>`
      : undefined;
    const chunks = this.chunk(rendered);
    // [issue 15] What the structure says goes with the request; the answer must keep its identifiers.
    const facts = structuralFacts(sent);
    const factText = facts.text || undefined;

    let body: string;
    if (chunks.length === 1) {
      this.config.onProgress?.('summarizing with Gemini');
      body = await this.ask(
        systemInstruction(words),
        summaryPrompt({
          activeTask: request.activeTask,
          turnsText: inputText,
          ...(archiveHint ? { archiveHint } : {}),
          ...(factText ? { facts: factText } : {}),
        }),
        request.signal,
        'the summary',
      );
    } else {
      const parts: string[] = [];
      for (const [i, chunk] of chunks.entries()) {
        this.config.onProgress?.(`summarizing chunk ${i + 1} of ${chunks.length}`);
        parts.push(
          await this.ask(
            systemInstruction(words),
            summaryPrompt({
              activeTask: request.activeTask,
              turnsText: chunk,
              part: { index: i + 1, count: chunks.length },
              ...(archiveHint ? { archiveHint } : {}),
            }),
            request.signal,
            `the summary of chunk ${i + 1} of ${chunks.length}`,
          ),
        );
      }
      this.config.onProgress?.(`merging ${chunks.length} chunk summaries`);
      body = await this.ask(mergeInstruction(words), mergePrompt(request.activeTask, parts, factText), request.signal, 'the merged summary');
    }

    const how = request.archive ? 'removed and archived by devs-ctx' : 'removed by devs-ctx and not archived';
    const summary = `${SUMMARY_PREFIX}\n${request.turns.length} earlier turns were ${how}; summary by ${this.model}:\n\n${body.trim()}`;
    const summaryTokens = this.count(summary);
    if (summaryTokens >= inputTokens) {
      throw new ProviderError(
        `the ${this.name} answer (${summaryTokens} tokens) is larger than the ${inputTokens} tokens it summarizes; nothing was written`,
        this.name,
        'prune more at once (a lower --target), or pass --fallback extractive',
      );
    }
    this.checkIdentifiers(rendered, body);
    this.checkGiven(facts.identifiers, body);
    this.checkSections(body);
    return summary;
  }

  /** Consecutive turns, each part under `chunkTokens` (a single larger turn is a part of its own). */
  private chunk(rendered: readonly string[]): string[] {
    const chunks: string[] = [];
    let current: string[] = [];
    let tokens = 0;
    for (const text of rendered) {
      const t = this.count(text);
      if (current.length > 0 && tokens + t > this.chunkTokens) {
        chunks.push(current.join('\n\n'));
        current = [];
        tokens = 0;
      }
      current.push(text);
      tokens += t;
    }
    if (current.length > 0) chunks.push(current.join('\n\n'));
    return chunks;
  }

  private async ask(system: string, prompt: string, signal: AbortSignal | undefined, what: string): Promise<string> {
    const result = await this.client.generate({
      model: this.model,
      systemInstruction: system,
      prompt,
      maxOutputTokens: this.maxOutputTokens,
      temperature: this.temperature,
      thinking: this.config.thinking ?? 'low',
      ...(signal ? { signal } : {}),
    });
    return acceptAnswer(result, this.name, what);
  }

  private mask(text: string): string {
    const { text: masked, counts } = redactSecrets(text);
    addRedactionCounts(this.redactions, counts);
    return masked;
  }

  /** [issue 15] The identifiers the prompt listed (the most repeated ones): at least half must be kept. */
  private checkGiven(given: readonly string[], body: string): void {
    const sample = given.filter((id) => !id.includes('REDACTED') && !GENERIC_IDENTIFIERS.has(id)).slice(0, IDENTIFIER_SAMPLE);
    if (sample.length < 4) return;
    const missing = sample.filter((id) => !body.includes(id));
    if ((sample.length - missing.length) / sample.length < MIN_IDENTIFIERS_KEPT) {
      throw new ProviderError(
        `the ${this.name} summary dropped most identifiers it was given (kept ${sample.length - missing.length} of ${sample.length}; missing e.g. ${missing.slice(0, 5).join(', ')}); nothing was written`,
        this.name,
        'pass --fallback extractive to summarize offline instead, or try another --model',
      );
    }
  }

  /** [issue 15] Every section asked for is there, as a `## ` heading. */
  private checkSections(body: string): void {
    const headings = new Set([...body.matchAll(/^#{1,3}\s*(.+?)\s*$/gm)].map((m) => (m[1] ?? '').toLowerCase()));
    const missing = SUMMARY_SECTIONS.filter((s) => !headings.has(s.toLowerCase()));
    if (missing.length > 0) {
      throw new ProviderError(
        `the ${this.name} summary lacks the section${missing.length > 1 ? 's' : ''} ${missing.map((s) => `"${s}"`).join(', ')}; nothing was written`,
        this.name,
        'pass --fallback extractive to summarize offline instead, or try another --model',
      );
    }
  }

  /**
   * A summary that drops most of the input's most frequent identifiers is not a summary of it. The
   * sample comes from the text actually sent (head and tail of long turns, secrets masked): the
   * most frequent file paths, then the most frequent identifiers that are not the everyday names of
   * a language or framework (`className`, `useState`).
   */
  private checkIdentifiers(rendered: readonly string[], body: string): void {
    const facts = extractFacts(
      rendered.map((content, i) => ({ id: String(i), role: 'assistant', type: 'message', content }) as ConversationTurn),
      ['files', 'identifiers'],
    );
    const files = facts.files.slice(0, IDENTIFIER_SAMPLE / 2);
    const names = facts.identifiers.filter((id) => !GENERIC_IDENTIFIERS.has(id) && !/^(?:[A-Z_]+|REDACTED.*)$/.test(id));
    const sample = [...files, ...names].filter((id) => !id.includes('REDACTED')).slice(0, IDENTIFIER_SAMPLE);
    if (sample.length < 4) return;
    const kept = sample.filter((id) => body.includes(id));
    if (kept.length / sample.length < MIN_IDENTIFIERS_KEPT) {
      const missing = sample.filter((id) => !body.includes(id)).slice(0, 5);
      throw new ProviderError(
        `the ${this.name} summary dropped most identifiers of its input (kept ${kept.length} of the ${sample.length} most frequent; missing e.g. ${missing.join(', ')}); nothing was written`,
        this.name,
        'pass --fallback extractive to summarize offline instead, or try another --model',
      );
    }
  }
}

/**
 * The answer's text, or a ProviderError saying exactly what was wrong with it: a blocked prompt, a
 * truncated or withheld answer (any finishReason but STOP), or no text.
 */
export function acceptAnswer(result: GenerateResult, provider: string, what: string): string {
  const hint = 'pass --fallback extractive to work offline instead, or try another --model';
  if (result.blockReason) {
    throw new ProviderError(`Gemini blocked the request for ${what} (blockReason ${result.blockReason}); nothing was written`, provider, hint);
  }
  const reason = result.finishReason;
  if (reason && TRUNCATED.has(reason)) {
    throw new ProviderError(`the ${provider} answer for ${what} was truncated (finishReason ${reason}); nothing was written`, provider, hint);
  }
  if (reason && !ACCEPTED.has(reason)) {
    throw new ProviderError(`the ${provider} answer for ${what} was blocked or cut short (finishReason ${reason}); nothing was written`, provider, hint);
  }
  if (result.text.trim().length === 0) {
    throw new ProviderError(`the ${provider} answer for ${what} was empty; nothing was written`, provider, hint);
  }
  return result.text;
}
