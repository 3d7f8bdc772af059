import type { CliContext } from '../context.js';
import { thousands as n } from '../../core/numbers.js';

export interface BatchProgress {
  /** Sessions finished, transcripts found so far, whether discovery is over, tokens counted. */
  update(state: { readonly done: number; readonly found: number; readonly discovering: boolean; readonly tokens: number }): void;
  /** Clears the bar before something else is written to the terminal; the next tick redraws it. */
  clear(): void;
  stop(): void;
}

const SILENT: BatchProgress = { update() {}, clear() {}, stop() {} };
const BAR_WIDTH = 24;
const compact = (value: number): string =>
  value >= 1e9 ? `${(value / 1e9).toFixed(1)}G` : value >= 1e6 ? `${(value / 1e6).toFixed(1)}M` : value >= 1e3 ? `${(value / 1e3).toFixed(1)}k` : String(value);

/** The bar itself: `[██████░░░░] 1,234/2,000 sessions · 12.3M tokens` (`2,000+` while files are still being found). */
export function progressLine(state: { done: number; found: number; discovering: boolean; tokens: number }): string {
  const share = state.found === 0 ? 0 : state.done / state.found;
  const filled = Math.min(BAR_WIDTH, Math.floor(share * BAR_WIDTH));
  const bar = '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled);
  return `analyzing [${bar}] ${n(state.done)}/${n(state.found)}${state.discovering ? '+' : ''} sessions · ${compact(state.tokens)} tokens`;
}

/**
 * [SPEC §2] A progress bar on stderr for a batch, only when stderr is a TTY and not in CI (as the
 * spinner of src/cli/render/progress.ts): shown after 300 ms, redrawn every 100 ms, cleared at the end.
 */
export function startBatchProgress(ctx: CliContext): BatchProgress {
  if (ctx.stderr.isTTY !== true || ctx.env['CI']) return SILENT;
  let state = { done: 0, found: 0, discovering: true, tokens: 0 };
  let shown = false;
  const draw = (): void => {
    ctx.stderr.write(`\r\x1b[2K${progressLine(state)}`);
    shown = true;
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(() => {
    draw();
    timer = setInterval(draw, 100);
    timer.unref?.();
  }, 300);
  timer.unref?.();
  const clear = (): void => {
    if (shown) ctx.stderr.write('\r\x1b[2K');
    shown = false;
  };
  return {
    update(next) {
      state = { ...next };
    },
    clear,
    stop() {
      if (timer) {
        clearTimeout(timer);
        clearInterval(timer);
        timer = undefined;
      }
      clear();
    },
  };
}
