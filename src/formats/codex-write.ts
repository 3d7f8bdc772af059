import type { FormatWriter } from './types.js';

/** Placeholder: the codex writer is being written. */
export const codexWriter: FormatWriter = {
  name: 'codex',
  write() {
    throw new Error('the codex writer is not implemented yet');
  },
  validate() {
    return ['the codex validator is not implemented yet'];
  },
};
