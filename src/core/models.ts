import { createRequire } from 'node:module';
import type { AgentModelSetting } from './config.js';
import type { ModelRecord } from './transcript.js';

/**
 * Which window a session runs in. Records win over catalogs: a catalog gives a model's maximum,
 * not what the agent runs it with (catalogs list claude-opus-4-6 at 1M, yet Claude Code runs it
 * in a 200k window unless the 1M mode is on, which its records then show).
 */

/** Claude Code's window for Claude models; the 1M window is an opt-in mode. */
const CLAUDE_CODE_DEFAULT_WINDOW = 200_000;

export interface ModelWindow {
  readonly model: string | null;
  readonly window: number;
  /** `recorded`: the agent's own records; `model`: the agent's default for the model, or the catalog. */
  readonly source: 'recorded' | 'model';
  /** In words, for the report. */
  readonly how: string;
}

const catalogCache = new Map<string, number | undefined>();

type CalcPrice = typeof import('@pydantic/genai-prices').calcPrice;
let calcPriceMemo: CalcPrice | undefined;
/**
 * The catalog (about 0.5 MB of model data) is loaded on first use, not with the module: most runs
 * never need it (Claude Code sessions, recorded windows, a cached report), and loading it with
 * every start cost tens of milliseconds. Its CommonJS build, so the lookup stays synchronous.
 */
function calcPrice(...args: Parameters<CalcPrice>): ReturnType<CalcPrice> {
  calcPriceMemo ??= (createRequire(import.meta.url)('@pydantic/genai-prices') as { calcPrice: CalcPrice }).calcPrice;
  return calcPriceMemo(...args);
}

/**
 * A model's context window from the `@pydantic/genai-prices` catalog (bundled data, no network);
 * undefined when the catalog does not know the model or gives no window.
 */
export function catalogWindow(modelId: string): number | undefined {
  if (catalogCache.has(modelId)) return catalogCache.get(modelId);
  // A LiteLLM-style id (OpenHands: `anthropic/claude-…`, `openrouter/openai/gpt-4o`) names its provider first.
  const tail = modelId.slice(modelId.lastIndexOf('/') + 1);
  const window = lookUp(modelId) ?? (tail !== modelId && tail !== '' ? lookUp(tail) : undefined);
  catalogCache.set(modelId, window);
  return window;
}

function lookUp(modelId: string): number | undefined {
  try {
    const value = calcPrice({ input_tokens: 0, output_tokens: 0 }, modelId)?.model.context_window;
    return typeof value === 'number' && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Pure: the transcript's model with the user's in place: `--agent-model` replaces the model the
 * file names (the flag is explicit); config `agentModel` only fills in when the file names none.
 * A window the agent's records show stays: it is what the agent ran with.
 */
export function withAgentModel(record: ModelRecord | undefined, given: AgentModelSetting | undefined): ModelRecord | undefined {
  if (!given || (!given.overrides && record?.id !== undefined)) return record;
  return { ...record, id: given.id, idFrom: given.from };
}

/** Pure: the window a transcript's model runs in; undefined when nothing is known (the caller keeps its defaults). */
export function modelWindow(record: ModelRecord | undefined): ModelWindow | undefined {
  if (!record) return undefined;
  const model = record.id ?? null;
  if (record.recordedWindow !== undefined && record.recordedWindow > 0) {
    return { model, window: record.recordedWindow, source: 'recorded', how: record.recordedWindowHow ?? 'recorded in the file' };
  }
  if (model === null) return undefined;
  const named = record.idFrom !== undefined ? `${model} (${record.idFrom})` : model;
  if (record.agent === 'claude-code' && /^claude/i.test(model)) {
    return { model, window: CLAUDE_CODE_DEFAULT_WINDOW, source: 'model', how: `${named} in Claude Code (200k unless its records show the 1M mode)` };
  }
  const window = catalogWindow(model);
  return window === undefined ? undefined : { model, window, source: 'model', how: `${named} in the @pydantic/genai-prices catalog` };
}
