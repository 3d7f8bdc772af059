import type { CliContext } from '../context.js';

export interface Progress {
  update(message: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SILENT: Progress = { update() {}, stop() {} };

/** [SPEC §2] A spinner on stderr, only when stderr is a TTY; a no-op otherwise (pipes, CI, tests). */
export function startProgress(ctx: CliContext, label: string): Progress {
  if (ctx.stderr.isTTY !== true || ctx.env['CI']) return SILENT;
  let frame = 0;
  let message = label;
  const draw = (): void => {
    ctx.stderr.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${message}`);
  };
  // Only show it when the work takes long enough to notice.
  let timer: NodeJS.Timeout | undefined = setTimeout(() => {
    draw();
    timer = setInterval(draw, 80);
  }, 300);
  timer.unref?.();
  return {
    update(next) {
      message = `${label}: ${next}`;
    },
    stop() {
      if (timer) {
        clearTimeout(timer);
        clearInterval(timer);
        timer = undefined;
        if (frame > 0) ctx.stderr.write('\r\x1b[2K');
      }
    },
  };
}
